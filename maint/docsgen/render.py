"""Rendering: the templates are Jinja2 over Markdown, whose placeholders call the helpers; each page links a term of
docs/glossary.md where it first uses it."""
import inspect
import pathlib
import re

from .. import model_pages
from ..measure import HANDOFF_SIZES, NCU_SECTIONS
from scripts import sanitize
from scripts.run import cpu_stage_row, stage_diff
from scripts.stages import combine_stage, gemm_stage, ladder_stages, reduce_stages, relative_error
from . import base, compare, numbers, sources, tables
from .base import DocsError, DOCS, docs_path, LAYOUTS, NOT_MEASURED, NotMeasured, ROOT, state, TEMPLATES

# What a template may call: every function of these modules, those below from the project's other modules, and a few
# builtins; each wrapped so that a missing result prints "not measured yet".
HELPER_MODULES = (base, numbers, compare, sources, tables)
MORE_HELPERS = {"combine_stage": combine_stage, "cpu_stage_row": cpu_stage_row, "relative_error": relative_error,
                "stage_diff": stage_diff, **{name: getattr(model_pages, name) for name in
                                             ("gemm_access", "race_example", "tolerance_note", "tree_degrees", "worst_step")},
                "format": format, "int": int, "len": len, "min": min, "max": max, "abs": abs}

# Every {{ expression }} and {% tag %} of a template (the claims check reads the words around them).
PLACEHOLDER = re.compile(r"\{\{(.+?)\}\}|\{%-?(.+?)-?%\}", re.S)

class NotMeasuredValue:
    """What a helper gives a template where its results are missing (NotMeasured): it prints as *not measured yet*,
    is false as a condition, compares false, and stays itself through indexing, arithmetic and format(), so a page
    says "not measured yet" where the number would be and asserts nothing that rests on it."""
    __str__ = __format__ = lambda self, *spec: NOT_MEASURED  # noqa: E731
    __bool__ = __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = lambda self, *other: False  # noqa: E731
    __len__, __iter__, __hash__ = lambda self: 0, lambda self: iter(()), object.__hash__  # noqa: E731

for _name in "getitem getattr call add radd sub rsub mul rmul truediv rtruediv floordiv rfloordiv pow rpow neg".split():
    setattr(NotMeasuredValue, f"__{_name}__", lambda self, *args, **kwargs: self)
NM = NotMeasuredValue()

def template_helper(fn):
    """fn as a template sees it: NotMeasured, raised anywhere inside, or a not-measured argument, gives NM."""
    def call(*args, **kwargs):
        if any(a is NM for a in (*args, *kwargs.values())):
            return NM
        try:
            return fn(*args, **kwargs)
        except NotMeasured:
            return NM
    return call

def jinja_environment():
    """Jinja2, set up for Markdown: a tag alone on its line takes the line with it (trim_blocks, lstrip_blocks),
    nothing is escaped, an unknown name is an error, not an empty string, and {% extends %} finds the layouts."""
    try:
        import jinja2
    except ImportError:
        raise DocsError("the docs need Jinja2 (apt-get install python3-jinja2, or pip install jinja2); ./ladder "
                        "installs it unless LADDER_NO_INSTALL=1") from None
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True, autoescape=False, loader=jinja2.FileSystemLoader(TEMPLATES))
    helpers = {name: fn for m in HELPER_MODULES for name, fn in vars(m).items()
               if inspect.isfunction(fn) and fn.__module__ == m.__name__}
    env.globals.update({name: template_helper(fn) for name, fn in {**helpers, **MORE_HELPERS}.items()})
    env.filters["pow2"] = base.pow2
    env.globals.update(STAGES=ladder_stages(), REDUCE=reduce_stages(), GEMM=gemm_stage(), HANDOFF_SIZES=HANDOFF_SIZES,
                       NCU_SECTIONS=NCU_SECTIONS, SANITIZE=sanitize)
    return env

def squeeze_blank_lines(text):
    """At most one blank line in a row outside code blocks (a helper with nothing to say leaves an empty line)."""
    out, fenced = [], False
    for line in text.split("\n"):
        fenced ^= line.startswith("```")
        if fenced or line.strip() or not out or out[-1].strip():
            out.append(line)
    return "\n".join(out)

