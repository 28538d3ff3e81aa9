"""The checks of ./maint/do docs --check beyond "the page equals its rendering": the claims (on the measured GPU and
on a synthetic second one), links and anchors, the project's paths, the structure, and the reader's pages."""
import pathlib
import re
import tempfile

from scripts.stages import ladder_stages, role
from . import synthetic_gpu
from .base import (DocsError, f, LADDER_VIEWS, LAYOUTS, meta, NOT_MEASURED, REQUIRED, results_in, ROOT, rows,
                   state, TEMPLATES)
from .compare import SAID
from .render import pages, PLACEHOLDER, render

# Words that compare two measurements. A template may not type them: they come from compare_rows(), speedup(), which()
# and the other helpers, so they change when the numbers do. ALLOWED lists the phrases that use such a word to
# describe, not to claim, each with its reason.
COMPARATIVE = re.compile(r"\b(faster|slower|fastest|slowest|largest|smallest|beats?|outperforms?|no measurable|"
                         r"nothing measurable|no faster|no slower|no change|better|worse|doubles|halves|"
                         r"more than|less than|above CUB|below CUB|ahead of)\b", re.I)
ALLOWED = {
    "the fastest of each row in bold",  # how a table marks its maximum and its ties, computed by probe_table()
    "above 1 is faster than",  # the definition of the × CUB column
    "above 1: faster than",  # the same definition as ./ladder run prints it
}
FACT = r"(?<!\w)(?<!\d[.,]){}(?!\w)(?![.,]\d)"  # a fact as a whole number or word, not inside 1,320 or 2.64
SPEED_CLAIM = re.compile(r"(\d+(?:\.\d+)?)× (faster|slower)")
SPEED_WORD = re.compile(r"\b(faster|slower|quicker)\b", re.I)

def hardware_literals():
    """The facts of the measured GPU (its name, SMs, L2, peaks, clocks, bus width and stream grids) and CPU, as a page
    would print them: none may be typed into a template, and none may survive a rendering from another GPU's results."""
    m, first = meta(), rows("ladder")[0]
    facts = {m["device"], m["device"].split()[-1], str(m["sms"]), f"{int(m['l2_bytes']) / 1e6:.0f} MB",
             f"{int(m['l2_bytes']) / 1e6:.1f} MB", f"{f(m['peak_gbps']):.0f}", f"{f(m['peak_gbps']) / 1e3:.1f} TB/s",
             f"{f(first['fp32_peak_gflops']):.0f}", f"{f(first['fp32_peak_gflops']) / 1e3:.1f} TFLOP/s",
             f"{int(first['clock_mhz'])} MHz", f"{first['mem_clock_mhz']} MHz", f"{first['bus_width_bits']}-bit",
             f"{first['bus_width_bits']} bits", *(r["grid"] for r in rows("ladder") if r["regime"] == "stream")}
    return {x for x in facts | ({rows("cpu")[0]["cpu"]} if (state.results / "cpu.csv").exists() else set()) if x}
def blank(text): return re.sub(r"[^\n]", " ", text)
def outside_blocks(text):
    """The template with the words inside {% if %} ... {% endif %} blanked (newlines kept): a comparative there is
    asserted only where its condition, computed from the results, holds."""
    out, depth, pos = [], 0, 0
    for m in PLACEHOLDER.finditer(text):
        out += [text[pos:m.start()] if depth == 0 else blank(text[pos:m.start()]), blank(m.group(0))]
        words = (m.group(2) or "").split()
        depth += {"if": 1, "endif": -1}.get(words[0] if words else "", 0)
        pos = m.end()
    return "".join(out) + text[pos:]
