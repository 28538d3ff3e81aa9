"""Glossary links (each page links a term of docs/glossary.md where it first uses it) and the page list."""
import re

from scripts.stages import ladder_stages
from .base import CHARTS, DOCS, docs_path, DocsError, IMG, LADDER_VIEWS, LAYOUTS, REQUIRED, ROOT, rows, TEMPLATES


GLOSSARY_ENTRY = re.compile(r'<a id="([^"]+)"></a>(?:\*\*([^*]+)\*\*|`([^`]+)`)')
# Words a page uses for a glossary entry besides its own name. Entries not named here link by their name alone.
GLOSSARY_FORMS = {
    "stage": [], "thread": [], "block": [], "grid": [], "gbs": [], "cub": [], "prev": [],  # too common to link
    "regime": [], "stream-regime": ["stream regime"], "tree-regime": ["tree regime"],
    "speed-of-light": ["speed of light", "read-only kernel"], "theoretical-peak": ["theoretical peak"],
    "warp": ["warp", "warps"], "sm": ["SM", "SMs"], "bank": ["banks"], "bank-conflict": ["bank conflict", "bank conflicts"],
    "wavefront": ["wavefront", "wavefronts"], "divergence": ["divergence", "diverges"],
    "predication": ["predicated", "predication"], "loop-unrolling": ["loop unrolling", "unrolled"],
    "syncwarp": ["__syncwarp()"], "shuffle": ["shuffle", "shuffles", "__shfl_down_sync"],
    "vectorized-loads": ["vectorized loads", "16-byte loads", "vector loads"], "coalesced": ["coalesced"],
    "atomic": ["atomicAdd", "atomics"], "two-pass": ["two-pass"], "last-block": ["last-block"],
    "acquire-release": ["acquire-release", "acq_rel"], "occupancy": ["occupancy"], "data-race": ["data race", "race"],
    "interleaved-addressing": ["interleaved tree", "interleaved addressing"],
    "sequential-addressing": ["sequential addressing"], "grid-stride-loop": ["grid-stride loop"],
    "shared-memory": ["shared memory"], "padding": ["padding"], "l2-flush": ["L2 flush"],
    "within-noise": ["within noise"], "oracle": ["oracle"], "exact-check": ["exact check"],
    "float-bound": ["float bound"], "summation-depth": ["summation depth"], "ulp": ["ulp", "ulps"],
    "kahan-summation": ["Kahan"], "planted-bug": ["planted bug", "planted bugs", "mutants"],
    "deterministic": ["deterministic", "determinism"], "nsight-compute": ["Nsight Compute"], "sass": ["SASS"],
    "stall-reason": ["stall reason", "stall reasons", "top stall"],
    "threads-on-per-instruction": ["threads on per instruction"], "dram-throughput": ["DRAM throughput"],
    "gemm": ["GEMM", "SGEMM"], "tile": ["tile", "tiles"], "register-tiling": ["register tiling"],
    "fp32-peak": ["FP32 peak"], "tf32": ["TF32", "tensor cores"], "roofline": ["roofline"],
    "arithmetic-intensity": ["arithmetic intensity"],
}
INLINE = re.compile(r"(`[^`\n]+`|!?\[(?:[^\[\]]|\[[^\]]*\])*\]\([^)]*\)|<[^>\n]+>)")


def glossary_terms():
    """[(form, anchor, in code only)] from docs/templates/glossary.md, the longest forms first. An entry named in
    code (a stall reason) links only where a page writes it as code: `wait`, not the word wait."""
    terms = []
    for anchor, bold, code in GLOSSARY_ENTRY.findall((TEMPLATES / "glossary.md").read_text()):
        forms = GLOSSARY_FORMS.get(anchor)
        forms = [(bold or code).strip("`")] if forms is None else forms
        terms += [(form, anchor, bool(code)) for form in forms]
    return sorted(terms, key=lambda t: -len(t[0]))


def term_pattern(form):
    flags = 0 if any(c.isupper() for c in form[1:]) or form.isupper() else re.I
    return re.compile(r"(?<![\w-])" + re.escape(form) + r"(?![\w-])", flags)


def autolink(text, rel):
    """Links the first use of each glossary term in a page's prose (not in headings, tables, code blocks, links or
    other code; a code span that is exactly the term is linked whole)."""
    if str(rel) == "glossary.md":
        return text
    target = docs_path("glossary.md")
    done, lines, fenced = set(), text.split("\n"), False
    terms = [(form, anchor, None if code else term_pattern(form)) for form, anchor, code in glossary_terms()]
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fenced = not fenced
        if fenced or line.startswith(("#", "|", "```", "<!--", "![", "<")) or not line.strip():  # HTML: as it is
            continue
        for form, anchor, pattern in terms:
            if anchor in done:
                continue
            parts = INLINE.split(line)
            for k, part in enumerate(parts):
                if k % 2:  # code, a link or a tag: linked only when it is the term itself, in code
                    if part == f"`{form}`":
                        parts[k] = f"[{part}]({target}#{anchor})"
                        break
                    continue
                m = pattern.search(part) if pattern else None
                if m:
                    parts[k] = part[:m.start()] + f"[{m.group(0)}]({target}#{anchor})" + part[m.end():]
                    break
            else:
                continue
            done.add(anchor)
            line = "".join(parts)
        lines[i] = line
    return "\n".join(lines)


def pages():
    """Output path -> template. README.md renders to the top of the repository, the rest into docs/."""
    return {(ROOT / "README.md" if t.name == "README.md" and t.parent == TEMPLATES else DOCS / t.relative_to(TEMPLATES)): t
            for t in sorted(TEMPLATES.rglob("*.md")) if LAYOUTS not in t.parents}


STAGE_LAYOUT = '{% extends "_layouts/stage.md" %}'


def layout_problems(templates):
    """{name: text} of stage page templates: those that do not extend the stage layout (a page of its own shape
    would lose the sections in their order, the next-rung link and the folded evidence)."""
    return [f"{name} does not begin with {STAGE_LAYOUT}: every stage page fills the layout's blocks"
            for name, text in templates.items() if not text.startswith(STAGE_LAYOUT + "\n")]


def check_structure():
    problems = []
    for stage in ladder_stages():
        if not (TEMPLATES / "stages" / f"{stage}.md").exists():
            problems.append(f"stage {stage} has no page (docs/templates/stages/{stage}.md)")
    problems += layout_problems({str(t.relative_to(ROOT)): t.read_text()
                                 for t in sorted((TEMPLATES / "stages").glob("*.md"))})
    for name in list(REQUIRED) + list(LADDER_VIEWS):
        try:
            rows(name)
        except DocsError as e:
            problems.append(str(e))
    for chart in CHARTS:
        if not (IMG / chart).exists():
            problems.append(f"docs/img/{chart} is missing: run ./maint/do docs where matplotlib is installed")
    return problems