def render(template): return render_text(template.read_text(), template.relative_to(TEMPLATES))

def render_text(text, rel):
    """A template's text rendered as the page docs/templates/<rel> would be."""
    import jinja2
    rel = pathlib.Path(rel)
    state.page_dir = "root" if rel.name == "README.md" else (rel.parent.name or ".")
    page = {"stage": rel.stem} if rel.parent.name == "stages" else {}  # a stage's page knows its stage
    try:
        body = jinja_environment().from_string(text).render(**page)
    except DocsError:
        raise
    except jinja2.TemplateSyntaxError as e:
        raise DocsError(f"{rel}:{e.lineno}: {e.message}") from None
    except Exception as e:  # a broken placeholder names the page and the error
        raise DocsError(f"{rel}: {type(e).__name__}: {e}") from None
    header = (f"<!-- Generated by maint/make_docs.py from docs/templates/{rel} and docs/results/. Edit the template, "
              "then run ./maint/do docs. -->\n")
    return header + autolink(squeeze_blank_lines(body), rel)

def pages():
    """Output path -> template. README.md renders to the top of the repository, the rest into docs/."""
    return {(ROOT / "README.md" if t.name == "README.md" and t.parent == TEMPLATES else DOCS / t.relative_to(TEMPLATES)): t
            for t in sorted(TEMPLATES.rglob("*.md")) if LAYOUTS not in t.parents}

# ---- the glossary's links ----------------------------------------------------------------------------------------

# An entry of docs/templates/glossary.md: its anchor, its name (bold, or code), and the words a page uses for it where
# they are not its name alone, in a comment: {# links: warp, warps #} ("none": too common to link).
GLOSSARY_ENTRY = re.compile(r'<a id="([^"]+)"></a>(?:\*\*([^*]+)\*\*|`([^`]+)`)(?:\{# links: ([^#]*) #\})?')
INLINE = re.compile(r"(`[^`\n]+`|!?\[(?:[^\[\]]|\[[^\]]*\])*\]\([^)]*\)|<[^>\n]+>)")

def glossary_terms():
    """[(form, anchor, its pattern)] from docs/templates/glossary.md, the longest forms first. An entry named in code
    (a stall reason) has no pattern: it links only where a page writes it as code, `wait`, not the word wait."""
    terms = []
    for anchor, bold, code, forms in GLOSSARY_ENTRY.findall((TEMPLATES / "glossary.md").read_text()):
        for form in [] if forms == "none" else forms.split(", ") if forms else [(bold or code).strip("`")]:
            flags = 0 if any(c.isupper() for c in form[1:]) or form.isupper() else re.I
            terms.append((form, anchor, None if code else re.compile(rf"(?<![\w-]){re.escape(form)}(?![\w-])", flags)))
    return sorted(terms, key=lambda t: -len(t[0]))

def autolink(text, rel):
    """Links the first use of each glossary term in a page's prose (not in headings, tables, code blocks, links or
    other code; a code span that is exactly the term is linked whole)."""
    if str(rel) == "glossary.md":
        return text
    target, terms = docs_path("glossary.md"), glossary_terms()
    done, lines, fenced = set(), text.split("\n"), False
    for i, line in enumerate(lines):
        fenced ^= line.startswith("```")
        if fenced or line.startswith(("#", "|", "```", "<!--", "![", "<")) or not line.strip():  # HTML: as it is
            continue
        for form, anchor, pattern in terms:
            if anchor in done:
                continue
            parts = INLINE.split(line)
            for k, part in enumerate(parts):
                m = None if k % 2 else pattern.search(part) if pattern else None
                if k % 2 and part == f"`{form}`":  # code, a link or a tag: linked only when it is the term, in code
                    parts[k] = f"[{part}]({target}#{anchor})"
                elif m:
                    parts[k] = part[:m.start()] + f"[{m.group(0)}]({target}#{anchor})" + part[m.end():]
                else:
                    continue
                done.add(anchor)
                line = lines[i] = "".join(parts)
                break
    return "\n".join(lines)
