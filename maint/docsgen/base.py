"""The paths, the result files the pages are built from (each read once), what a page says where
a result is missing, and the formatting every other module uses."""
import contextlib
import csv
import io
import json
import math
import pathlib
import re
import types

from scripts.stages import ROOT, combine_stage, combines, describe, reduce_stages

DOCS = ROOT / "docs"
TEMPLATES = DOCS / "templates"
LAYOUTS = TEMPLATES / "_layouts"  # what pages extend (docs/templates/_layouts/stage.md): no page of their own
IMG = DOCS / "img"
# What a rendering reads that a check may switch: the result files (the synthetic GPU's, in a check), and the folder
# of the page being rendered ("root" for README.md, "." for docs/, "stages").
state = types.SimpleNamespace(results=DOCS / "results", page_dir=".")

# The result files every page needs: --check fails where one is missing or does not parse (where a file lacks a
# column a page uses, the page's rendering fails, naming it).
REQUIRED = ["ladder", "mutants", "try_06_float4_kLoadsInFlight", "try_02_grid_stride_grid", "multiblock", "determinism",
            "accuracy", "error_bound", "accuracy_cpu", "sweep", "probe_stream", "probe_tree", "gemm", "flush",
            "combine_tree", "ncu"]

class DocsError(Exception):
    pass

class NotMeasured(DocsError):
    """A stage (or a result file a page may do without) that the results do not have yet: the page says so."""

NOT_MEASURED = "*not measured yet*"
not_measured = set()  # what a rendering found missing, reported by --check
_cache = {}

def missing(note):  # notes what a page will say is not measured yet, and raises NotMeasured
    not_measured.add(note)
    raise NotMeasured(note)
@contextlib.contextmanager
def results_in(directory):  # render from the result files in directory while it lasts (a check: a synthetic GPU's)
    before, state.results = state.results, pathlib.Path(directory)
    _cache.clear()
    try:
        yield
    finally:
        state.results = before
        _cache.clear()
def default_combine(r): return r["combine"] == combines(r["stage"])[0]  # its stage file's first

# What the pages call the stream and the tree ladder: each stage's row in that regime (01 runs only the tree
# regime, its one launch, and stands in both; 07 at its default combine, atomic).
LADDER_VIEWS = {"ladder_stream": "stream", "ladder_tree": "tree"}

def rows(name):
    """The rows of docs/results/<name>.csv; "sweep" holds each stage at its default combine, "sweep_all" every one."""
    if name in LADDER_VIEWS:
        mine = {s: [r for r in rows("ladder") if r["stage"] == s and default_combine(r)] for s in reduce_stages()}
        not_measured.update(f"{s}: no rows in docs/results/ladder.csv" for s, m in mine.items() if not m)
        return [([r for r in m if r["regime"] == LADDER_VIEWS[name]] or m)[0] for m in mine.values() if m]
    if name == "sweep":
        return [r for r in rows("sweep_all") if default_combine(r)]
    file = "sweep" if name == "sweep_all" else name
    if name not in _cache:
        path = state.results / f"{file}.csv"
        with open(path, newline="") if path.exists() else io.StringIO() as fh:
            data = list(csv.DictReader(fh))
        if not data:  # not measured yet (a new stage's, say): the page says so (check_structure() demands the files
            missing(f"docs/results/{file}.csv: not measured yet")  # that every page needs)
        _cache[name] = data
    return _cache[name]
def measured(name):
    path = state.results / f"{name}.csv"
    return path.exists() and len(path.read_text().splitlines()) > 1
def json_result(name, how):  # docs/results/<name>, or the error that says how to make it
    path = state.results / name
    if not path.exists():
        raise DocsError(f"docs/results/{name} is missing: {how}")
    return json.loads(path.read_text())
def meta(): return json_result("meta.json", "run ./maint/do measure on a GPU")
def result_text(name, note):  # docs/results/<name>, or NotMeasured (note) where it is missing: the page says so
    path = state.results / name
    if not path.exists():
        missing(note)
    return path.read_text()
def stage_rows(name, stage):  # NotMeasured where the file has none
    return [r for r in rows(name) if r["stage"] == stage] or missing(f"{stage}: no rows in docs/results/{name}.csv")
def select(name, **match):  # the one row of a result file that matches: select("ladder_tree", stage="03_padding")
    if "stage" in match:
        stage_rows("ladder" if name in LADDER_VIEWS else name, match["stage"])
    found = [r for r in rows(name) if all(str(r[k]) == str(v) for k, v in match.items())]
    if len(found) != 1:
        raise DocsError(f"{name}: {len(found)} rows match {match}")
    return found[0]
