"""Builds docs/ from docs/templates/ and the result files in docs/results/ (written on a GPU by
`./maint/do measure`). Every number and chart in the docs comes from those files; nothing is typed by hand.

  python3 -m scripts.make_docs           render the pages, draw the charts (charts need matplotlib)
  python3 -m scripts.make_docs --check   fail if a page differs from what the templates and results give,
                                         a stage has no page, a result file does not parse, a chart is
                                         missing or disagrees with its table or the results, a link or
                                         anchor does not resolve, a page names a file the project does not
                                         have, a template types a fact of the GPU or a
                                         comparative word, a page says faster/slower in words the comparison
                                         helpers did not produce, or a page rendered from a synthetic second
                                         GPU (maint/docsgen/synthetic_gpu.py) keeps a fact of the first, says "N×
                                         faster" with N below 1, or states a cause that is false there
                                         (standard library only: this is a CPU test)
  python3 -m scripts.make_docs --self-test   plant such claims and demand that the checks catch each

Templates are Markdown rendered with Jinja2: {{ expression }} placeholders, evaluated with the helpers below, and
{% if condition %} ... {% else %} ... {% endif %} blocks around the sentences that state a cause, with a condition
from the "conditions" section."""
import difflib
import pathlib
import re
import sys
import tempfile

from .diagrams import stale_diagrams, write_diagrams
from .docsgen import synthetic_gpu
from .docsgen.base import (CHARTS, DOCS, DocsError, IMG, meta, NOT_MEASURED, not_measured, ratio, ROOT, rows, state,
                           TEMPLATES, use_results)
from .docsgen.charts import chart_data, chart_vs_table, check_charts, draw_charts
from .docsgen.claims import (check_claims, FACT, guarded_problems, hardware_literals, lint_rendered, lint_template,
                             outside_code)
from .docsgen.code import code
from .docsgen.compare import distinct
from .docsgen.glossary import check_structure, layout_problems, pages
from .docsgen.lengths import length_problems
from .docsgen.links import check_links, check_paths
from .docsgen.plumbing import plumbing_problems
from .docsgen.render import render, render_text
from scripts.stages import reduce_stages

def self_test():
    """Planted claims the checks must catch: a typed GPU fact, a typed comparative, a 'faster' whose ratio turns
    below 1 on the synthetic GPU, and a helper that hard-codes a fact. Exit 0 only if every one is caught."""
    facts = hardware_literals()
    sms, grid = str(meta()["sms"]), next(r["grid"] for r in rows("ladder") if r["regime"] == "stream")
    planted = {
        "a typed SM count": lint_template("planted.md", f"The GPU has {sms} SMs.", facts),
        "a typed grid": lint_template("planted.md", f"The stream grid is {grid} blocks.", facts),
        "a typed comparative": lint_template("planted.md", "03 is faster than 02 in the tree regime.", facts),
        # a's median inside b's range, b's above every one of a's repetitions: told apart from b's side only
        "a difference seen from one side only": [] if distinct(
            {"ms_median": "1.0", "ms_min": "0.9", "ms_max": "1.3"},
            {"ms_median": "1.35", "ms_min": "0.95", "ms_max": "1.4"}) != -1 else ["told apart"],
    }
    real = state.results
    with tempfile.TemporaryDirectory() as tmp:
        synthetic_gpu.write(real, pathlib.Path(tmp))
        use_results(tmp)
        try:
            text = f'03 runs {ratio("ladder_tree", "ms_median", "02_grid_stride", "03_padding")}× faster than 02.'
            planted["'N× faster' from a ratio below 1"] = lint_rendered("planted.md", text)
            text = outside_code("The stream grid is {} blocks.".format(grid))  # a helper returning a constant
            planted["a fact hard-coded in a helper"] = [fact for fact in facts if re.search(FACT.format(re.escape(fact)), text)]
            page, words = synthetic_gpu.GUARDED[1]
            planted_text = f"The top stall says it: {{% if True %}}{words}{{% endif %}}."  # a condition that is no test
            planted["a causal sentence false on the synthetic GPU"] = [
                p for p in guarded_problems(page, planted_text, render_text(planted_text, page), synthetic_gpu.GUARDED)
                if "synthetic GPU" in p]
        finally:
            use_results(real)
    planted["a stage without results"] = stage_without_results(real)
    data = chart_data("ladder.png")
    tree01 = next(m for m in data["marks"] if m["series"] == "tree regime")
    data["marks"].append(dict(tree01, series="stream regime", col=3))  # 01's tree value drawn as a stream bar
    readme = render(TEMPLATES / "README.md")
    planted["a chart that disagrees with its table"] = chart_vs_table("README.md", readme, "ladder.png", data)
    data = chart_data("probe.png")
    data["marks"].pop()
    planted["a chart that leaves out a row of its table"] = chart_vs_table(
        "docs/results.md", render(TEMPLATES / "results.md"), "probe.png", data)
    planted["a broken link"] = check_links({DOCS / "planted.md": "See [the method](methods.md#timing)."})
    planted["a link to a missing anchor"] = check_links({DOCS / "planted.md": "See [timing](method.md#timings)."})
    planted["a file the project does not have"] = check_paths({DOCS / "planted.md": "As `maint/tests/check_sass.py` says."})
    planted["a stage page of its own shape"] = layout_problems({"stages/planted.md": "# planted: no layout\n"})
    planted["a reader's page naming plumbing"] = plumbing_problems(
        {"docs/stages/planted.md": "Run `./maint/do profile` and read `docs/results/ncu.csv`.\n"})
    planted["a sentence quoting code the kernel no longer has"] = quote_problem("05_shuffle", "offset = 8")
    planted["a stage page too long to read in one sitting"] = length_problems(
        {"docs/stages/planted.md": "word " * 1001 + "\n" + "| a |\n|---|\n\nx\n\n" * 5})
    missed = [name for name, found in planted.items() if not found]
    for name, found in planted.items():
        print(f"docs self-test: {name}: {'caught: ' + str(found[0]) if found else 'MISSED'}")
    return 1 if missed else 0


