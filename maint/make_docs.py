"""./maint/do docs: builds docs/ and README.md from docs/templates/ (Jinja2 over Markdown, calling maint/docsgen/) and
the results in docs/results/ (written on a GPU by `./maint/do measure`). --check fails where a page differs from its
rendering or fails a check of maint/docsgen/checks.py (a CPU test); --self-test plants wrong claims and pages and
demands that the checks catch each."""
import difflib
import importlib.util
import pathlib
import re
import sys
import tempfile

from .diagrams import drawn, stale_diagrams
from .docsgen import synthetic_gpu
from .docsgen.base import (DOCS, DocsError, f, IMG, meta, NOT_MEASURED, not_measured, results_in, ROOT, rows,
                           select, state)
from .docsgen.checks import (check_claims, check_links, check_paths, check_structure, FACT, guarded_problems,
                             hardware_literals, layout_problems, lint_rendered, lint_template, outside_code,
                             reader_problems)
from .docsgen.compare import distinct
from .docsgen.render import pages, render, render_text
from .docsgen.sources import code
from scripts.stages import reduce_stages

def self_test():  # plants wrong claims and pages: exit 0 only if every check catches its own
    facts, planted = hardware_literals(), {}
    grid = next(r["grid"] for r in rows("ladder") if r["regime"] == "stream")
    planted["a typed SM count"] = lint_template("planted.md", f"The GPU has {meta()['sms']} SMs.", facts)
    planted["a typed grid"] = lint_template("planted.md", f"The stream grid is {grid} blocks.", facts)
    planted["a typed comparative"] = lint_template("planted.md", "03 is faster than 02 in the tree regime.", facts)
    # a's median inside b's range, b's above every one of a's repetitions: told apart from b's side only
    planted["a difference seen from one side only"] = [] if distinct(
        {"ms_median": "1.0", "ms_min": "0.9", "ms_max": "1.3"}, {"ms_median": "1.35", "ms_min": "0.95", "ms_max": "1.4"}
    ) != -1 else ["told apart"]
    with tempfile.TemporaryDirectory() as tmp, results_in(synthetic_gpu.write(state.results, tmp)):
        ms = [f(select("ladder_tree", stage=s)["ms_median"]) for s in ("02_grid_stride", "03_padding")]
        planted["'N× faster' from a ratio below 1"] = lint_rendered("planted.md", f"03 runs {ms[0] / ms[1]:.2f}× faster.")
        text = outside_code("The stream grid is {} blocks.".format(grid))  # a helper returning a constant
        planted["a fact hard-coded in a helper"] = [x for x in facts if re.search(FACT.format(re.escape(x)), text)]
        page, words = synthetic_gpu.GUARDED[1]
        text = f"The top stall says it: {{% if True %}}{words}{{% endif %}}."  # a condition that is no test
        planted["a causal sentence false on the synthetic GPU"] = [
            p for p in guarded_problems(page, text, render_text(text, page)) if "synthetic" in p]
    stage = reduce_stages()[len(reduce_stages()) // 2]  # the pages rendered without one stage's rows, as a new rung's
    with tempfile.TemporaryDirectory() as tmp:
        for path in state.results.iterdir():
            (pathlib.Path(tmp) / path.name).write_text("\n".join(
                l for l in path.read_text().split("\n") if path.suffix != ".csv" or not l.startswith(stage + ",")))
        not_measured.clear()
        try:
            with results_in(tmp):
                texts = "".join(render(t) for t in pages().values())
            found = [f"{n}, and the README says {NOT_MEASURED}" for n in sorted(not_measured) if NOT_MEASURED in texts]
        except Exception as e:  # noqa: BLE001 (what the check must not do is die on it)
            print(f"docs self-test: rendering without {stage}'s results failed: {type(e).__name__}: {e}")
            found = []
        finally:
            not_measured.clear()
    planted["a stage without results"] = found
    planted["a broken link"] = check_links({DOCS / "planted.md": "See [the method](methods.md#timing)."})
    planted["a link to a missing anchor"] = check_links({DOCS / "planted.md": "See [timing](method.md#timings)."})
    planted["a file the project does not have"] = check_paths({DOCS / "planted.md": "As `maint/tests/check_sass.py` says."})
    planted["a stage page of its own shape"] = layout_problems({"stages/planted.md": "# planted: no layout\n"})
    planted["a reader's page naming plumbing"] = reader_problems(
        {"docs/stages/planted.md": "Run `./maint/do profile` and read `docs/results/ncu.csv`.\n"})
    try:
        code("05_shuffle", "offset = 8")
        planted["a sentence quoting code the kernel no longer has"] = []
    except DocsError as e:
        planted["a sentence quoting code the kernel no longer has"] = [str(e)]
    planted["a stage page too long to read in one sitting"] = reader_problems(
        {"docs/stages/planted.md": "Word word word word word. " * 201 + "\n" + "| a |\n|---|\n\nx\n\n" * 5})
    planted["a sentence too long to parse, in the evidence"] = reader_problems(
        {"docs/stages/planted.md": 'A word.\n\n<a id="evidence"></a>\n\n' + "word " * 41 + "."})
    for name, found in planted.items():
        print(f"docs self-test: {name}: {'caught: ' + str(found[0]) if found else 'MISSED'}")
    return 0 if all(planted.values()) else 1

def main(a):
    if not importlib.util.find_spec("jinja2"):  # a missing tool, not a wrong page: the check reports skipped
        print("SKIPPED: the docs need Jinja2 (apt-get install python3-jinja2, or pip install jinja2)", file=sys.stderr)
        return 77
    try:
        if a.self_test:
            return self_test()
        if problems := check_structure():  # a page or a result file missing: nothing is rendered
            raise DocsError("\ndocs: ".join(problems + ["nothing was rendered or checked: these come first"]))
        rendered = {out: render(t) for out, t in pages().items()}
    except DocsError as e:
        print(f"docs: {e}", file=sys.stderr)
        return 1
    (check if a.check else write)(rendered, problems)
    print("".join(f"docs: {problem}\n" for problem in problems), end="", file=sys.stderr)
    return 1 if problems else 0
def check(rendered, problems):
    """--check: every page and picture as the templates and results give it, and every claim and link."""
    problems += (check_claims(rendered) + stale_diagrams(IMG) + check_links(rendered) + check_paths(rendered)
                 + reader_problems({out.relative_to(ROOT): t for out, t in rendered.items()}))
    for out, text in rendered.items():
        rel, old = out.relative_to(ROOT), out.read_text() if out.exists() else None
        if old != text:
            delta = difflib.unified_diff((old or "").splitlines(), text.splitlines(), f"{rel} (committed)",
                                         f"{rel} (from templates and results)", n=0, lineterm="")
            problems.append(f"{rel} is missing" if old is None else
                            f"{rel} differs from what the templates and results give:\n" + "\n".join(list(delta)[:30]))
    print("".join(f"docs: not measured yet: {note} (the pages say so; run ./maint/do measure on a GPU)\n"
                  for note in sorted(not_measured)), end="")
    if not problems:
        print(f"docs: {len(rendered)} pages match the templates and results")
def write(rendered, problems):  # the pages and the pictures
    for out, text in rendered.items():
        same = out.exists() and out.read_text() == text
        if not same:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text)
        print(f"{'unchanged' if same else 'wrote'} {out.relative_to(ROOT)}", file=sys.stderr)
    for name, text in (pictures := drawn()).items():
        (IMG / name).write_text(text)
    print(f"drew {', '.join(sorted(pictures))} in docs/img/", file=sys.stderr)
