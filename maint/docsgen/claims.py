"""The claims check: what a template may say in its own words, and the second (synthetic) GPU it must stay true on."""
import pathlib
import re
import tempfile


from . import synthetic_gpu
from .base import DocsError, f, LAYOUTS, meta, ROOT, rows, state, TEMPLATES, use_results
from .compare import said_phrases
from .glossary import pages
from .render import PLACEHOLDER, render


# Words that compare two measurements. A template may not type them: they come from compare_rows(), speedup(), which() and the
# other helpers above, so they change when the numbers do. ALLOWED lists the phrases that use such a word to
# describe, not to claim, each with its reason.
COMPARATIVE = re.compile(r"\b(faster|slower|fastest|slowest|largest|smallest|beats?|outperforms?|no measurable|"
                         r"nothing measurable|no faster|no slower|no change|better|worse|doubles|halves|"
                         r"more than|less than|above CUB|below CUB|ahead of)\b", re.I)
ALLOWED = {
    "the fastest of each row in bold",  # how a table marks its maximum, computed by probe_table()
    "above 1 is faster than",  # the definition of the × CUB column
    "above 1: faster than",  # the same definition as ./ladder run prints it
}
FACT = r"(?<!\w)(?<!\d[.,]){}(?!\w)(?![.,]\d)"  # a fact as a whole number or word, not inside 1,320 or 2.64
SPEED_CLAIM = re.compile(r"(\d+(?:\.\d+)?)× (faster|slower)")


def hardware_literals():
    """The facts of the GPU the results were measured on, as a page would print them: none may be typed into a
    template, and none may survive a rendering from another GPU's results."""
    m = meta()
    facts = {m["device"], m["device"].split()[-1], str(m["sms"]), f"{int(m['l2_bytes']) / 1e6:.0f} MB",
             f"{int(m['l2_bytes']) / 1e6:.1f} MB",
             f"{f(m['peak_gbps']):.0f}", f"{f(m['peak_gbps']) / 1e3:.1f} TB/s"}
    first = rows("ladder")[0]
    if "fp32_peak_gflops" in first:
        facts |= {f"{f(first['fp32_peak_gflops']):.0f}", f"{f(first['fp32_peak_gflops']) / 1e3:.1f} TFLOP/s",
                  f"{int(first['clock_mhz'])} MHz"}
    if first.get("mem_clock_mhz"):  # the memory clock and bus width the theoretical peak comes from
        facts |= {f"{first['mem_clock_mhz']} MHz", f"{first['bus_width_bits']}-bit", f"{first['bus_width_bits']} bits"}
    facts |= {r["grid"] for r in rows("ladder") if r["regime"] == "stream"}
    if (state.results / "cpu.csv").exists():  # the host cpu_baseline ran on
        facts.add(rows("cpu")[0]["cpu"])
    return {x for x in facts if x}


def outside_blocks(text):
    """The template with the words inside {% if %} ... {% endif %} blanked (newlines kept): a comparative there is
    asserted only where its condition, computed from the results, holds."""
    out, depth, pos = [], 0, 0
    for m in PLACEHOLDER.finditer(text):
        chunk = text[pos:m.start()]
        out.append(chunk if depth == 0 else re.sub(r"[^\n]", " ", chunk))
        tag_words = (m.group(2) or "").split()
        depth += {"if": 1, "endif": -1}.get(tag_words[0] if tag_words else "", 0)
        out.append(re.sub(r"[^\n]", " ", m.group(0)))
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def lint_template(rel, text, facts):
    """A template's own words: no hardware fact, no comparative word outside ALLOWED or an {% if %}."""
    problems = []
    body = PLACEHOLDER.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)  # line numbers kept
    unguarded = outside_blocks(text).splitlines()
    for lineno, line in enumerate(body.splitlines(), 1):
        clean = unguarded[lineno - 1] if lineno <= len(unguarded) else ""
        for phrase in ALLOWED:
            clean = clean.replace(phrase, "")
        for m in COMPARATIVE.finditer(re.sub(r'"[^"]*"', " ", clean)):  # a word in quotes is named, not used
            problems.append(f"{rel}:{lineno}: the comparative '{m.group(0)}' is typed, not generated: use "
                            f"compare_rows(), speedup() or which() so it follows the numbers")
        for fact in facts:
            if re.search(FACT.format(re.escape(fact)), line):
                problems.append(f"{rel}:{lineno}: '{fact}' is a fact of the measured GPU typed into the template")
    return problems


