"""The charts. Each is drawn from the cells of the table it illustrates (the first table after it on its pages; the
probe's, the first two) and its reference lines, nothing else: CHART_SPECS names the table and how its cells become
marks. ./maint/do docs writes the marks into the PNG ("Description"), and --check compares them with the results and
with the table on every page that shows the chart."""
import json
import math
import re
import struct

from scripts.stages import gemm_stage, ladder_stages, reduce_stages
from .base import DocsError, f, IMG, meta, NOT_MEASURED, pow2, ROOT, rows, size_value
from .numbers import fp32_peak
from .tables import accuracy_table, gemm_table, ladder_table, probe_table, roofline_table, sweep_table

def parse_tables(text):  # [(offset, headers, rows)] of every Markdown table in text, cells without links, bold, code
    out = []
    for m in re.finditer(r"^\|[^\n]*\n\|\s*:?-{3}[^\n]*(?:\n\|[^\n]*)*", text, re.M):
        lines = m.group(0).split("\n")
        cells = [[re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", c.strip()).replace("**", "").replace("`", "").strip()
                  for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]] for line in lines[:1] + lines[2:]]
        out.append((m.start(), cells[0], cells[1:]))
    return out
def number(cell):  # a table cell as a number ('2,569' -> 2569, '0.12*' -> 0.12, '2^20' -> 1048576), or None
    text = cell.replace(",", "").rstrip("*%").strip()
    try:
        return float(size_value(text)) if re.fullmatch(r"\d+\^\d+", text) else float(text)
    except ValueError:
        return None
def mark(table, row, col, series, x, y, label=None, **xcol):  # a bar or a point, and the table cell it shows
    return {"table": table, "row": row, "col": col, **xcol, "series": series, "label": label or series, "x": x, "y": y}
def marks_ladder(tables):  # a bar per row and regime (a reference row a line), at its GB/s
    return [mark(0, [r[0]], col, series, r[0], number(r[col]), r[0]) for r in tables[0][2]
            for col, series in ([(3, "stream regime"), (8, "tree regime")] if r[0].split(" ")[0] in reduce_stages()
                                else [(3, "line")]) if number(r[col]) is not None]
def marks_by_column(tables):  # rows are x (the first cell), each later column a series: the sweep's and accuracy's
    _, headers, body = tables[0]
    return [mark(0, [r[0]], c, headers[c], number(r[0]), number(r[c]))
            for r in body for c in range(1, len(headers)) if number(r[c]) is not None]
def marks_probe(tables):  # each row of both tables a series, the block sizes (the headers) its x
    return [mark(t, [r[0]], c, r[0], number(headers[c]), number(r[c]))
            for t, (_, headers, body) in enumerate(tables[:2]) for r in body for c in range(1, len(headers))
            if number(r[c]) is not None]
def marks_gemm(tables):
    col = tables[0][1].index("GFLOP/s")
    return [mark(0, r[:2], col, r[1], number(r[0].rstrip("³")), number(r[col])) for r in tables[0][2]]
def marks_roofline(tables): return [mark(0, [r[0]], 2, r[0], number(r[1]), number(r[2]), xcol=1) for r in tables[0][2]]
def peak(): return {"theoretical peak": round(f(meta()["peak_gbps"]), 1)}

CHART_SPECS = {  # chart: (the tables it illustrates, as a page renders them; its marks; its reference lines)
    "ladder.png": (lambda: [ladder_table()], marks_ladder, peak),
    "sweep.png": (lambda: [sweep_table(step=1)], marks_by_column, peak),
    "probe.png": (lambda: [probe_table("stream"), probe_table("tree")], marks_probe, lambda: {}),
    "gemm.png": (lambda: [gemm_table(gemm_stage(), tile="16")], marks_gemm, lambda: {"FP32 peak": round(fp32_peak(), 1)}),
    "roofline.png": (lambda: [roofline_table()], marks_roofline,
                     lambda: {"FP32 peak": round(fp32_peak(), 1), "peak GB/s": round(f(meta()["peak_gbps"]), 1)}),
    "accuracy.png": (lambda: [accuracy_table()], marks_by_column, lambda: {"u = 2^-24 (one rounding)": 2.0 ** -24}),
}

def chart_data(name):  # what a chart draws: its marks, from the cells of its table, and its reference lines
    tables, marks, refs = CHART_SPECS[name]
    return {"chart": name, "marks": marks([parse_tables(t)[0] for t in tables()]), "refs": refs()}
def png_text(path, key="Description"):  # a PNG's tEXt chunk (standard library: the docs check runs without matplotlib)
    data, pos = path.read_bytes(), 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        name, _, value = data[pos + 8:pos + 8 + length].partition(b"\0")
        if kind == b"tEXt" and name == key.encode():
            return value.decode("latin-1")
        pos += 12 + length
    return None
def chart_vs_table(page, text, name, data):  # the chart's marks against those of the table(s) after it on a page
    at = text.find(f"img/{name})")
    if at < 0:
        return []
    tables = [t for t in parse_tables(text) if t[0] > at][:1 + max([m["table"] for m in data["marks"]], default=0)]
    if NOT_MEASURED in text[at:tables[0][0] if tables else len(text)]:
        return []  # the page's table of this chart is not measured yet (a stage without results)
    try:
        shown = CHART_SPECS[name][1](tables)
    except (IndexError, ValueError):
        return [f"{page}: {name} is not followed by the table it illustrates"]
    return ([f"{page}: {name} draws {m['y']:g} for '{' '.join(m['row'])}' as {m['series']}, which its table does not "
             f"show" for m in data["marks"] if m not in shown] +
            [f"{page}: the table under {name} has '{' '.join(m['row'])}' ({m['y']:g}), which the chart does not draw"
             for m in shown if m not in data["marks"]])
def check_charts(rendered):  # each chart's PNG holds the data the results give now, and agrees with its tables
    problems = []
    for name in CHART_SPECS:
        want, path = chart_data(name), IMG / name
        saved = png_text(path) if path.exists() else None
        if saved is None:
            problems.append(f"docs/img/{name} carries no chart data: run ./maint/do docs where matplotlib is installed")
        elif json.loads(saved) != json.loads(json.dumps(want)):
            problems.append(f"docs/img/{name} was drawn from other data than the results give now: run ./maint/do docs")
        problems += [p for out, text in rendered.items() for p in chart_vs_table(out.relative_to(ROOT), text, name, want)]
    return problems

# ---- one look per series, the same in every chart ----------------------------------------------------------------
# A stage keeps its colour and marker (from its place in the ladder), a combine its line style, and each reference
# its own look: black and greys, none of them a stage's colour, no two alike.
STAGE_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22"]
STAGE_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
COMBINE_LINES = {"atomic": "-", "last-block": "--", "two-pass": ":"}
REFERENCE_STYLES = {name: dict(color=color, linestyle=line, marker=marker) for name, (color, line, marker) in {
    "CUB": ("black", ":", "x"), "cuBLAS": ("black", ":", "x"),  # the vendor library's figure, as CUB's
    "read-only kernel": ("#7f7f7f", "-", "+"), "naive": ("#7f7f7f", "-.", "1"), "CPU float loop": ("#17becf", "--", "."),
    "CPU Kahan, float": ("#7f7f7f", ":", ".")}.items()}
PEAK = dict(color="black", linestyle="--", linewidth=1)  # a theoretical peak: a line, no marker
COPY = dict(color="#7f7f7f", linestyle="-.", linewidth=1.5)  # the ladder's cudaMemcpy row
ROUNDING = dict(color="#8b0000", linestyle="-.", linewidth=0.8)  # u = 2^-24

def style(label):
    """A reference's own look, or its stage's colour and marker and its combine's line ('tiled ...': 08, padded dashed)."""
    for name, look in REFERENCE_STYLES.items():
        if label == name or label.startswith((name + " ", name + ",")):
            return dict(look)
    base = label.split(",")[0].strip()
    stage = gemm_stage() if base.startswith("tiled") else next(
        (s for s in ladder_stages() if base == s or base.startswith(s + " ")), None)
    if stage is None:
        raise DocsError(f"the charts have no look for the series '{label}'")
    i = ladder_stages().index(stage) % len(STAGE_COLOURS)
    line = next((COMBINE_LINES[c] for c in COMBINE_LINES if f"({c})" in base), "--" if "padded" in base else "-")
    return dict(color=STAGE_COLOURS[i], marker=STAGE_MARKERS[i], linestyle=line)
def series_of(marks, **match):  # {series: [(x, y), ...]} of the marks that match, in table order
    out = {}
    for m in marks:
        if all(m.get(k) == v for k, v in match.items()):
            out.setdefault(m["series"], []).append((m["x"], m["y"]))
    return out
def plot_series(ax, series, scale=lambda y: y):
    """Each series a line of hollow markers, each smaller than the last: values that coincide show as nested rings."""
    for k, (name, pts) in enumerate(series.items()):
        ax.plot([x for x, _ in pts], [scale(y) for _, y in pts], label=name, markerfacecolor="none",
                markersize=max(11 - 0.8 * k, 3), linewidth=1.2, **style(name))

# ---- what a chart must not do: a legend over data, two series alike, a point hidden or cut off ---------------------
def chart_problems(fig):
    """What a reader could not read: a legend over data, two series alike, a hidden point, tick labels that collide."""
    import numpy as np
    fig.canvas.draw()
    axes, out, seen = fig.get_axes(), [], {}

    def points(line):  # a line's vertices in display coordinates (axhline's too, through its own transform)
        xy = np.asarray(line.get_xydata(), dtype=float)
        return line.get_transform().transform(xy) if len(xy) else xy
    for legend in [a.get_legend() for a in axes if a.get_legend()] + list(fig.legends):
        box = legend.get_window_extent()
        for ax in axes:
            for line in ax.lines:
                pts = points(line)
                if line.get_linestyle() not in ("None", ""):
                    pts = [pts[i] + t * (pts[i + 1] - pts[i]) for i in range(len(pts) - 1) for t in np.linspace(0, 1, 25)]
                if any(box.contains(x, y) for x, y in pts):
                    out.append(f"the legend covers '{line.get_label()}'")
            out += [f"the legend covers a bar of '{p.get_label()}'" for p in ax.patches if p.get_window_extent().overlaps(box)]
    for ax in axes:
        for line in [l for l in ax.lines if not l.get_label().startswith("_")]:
            key = (str(line.get_color()), str(line.get_linestyle()), str(line.get_marker()))
            if seen.setdefault(key, line.get_label()) != line.get_label():
                out.append(f"'{line.get_label()}' and '{seen[key]}' look alike ({', '.join(key)})")
        marked = [l for l in ax.lines if l.get_marker() not in ("None", "", None) and not l.get_label().startswith("_")]
        for k, line in enumerate(marked):
            pts = points(line)
            if any(not ax.get_window_extent().padded(1).contains(x, y) for x, y in pts):
                out.append(f"a point of '{line.get_label()}' lies outside its axes")
            hiders = [l for l in marked[k + 1:] if l.get_markersize() >= line.get_markersize() and  # filled, as large
                      str(l.get_markerfacecolor()) != "none" and any(np.hypot(*(points(l) - p).T).min() < 1.0 for p in pts)]
            out += [f"'{l.get_label()}' hides a point of '{line.get_label()}'" for l in hiders[:1]]
        labels = [t for t in ax.get_xticklabels() if t.get_text() and t.get_visible()]
        out += [f"the tick labels '{a.get_text()}' and '{b.get_text()}' collide" for a, b in zip(labels, labels[1:])
                if a.get_window_extent().overlaps(b.get_window_extent())]
    return list(dict.fromkeys(out))

def save_chart(fig, name, legend_of=None):
    """docs/img/<name> with the data it was drawn from, once chart_problems() passes; legend_of's legend on the right."""
    import matplotlib.pyplot as plt
    if legend_of:
        legend_of.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
        fig.tight_layout()
    problems = chart_problems(fig)
    if not problems:
        fig.savefig(IMG / name, metadata={"Description": json.dumps(chart_data(name), ensure_ascii=True)})
    plt.close(fig)
    if problems:
        raise DocsError(f"docs/img/{name}: " + "; ".join(problems))
def axes(ax, xlabel, ylabel, title, xticks=None, ticklabel=str, logy=True, grid="both", **tick_font):
    """A log-2 x axis (a tick at each of xticks), a log (or linear) y axis, labels and a grid."""
    ax.set_xscale("log", base=2)
    if xticks:
        ax.set_xticks(xticks, [ticklabel(x) for x in xticks], **tick_font)
        ax.minorticks_off()
    if logy:
        ax.set_yscale("log")
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    ax.grid(True, which=grid, alpha=0.3)

def draw_charts():  # every chart of CHARTS from its data (chart_data), into docs/img/
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    IMG.mkdir(parents=True, exist_ok=True)
    plt.rcParams.update({"figure.dpi": 110, "font.size": 9})
    gpu, top = f"{meta()['device']}, CUDA {meta()['cuda_runtime']}", f(meta()["peak_gbps"])
    marks = {name: chart_data(name)["marks"] for name in CHART_SPECS}
    # The ladder: a bar per row of the table and regime (none where a stage has no such regime), and its reference
    # rows; the legend below the bars.
    first, fig, ax = rows("ladder")[0], *plt.subplots(figsize=(8.5, 5.2))
    labels = list(dict.fromkeys(m["x"] for m in marks["ladder.png"] if m["series"] != "line"))
    for k, (regime, color) in enumerate([("stream regime", "#1f77b4"), ("tree regime", "#ff7f0e")]):
        pts = series_of(marks["ladder.png"], series=regime).get(regime, [])
        ax.bar([labels.index(x) + (k - 0.5) * 0.38 for x, _ in pts], [y for _, y in pts], 0.38, label=regime, color=color)
    for m in [m for m in marks["ladder.png"] if m["series"] == "line"]:
        look = COPY if m["label"].startswith("cudaMemcpy") else {k: v for k, v in style(m["label"]).items() if k != "marker"}
        ax.axhline(m["y"], label=f"{m['label']}: {m['y']:.0f} GB/s", **{"linewidth": 1.5, **look})
    ax.axhline(round(top, 1), label=f"theoretical peak {round(top, 1):.0f} GB/s", **PEAK)
    ax.set_xticks(range(len(labels)), [x.replace(" (", "\n(") for x in labels], fontsize=7, rotation=30, ha="right")
    ax.set_ylabel(f"GB/s (n = {first['n']} floats)")
    ax.set_title(f"Sum of {first['n']} floats, median of {first['reps']} reps, L2 flushed ({gpu})", fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.32), ncol=2, frameon=False)
    fig.tight_layout()
    save_chart(fig, "ladder.png")
    # The size sweep: GB/s against n, and the six largest sizes as % of the theoretical peak (from 0); one legend
    # right of both panels.
    series = series_of(marks["sweep.png"])
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.2), gridspec_kw={"width_ratios": [3, 2]})
    big = sorted({x for pts in series.values() for x, _ in pts})[-6:]
    plot_series(ax, series)
    plot_series(ax2, {name: [(x, y) for x, y in pts if x in big] for name, pts in series.items()}, lambda y: 100 * y / top)
    ax.axhline(top, label="theoretical peak", **PEAK)
    axes(ax, "n (floats)", "GB/s", "GB/s against n, stream regime, L2 flushed")
    axes(ax2, "n (floats)", "% of theoretical peak", "the largest sizes", big, lambda n: pow2(int(n)), False, "major")
    ax2.set_ylim(0, 105)
    fig.legend(*ax.get_legend_handles_labels(), fontsize=7, loc="center left", bbox_to_anchor=(0.8, 0.5), frameon=False)
    fig.suptitle(gpu)
    fig.tight_layout(rect=(0, 0, 0.8, 1))
    save_chart(fig, "sweep.png")
    # The block-size probe: GB/s from 0; one legend for both panels, below them, covering nothing.
    fig, panels = plt.subplots(1, 2, figsize=(10, 4.4))
    for t, (ax, regime) in enumerate(zip(panels, ["stream", "tree"])):
        plot_series(ax, series_of(marks["probe.png"], table=t))
        axes(ax, "threads per block", "GB/s", f"{regime} regime, n = {rows('probe_' + regime)[0]['n']}",
             sorted({m["x"] for m in marks["probe.png"]}), lambda b: str(int(b)), False, "major")
        ax.set_ylim(0, 1.08 * max(m["y"] for m in marks["probe.png"] if m["table"] == t))
    fig.legend(*panels[1].get_legend_handles_labels(), loc="lower center", ncol=4, fontsize=7, frameon=False)
    fig.suptitle(f"Block-size probe ({gpu})")
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    save_chart(fig, "probe.png")
    # GEMM: every kernel of the 16x16 table against size, the FP32 peak as a line.
    fig, ax = plt.subplots(figsize=(8, 4.2))
    fp32 = round(fp32_peak(), 1)
    plot_series(ax, series_of(marks["gemm.png"]))
    ax.axhline(fp32, label=f"FP32 peak {fp32:,.0f} GFLOP/s", **PEAK)
    ax.set_ylim(min(m["y"] for m in marks["gemm.png"]) / 2, fp32 * 2)
    axes(ax, "M = N = K", "GFLOP/s", f"SGEMM, median of {rows('gemm')[0]['reps']} reps ({gpu})",
         sorted({int(m["x"]) for m in marks["gemm.png"]}), fontsize=7)
    save_chart(fig, "gemm.png", ax)
    # Accuracy: relative error against n, a tick at each size run.
    fig, ax = plt.subplots(figsize=(8.5, 4.4))
    plot_series(ax, series_of(marks["accuracy.png"]), lambda y: max(y, 1e-12))
    ax.axhline(2.0 ** -24, label="u = 2^-24 (one rounding)", **ROUNDING)
    axes(ax, "n (floats, uniform in [0, 1))", "|result - exact sum| / exact sum", f"Accuracy of the float sum against n "
         f"({gpu})", sorted({int(m["x"]) for m in marks["accuracy.png"]}), lambda n: pow2(int(n)), fontsize=7)
    save_chart(fig, "accuracy.png", ax)
    # The roofline: each row of its table a point, in its series' look (a smaller ring inside an earlier one it covers).
    fig, ax = plt.subplots(figsize=(8.5, 4.4))
    xs, points = [2 ** (i / 4) for i in range(-12, 48)], marks["roofline.png"]
    ax.plot(xs, [min(fp32, x * round(top, 1)) for x in xs], color="black", linewidth=1.5,
            label="roof: min(FP32 peak, FLOP/B × peak GB/s)")
    for k, m in enumerate(points):
        under = sum(abs(math.log(m["x"] / o["x"])) < 0.1 and abs(math.log(m["y"] / o["y"])) < 0.1 for o in points[:k])
        ax.plot([m["x"]], [m["y"]], linestyle="none", markerfacecolor="none", markersize=max(12 - 1.4 * under, 4),
                label=m["label"], **{key: v for key, v in style(m["label"]).items() if key != "linestyle"})
    axes(ax, "arithmetic intensity (FLOP per byte moved)", "GFLOP/s", f"Roofline ({gpu})")
    save_chart(fig, "roofline.png", ax)