def lint_template(rel, text, facts):  # a template's own words: no GPU fact, no comparative outside ALLOWED or an if
    problems = []
    unguarded = outside_blocks(text).splitlines()
    for lineno, line in enumerate(PLACEHOLDER.sub(lambda m: blank(m.group(0)), text).splitlines(), 1):  # numbers kept
        clean = unguarded[lineno - 1] if lineno <= len(unguarded) else ""
        for phrase in ALLOWED:
            clean = clean.replace(phrase, "")
        for m in COMPARATIVE.finditer(re.sub(r'"[^"]*"', " ", clean)):  # a word in quotes is named, not used
            problems.append(f"{rel}:{lineno}: the comparative '{m.group(0)}' is typed, not generated: use "
                            f"compare_rows(), speedup() or which() so it follows the numbers")
        problems += [f"{rel}:{lineno}: '{fact}' is a fact of the measured GPU typed into the template"
                     for fact in facts if re.search(FACT.format(re.escape(fact)), line)]
    return problems
def lint_rendered(rel, text):
    """A rendered page: every 'N× faster' or 'N× slower' has N above 1, and every 'faster' or 'slower' in its prose
    is one that compare_rows() said (so its runs' spreads do not overlap), not words inside a placeholder."""
    problems = [f"{rel}: '{m.group(0)}' says {m.group(2)} with a ratio of {m.group(1)}"
                for m in SPEED_CLAIM.finditer(text) if float(m.group(1)) <= 1.0]
    prose = link_text(outside_code(text))
    for phrase in sorted(SAID | ALLOWED, key=len, reverse=True):
        prose = prose.replace(phrase, " ")
    for line in prose.splitlines():
        for m in SPEED_WORD.finditer(re.sub(r'"[^"]*"', " ", line)):  # a word in quotes is named, not used
            problems.append(f"{rel}: '{m.group(0)}' in \"{line.strip()[:100]}\" does not come from compare_rows()")
    return problems
def link_text(text): return re.sub(r"(?<!!)\[([^\[\]]*)\]\([^)]*\)", r"\1", text)  # each link as its text
def outside_code(text):
    """A page's prose, without code and tables: diffs and commands hold numbers that are not GPU facts, a measured cell
    can equal one by chance, and tables come from helpers; the prose around them is what a hand could get wrong."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    return re.sub(r"`[^`]*`", " ", "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("|")))
def guarded_problems(rel, template_text, text):
    """Each sentence the synthetic GPU makes false: in its template, inside an {% if %}, and not on its page there."""
    problems, unguarded = [], " ".join(outside_blocks(template_text).split())
    template_text, text = " ".join(template_text.split()), " ".join(link_text(text).split())
    for words in (words for page, words in synthetic_gpu.GUARDED if page == rel):
        if words not in template_text:
            problems.append(f"{rel}: the guarded sentence \"{words}\" (maint/docsgen/synthetic_gpu.py) is not in the template")
        elif words in unguarded:
            problems.append(f"{rel}: \"{words}\" states a cause outside any {{% if %}}")
        if words in text:
            problems.append(f"{rel} (synthetic GPU): \"{words}\" is asserted where its condition fails")
    return problems

def check_claims(rendered):
    """The template lint (layouts once), every rendered page, then every page rendered from a synthetic second GPU."""
    facts = hardware_literals()
    problems = [p for t in sorted(LAYOUTS.glob("*.md")) for p in lint_template(t.relative_to(ROOT), t.read_text(), facts)]
    for out, template in pages().items():
        problems += lint_template(template.relative_to(ROOT), template.read_text(), facts)
        problems += lint_rendered(out.relative_to(ROOT), rendered[out])
    with tempfile.TemporaryDirectory() as tmp, results_in(synthetic_gpu.write(state.results, tmp)):
        try:
            for out, template in pages().items():
                rel, text = out.relative_to(ROOT), render(template)
                problems += [p.replace(f"{rel}:", f"{rel} (synthetic GPU):", 1) for p in lint_rendered(rel, text)]
                problems += guarded_problems(str(template.relative_to(TEMPLATES)), template.read_text(), text)
                problems += [f"{rel} (synthetic GPU): '{fact}', a fact of the measured GPU, survives a rendering from "
                             f"another GPU's results" for fact in facts
                             if re.search(FACT.format(re.escape(fact)), outside_code(text))]
        except DocsError as e:
            problems.append(f"rendering from the synthetic GPU's results failed: {e}")
    return problems

# ---- links, anchors and paths ------------------------------------------------------------------------------------
LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
PROJECT_PATH = re.compile(r"(?<![\w/.])((?:scripts|tests|maint|common|cmake|cpu_baseline|docs|\d\d_[a-z0-9_]+)/[\w./-]*\w"
                          r"\.(?:py|cpp|hpp|cu|cmake|md|json|csv|txt))\b")

def without_fences(text): return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
def anchors(text):  # every anchor a page defines: its headings (-1, -2 when repeated, as GitHub does) and <a id>
    found, seen = set(), {}
    for line in without_fences(text).splitlines():
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:  # GitHub's anchor: the heading's visible text, lower case, punctuation dropped, spaces as hyphens
            heading = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1)).replace("`", "").replace("*", "")
            base = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
            seen[base] = seen.get(base, -1) + 1
            found.add(base if seen[base] == 0 else f"{base}-{seen[base]}")
    return found | set(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", text))
def check_links(texts):
    """texts: {path: Markdown}. Every relative link's file exists and its #anchor is on its page (web links: not tried)."""
    problems, cache = [], {}
    for page, text in texts.items():
        for m in LINK.finditer(re.sub(r"`[^`\n]*`", "", without_fences(text))):  # what a reader sees as prose
            file_part, _, anchor = m.group(2).partition("#")
            dest = (page.parent / file_part).resolve() if file_part else page
            said = f"{page.relative_to(ROOT)}: the link [{m.group(1)}]({m.group(2)})"
            if re.match(r"[a-z]+:", m.group(2)):
                continue
            if file_part and not dest.exists() and dest not in texts:
                problems.append(f"{said} points to a file that does not exist")
            elif anchor and dest.suffix == ".md" and anchor not in (cache.get(dest) or cache.setdefault(
                    dest, anchors(texts[dest] if dest in texts else dest.read_text()))):
                problems.append(f"{said} names an anchor #{anchor} that "
                                f"{dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest.name} does not have")
    return problems