SPEED_WORD = re.compile(r"\b(faster|slower|quicker)\b", re.I)


def lint_rendered(rel, text):
    """A rendered page: every 'N× faster' or 'N× slower' has N above 1, and every 'faster' or 'slower' in its prose
    is one that compare_rows() said (so its runs' spreads do not overlap), not words inside a placeholder."""
    problems = [f"{rel}: '{m.group(0)}' says {m.group(2)} with a ratio of {m.group(1)}"
                for m in SPEED_CLAIM.finditer(text) if float(m.group(1)) <= 1.0]
    prose = link_text(outside_code(text))
    for phrase in sorted(said_phrases() | ALLOWED, key=len, reverse=True):
        prose = prose.replace(phrase, " ")
    for line in prose.splitlines():
        for m in SPEED_WORD.finditer(re.sub(r'"[^"]*"', " ", line)):  # a word in quotes is named, not used
            problems.append(f"{rel}: '{m.group(0)}' in \"{line.strip()[:100]}\" does not come from compare_rows()")
    return problems


def link_text(text):
    """Markdown with every link replaced by its text, as a reader reads it."""
    return re.sub(r"(?<!!)\[([^\[\]]*)\]\([^)]*\)", r"\1", text)


def guarded_problems(rel, template_text, text, guarded):
    """The sentences the synthetic GPU makes false: each still in its template, inside an {% if %}, and absent from
    the page rendered from the synthetic results."""
    problems = []
    template_text, text = " ".join(template_text.split()), " ".join(link_text(text).split())
    for page, words in guarded:
        if page != rel:
            continue
        at = template_text.find(words)
        before = template_text[:max(at, 0)]
        depth = len(re.findall(r"\{%[-+]?\s*if\b", before)) - len(re.findall(r"\{%[-+]?\s*endif\s*[-+]?%\}", before))
        if at < 0:
            problems.append(f"{rel}: the guarded sentence \"{words}\" (maint/docsgen/synthetic_gpu.py) is not in the template")
        elif depth <= 0:
            problems.append(f"{rel}: \"{words}\" states a cause outside any {{% if %}}")
        if words in text:
            problems.append(f"{rel} (synthetic GPU): \"{words}\" is asserted where its condition fails")
    return problems


def check_claims(rendered):
    """The template lint on the real results (rendered: {page: its text}), then every page rendered from a synthetic
    second GPU."""
    problems = []
    facts = hardware_literals()
    for layout in sorted(LAYOUTS.glob("*.md")):  # what every page of a kind shares, linted once
        problems += lint_template(layout.relative_to(ROOT), layout.read_text(), facts)
    for out, template in pages().items():
        rel = template.relative_to(ROOT)
        problems += lint_template(rel, template.read_text(), facts)
        problems += lint_rendered(out.relative_to(ROOT), rendered[out])
    real = state.results
    with tempfile.TemporaryDirectory() as tmp:
        synthetic_gpu.write(real, pathlib.Path(tmp))
        use_results(tmp)
        try:
            for out, template in pages().items():
                rel = out.relative_to(ROOT)
                text = render(template)
                problems += [p.replace(f"{rel}:", f"{rel} (synthetic GPU):", 1) for p in lint_rendered(rel, text)]
                problems += guarded_problems(str(template.relative_to(TEMPLATES)), template.read_text(), text,
                                             synthetic_gpu.GUARDED)
                for fact in facts:
                    if re.search(FACT.format(re.escape(fact)), outside_code(text)):
                        problems.append(f"{rel} (synthetic GPU): '{fact}', a fact of the measured GPU, survives a "
                                        f"rendering from another GPU's results")
        except DocsError as e:
            problems.append(f"rendering from the synthetic GPU's results failed: {e}")
        finally:
            use_results(real)
    return problems


def outside_code(text):
    """A page's prose: without fenced code, inline code and table rows (diffs and commands hold numbers that are
    not GPU facts, and a measured cell of a table can equal one by chance; tables come from helpers, which the
    rendering exercises, and the prose around them is what a hand could get wrong)."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("|"))
    return re.sub(r"`[^`]*`", " ", text)
