"""Every chart drawn from the results passes the layout check ./maint/do docs applies (maint/docsgen/charts.py), and
that check fails on a small figure with each fault planted. Needs matplotlib (exit 77 without it). No GPU."""
import pathlib
import sys
import tempfile
from unittest import mock

from maint.tests import verdict

def planted(plt, fault):
    """A small figure with one fault, or none."""
    fig, ax = plt.subplots(figsize=(4, 3))
    xs = [1, 2, 3, 4, 5]
    ax.plot(xs, [1, 2, 3, 4, 5], color="C0", marker="o", label="one")
    look = dict(color="C0", marker="o", linestyle="--") if fault == "alike" else dict(color="C1", marker="s")
    ys = [1, 2, 3, 4, 5] if fault == "hidden" else [5, 4, 3.5, 2, 1]
    ax.plot(xs, ys, markersize=8, label="two", **look)
    if fault == "outside":
        ax.set_ylim(0, 4.5)
    if fault == "labels":
        ax.set_xticks(xs, [f"a long label {x}" for x in xs])
    if fault == "texts":  # two direct labels on one spot
        ax.text(2, 2, "a label")
        ax.text(2.1, 2, "another label")
    if fault == "bars":  # a level line through a bar's body
        ax.bar([2.5], [4], label="a bar")
        ax.axhline(2.5, color="k", label="a level")
    ax.legend(loc="center" if fault == "legend" else "center left", bbox_to_anchor=None if fault == "legend" else
              (1.02, 0.5))
    fig.tight_layout()
    return fig

FAULTS = {"legend": "legend covers", "alike": "look alike", "hidden": "stacks on", "outside": "outside its axes",
          "labels": "collide", "texts": "overlap", "bars": "crosses the bar"}

def main():
    try:
        import matplotlib
    except ImportError:
        print("SKIPPED: matplotlib is not installed (pip install matplotlib, or apt-get install python3-matplotlib)")
        return 77
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from maint.docsgen import charts
    from maint.docsgen.base import DocsError
    problems = []
    with tempfile.TemporaryDirectory() as tmp, mock.patch.object(charts, "IMG", pathlib.Path(tmp)):
        try:
            charts.draw_charts()
        except DocsError as e:
            problems.append(f"a chart of the results fails its layout check: {e}")
    clean = charts.chart_problems(planted(plt, None))
    if clean:
        problems.append(f"the planted figure without a fault is reported: {clean}")
    for fault, words in FAULTS.items():
        found = charts.chart_problems(planted(plt, fault))
        if not any(words in p for p in found):
            problems.append(f"planted fault '{fault}' not reported (expected '{words}'; got {found})")
    plt.close("all")
    return verdict("charts", problems, f"{len(charts.CHART_SPECS)} charts legible; {len(FAULTS)} planted faults "
                   "reported")

if __name__ == "__main__":
    sys.exit(main())