def check_paths(texts):
    """texts: {path: Markdown}. Every file of the project a page names outside fenced code exists (a result file not
    measured yet is the pages' "not measured yet", which the structure check judges)."""
    return sorted({f"{page.relative_to(ROOT)}: names {m.group(1)}, which the project does not have"
                   for page, text in texts.items() for m in PROJECT_PATH.finditer(without_fences(text))
                   if not (ROOT / m.group(1)).exists() and ROOT / m.group(1) not in texts
                   and not m.group(1).startswith("docs/results/")})

# ---- the structure, and the reader's pages: their lengths and the plumbing they may not name ----------------------
STAGE_LAYOUT = '{% extends "_layouts/stage.md" %}'

def layout_problems(templates):
    """Stage page templates ({name: text}) that do not extend the stage layout, its sections, footer and evidence."""
    return [f"{name} does not begin with {STAGE_LAYOUT}: every stage page fills the layout's blocks"
            for name, text in templates.items() if not text.startswith(STAGE_LAYOUT + "\n")]
def check_structure():  # a page per stage, each in the stage layout, every result file the pages need
    problems = [f"stage {stage} has no page (docs/templates/stages/{stage}.md)" for stage in ladder_stages()
                if not (TEMPLATES / "stages" / f"{stage}.md").exists()]
    problems += layout_problems({str(t.relative_to(ROOT)): t.read_text()
                                 for t in sorted((TEMPLATES / "stages").glob("*.md"))})
    for name in list(REQUIRED) + list(LADDER_VIEWS):
        try:
            rows(name)
        except DocsError as e:
            problems.append(str(e))
    return problems