def quote_problem(stage, text):
    """What code() says of a quote the stage's code does not hold ([] if it renders it)."""
    try:
        code(stage, text)
        return []
    except DocsError as e:
        return [str(e)]


def stage_without_results(real):
    """The pages rendered from results without one stage's rows, as when a rung is added: each note of what is not
    measured, where the README says so (empty, and the rendering's error printed, if it dies)."""
    stage = reduce_stages()[len(reduce_stages()) // 2]
    with tempfile.TemporaryDirectory() as tmp:
        for path in real.iterdir():
            text = path.read_text()
            if path.suffix == ".csv":
                text = "\n".join(l for l in text.split("\n") if not l.startswith(stage + ","))
            (pathlib.Path(tmp) / path.name).write_text(text)
        use_results(tmp)
        not_measured.clear()
        try:
            texts = [render(t) for t in pages().values()]
            return [f"{n}, and the README says {NOT_MEASURED}" for n in sorted(not_measured)
                    if NOT_MEASURED in texts[0] + "".join(texts)]
        except Exception as e:  # noqa: BLE001 (what the check must not do is die on it)
            print(f"docs self-test: rendering without {stage}'s results failed: {type(e).__name__}: {e}")
            return []
        finally:
            use_results(real)
            not_measured.clear()


def main(a):
    try:
        import jinja2  # noqa: F401
    except ImportError:  # a missing tool, not a wrong page: the check reports skipped, with this line
        print("SKIPPED: the docs need Jinja2 (apt-get install python3-jinja2, or pip install jinja2)", file=sys.stderr)
        return 77
    try:
        if a.self_test:
            return self_test()
        problems = check_structure()
        rendered = {out: render(t) for out, t in pages().items()}
    except DocsError as e:
        print(f"docs: {e}", file=sys.stderr)
        return 1
    return check(rendered, problems) if a.check else write(rendered)


def check(rendered, problems):
    """--check: every page and picture as the templates and results give it, and every claim, link and chart."""
    problems += (check_claims(rendered) + stale_diagrams(IMG) + check_links(rendered) + check_paths(rendered)
                 + check_charts(rendered)
                 + length_problems({out.relative_to(ROOT): text for out, text in rendered.items()})
                 + plumbing_problems({out.relative_to(ROOT): text for out, text in rendered.items()}))
    for out, text in rendered.items():
        rel = out.relative_to(ROOT)
        if not out.exists():
            problems.append(f"{rel} is missing")
        elif out.read_text() != text:
            delta = list(difflib.unified_diff(out.read_text().splitlines(), text.splitlines(), f"{rel} (committed)",
                                              f"{rel} (from templates and results)", n=0, lineterm=""))
            problems.append(f"{rel} differs from what the templates and results give:\n" + "\n".join(delta[:30]))
    for problem in problems:
        print(f"docs: {problem}", file=sys.stderr)
    for note in sorted(not_measured):
        print(f"docs: not measured yet: {note} (the pages say so; run ./maint/do measure on a GPU)")
    if not problems:
        print(f"docs: {len(rendered)} pages match the templates and results; {len(CHARTS)} charts present")
    return 1 if problems else 0


def write(rendered):
    """The pages, the charts (where matplotlib is) and the pictures."""
    for out, text in rendered.items():
        if out.exists() and out.read_text() == text:
            print(f"unchanged {out.relative_to(ROOT)}", file=sys.stderr)
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
        print(f"wrote {out.relative_to(ROOT)}", file=sys.stderr)
    try:
        draw_charts()
        print(f"drew {', '.join(CHARTS)} in docs/img/", file=sys.stderr)
    except ImportError:
        print("matplotlib is not installed: charts not drawn (pip install matplotlib)", file=sys.stderr)
    print(f"drew {', '.join(write_diagrams(IMG))} in docs/img/", file=sys.stderr)
    remaining = check_structure()  # again: the charts are drawn now
    for problem in remaining:
        print(f"docs: {problem}", file=sys.stderr)
    return 1 if remaining else 0