def f(value): return float(value)
def num(name, field, fmt=".1f", **match): return format(f(select(name, **match)[field]), fmt)
def pow2(n):
    n = int(n)
    return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n)
def and_list(items):  # 'a', 'a and b', 'a, b and c'
    items = [str(i) for i in items]
    return " and ".join(items) if len(items) < 3 else f"{', '.join(items[:-1])} and {items[-1]}"
def value_range(values):  # '3' or '3–5', of numbers as printed
    lo, hi = min(values, key=float), max(values, key=float)
    return lo if lo == hi else f"{lo}–{hi}"
def sizes(name, **match): return sorted({int(r["n"]) for r in rows(name) if all(str(r[k]) == str(v) for k, v in match.items())})
def sizes_of(name, **match): return and_list(pow2(n) for n in sizes(name, **match))  # '2^20, 2^24, 20000000 and 2^28'
def md_table(headers, body, align=None, left=1):  # the first `left` columns left-aligned, the rest right
    lines = [headers, align or ["---"] * left + ["---:"] * (len(headers) - left)] + [[str(c) for c in r] for r in body]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)

def one_match(file, pattern, what=None):  # the one match in file (a path under the project, or a folder: its C++ files)
    where = ROOT / file
    texts = [p.read_text() for p in ([where] if where.is_file() else sorted(where.glob("*.[ch]*")))]
    found = [m for t in texts for m in re.finditer(pattern, t)]
    if len(found) != 1:
        raise DocsError(f"{file} holds {len(found)} {what or 'matches of ' + pattern}, not one")
    return found[0]
def constant(file, name):
    """A constant of the project's C++ code, as `file` (a path under the project, or a folder: the one file in it that
    defines it) defines it, `constexpr TYPE [A = 1, ]NAME = VALUE;` with VALUE as cpp_number() reads it: the docs
    fail to render unless exactly one file defines it, so a sentence that states it follows the code."""
    m = one_match(file, rf"constexpr [\w: ]+? (?:\w+ = [^,;]+, )*{name} = ([^,;]+)[,;]", f"definitions of {name}")
    if re.fullmatch(r"k\w+", m.group(1).strip()):  # another constant: constexpr int kA = kB;
        return constant(file, m.group(1).strip())
    return cpp_number(m.group(1), f"{file}: {name}")
def cpp_number(text, what):  # a C++ number or an expression of numbers: '(1u << 24) + 1', '0x1.0p-24', '1.0 / 16'
    clean = re.sub(r"std::\w+\{(\w+)\}", r"\1", text)
    clean = re.sub(r"\b(0x[0-9a-fA-F.]+p[-+]?\d+)", lambda h: repr(float.fromhex(h.group(1))), clean)
    clean = re.sub(r"\b(\d+)(?:ull|ul|u|ll)\b", r"\1", clean, flags=re.I)
    if not re.fullmatch(r"[\d.eE+\-*/<> ()]+", clean):
        raise DocsError(f"{what} = {text} is not a number the docs can read")
    v = eval(clean, {"__builtins__": {}})  # digits and operators only, checked above
    return int(v) if float(v).is_integer() else v
def common_constant(name): return constant("common", name)  # wherever in common/ it is defined

# The tail bound 2 e^(-lambda^2 / 2) of the oracle's lambda `name`: its exponent (18 for lambda = 6), and its value
# rounded up to two digits, as the pages write it (3.1·10<sup>−8</sup>).
def tail_exponent(name): return f"{common_constant(name) ** 2 / 2:g}"
def tail_probability(name):
    value = 2 * math.exp(-common_constant(name) ** 2 / 2)
    exponent = math.floor(math.log10(value))
    return f"{math.ceil(round(value / 10 ** exponent * 10, 9)) / 10:.1f}·10<sup>−{-exponent}</sup>"

# A program's options as its --describe gives them: default_of(GEMM, "--tile").
def option(program, flag): return next(o for o in describe(program)["options"] if flag in o["flags"])
def default_of(program, flag): return option(program, flag)["default"]
def combine_default(): return combines(combine_stage())[0]  # 'atomic', the first the combine stage lists

# Links as the page being rendered writes them.
def docs_path(target): return {"stages": "../", "root": "docs/"}.get(state.page_dir, "") + target
def link(stage): return f"[{stage}]({'' if state.page_dir == 'stages' else docs_path('stages/')}{stage}.md)"
def img(name, alt): return f"![{alt}]({docs_path('img/' + name)})"