# page (as rendered, relative to the project): (the most words of prose, the most open tables; None: no limit)
LIMITS = {"README.md": (1000, None), "docs/method.md": (3000, None), "docs/stages/07_multiblock.md": (1500, 4)}
STAGE_LIMITS, GEMM_LIMITS = (1000, 4), (1200, 4)  # a reduce rung's page; a GEMM rung's (08, and one copied from it)
SENTENCE_WORDS = 40  # the most words a sentence of a reader's page may have
PLUMBING = re.compile(r"\./ladder (?:measure|profile|sweep|probe|mutants|docs)\b|cuobjdump|`ncu\b|scripts/[\w/]+\.py|"
                      r"\btests/[\w/.]+|build/try|build/tests|docs/results/|common/[\w.]+|CCCL \d|"
                      r"compute-sanitizer --|the test `[\w.]+`")

def unfolded(text):  # a rendered page before its folded evidence, without what it folds (<details>) or its code
    text = text.split('<a id="evidence"></a>')[0]
    folded = re.compile(r"<details>(?:(?!<details>).)*?</details>", re.S)  # the innermost first: folds nest
    while folded.search(text):
        text = folded.sub("", text)
    return without_fences(text)
def long_sentences(page, text):
    """Each sentence over SENTENCE_WORDS words, the evidence's too (code a word; no tables, headings or pictures)."""
    text = re.sub(r"`[^`\n]*`", "code", link_text(re.sub(r"<[^>\n]+>", " ", without_fences(text))))
    text = text.replace(NOT_MEASURED, "value")  # one number, when it is measured
    blocks = re.split(r"\n\s*\n|\n(?=\s*(?:[-*]|\d+\.)\s)", text)  # paragraphs and list items
    return [f"{page}: a sentence of {len(words)} words, more than {SENTENCE_WORDS}: \"{' '.join(s.split())[:80]}...\""
            for block in blocks for s in re.split(r"(?<=[.!?])\s+", " ".join(
                l for l in block.splitlines() if not l.lstrip().startswith(("|", "#", "!["))))
            if len(words := re.findall(r"[A-Za-z0-9][\w'’.^/×-]*", s)) > SENTENCE_WORDS]
def reader_problems(rendered):
    """{page: text}: each page over its limit of words of prose or of open tables before its folded evidence, each sentence
    of a reader's page (README, index, the stage pages) too long to parse, and each line of README or a stage page
    before its folded evidence that names what belongs to method.md or the evidence (PLUMBING)."""
    out = []
    for page, text in rendered.items():
        page, stage, lines = str(page), pathlib.Path(page).stem, unfolded(text).splitlines()
        if page in ("README.md", "docs/index.md") or page.startswith("docs/stages/"):
            out += long_sentences(page, text)
        gemm = stage in ladder_stages() and role(stage) == "gemm"
        if limit := LIMITS.get(page) or page.startswith("docs/stages/") and (GEMM_LIMITS if gemm else STAGE_LIMITS):
            tables = sum(l.startswith("|") and (i == 0 or not lines[i - 1].startswith("|")) for i, l in enumerate(lines))
            words = sum(len(re.findall(r"[A-Za-z0-9][\w'’.-]*", re.sub(r"\]\([^)]*\)", "]", l))) for l in lines
                        if not l.startswith(("|", "#", "![", "<")))
            if words > limit[0]:
                out.append(f"{page}: {words} words of prose before its folded evidence, more than {limit[0]} (fold or cut)")
            if limit[1] is not None and tables > limit[1]:
                out.append(f"{page}: {tables} open tables, more than {limit[1]} (fold them, or move them to results.md)")
        for line in lines if page == "README.md" or page.startswith("docs/stages/") else []:
            found = PLUMBING.search(line)
            # a note of what is not measured yet may say which command measures it: it lasts until the results do
            if found and not line.startswith(("|", "#", "<", "![")) and NOT_MEASURED not in line:
                out.append(f"{page}: names `{found.group(0)}` in the reader's text (move it to method.md or fold it)")
    return out
