"""The charts. Each is drawn from the cells of the table it illustrates (the first table after it on its pages; the
probe's, the first two) and its reference lines, nothing else: CHART_SPECS names the table and how its cells become
marks. ./maint/do docs writes the marks into the PNG ("Description"), and --check compares them with the results and
with the table on every page that shows the chart."""
import json
import math
import re
import struct

from maint import gemm_stage
from scripts.stages import ladder_stages, reduce_stages
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
VARIANT_MARKERS = {"(last-block)": "<", "(two-pass)": ">", "padded": "h"}  # a stage's variant: a marker of its own
REFERENCE_STYLES = {name: dict(color=color, linestyle=line, marker=marker) for name, (color, line, marker) in {
    "CUB": ("black", ":", "x"), "cuBLAS": ("black", ":", "x"),  # the vendor library's figure, as CUB's
    "read-only kernel": ("#7f7f7f", "-", "+"), "naive": ("#7f7f7f", "-.", "1"), "CPU float loop": ("#17becf", "--", "."),
    "CPU Kahan, float": ("#7f7f7f", ":", ".")}.items()}
PEAK = dict(color="black", linestyle="--", linewidth=1)  # a theoretical peak: a line, no marker
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
    marker = next((v for k, v in VARIANT_MARKERS.items() if k in base), STAGE_MARKERS[i])
    return dict(color=STAGE_COLOURS[i], marker=marker, linestyle=line)
def series_of(marks, **match):  # {series: [(x, y), ...]} of the marks that match, in table order
    out = {}
    for m in marks:
        if all(m.get(k) == v for k, v in match.items()):
            out.setdefault(m["series"], []).append((m["x"], m["y"]))
    return out
def small_multiples(plt, marks, step, ylabel, level, scale=lambda y: y, right=None):
    """A panel per series against n, five to a row, in its look and titled with its name, the other series faint grey
    behind it: series whose values coincide each stay visible. level: (y, label, look) of a line in every panel."""
    series, ncols = series_of(marks), 5
    fig, grid = plt.subplots(-(-len(series) // ncols), ncols, figsize=(12, 5.4), sharex=True, sharey=True,
                             squeeze=False)
    for k, ax in enumerate(grid.flat):
        if k >= len(series):
            ax.set_visible(False)
            continue
        name, pts = list(series.items())[k]
        for other in series.values():
            ax.plot([x for x, _ in other], [scale(y) for _, y in other], color="#d9d9d9", linewidth=0.8, label="_other")
        ax.plot([x for x, _ in pts], [scale(y) for _, y in pts], label=name, markersize=4, linewidth=1.2, **style(name))
        ax.set_title(name, fontsize=8, color=style(name)["color"])
        ax.axhline(level[0], label=level[1], **level[2])
        axes(ax, "" if ax.get_subplotspec().is_first_row() else "n (floats)", ylabel if k % ncols == 0 else "", None,
             sorted({m["x"] for m in marks})[::step], lambda n: pow2(int(n)), grid="major")
        if right and (k % ncols == ncols - 1 or k == len(series) - 1):
            right(ax)
    return fig

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
        for line in [l for l in ax.lines if not l.get_label().startswith("_")]:  # colour and marker (or line, if none)
            marker = str(line.get_marker())
            key = (str(line.get_color()), marker if marker not in ("None", "") else str(line.get_linestyle()))
            if seen.setdefault(key, line.get_label()) != line.get_label():
                out.append(f"'{line.get_label()}' and '{seen[key]}' look alike ({', '.join(key)})")
        marked = [l for l in ax.lines if l.get_marker() not in ("None", "", None) and not l.get_label().startswith("_")]
        for k, line in enumerate(marked):
            pts = points(line)
            if any(not ax.get_window_extent().padded(1).contains(x, y) for x, y in pts):
                out.append(f"a point of '{line.get_label()}' lies outside its axes")
            near = 0.4 * line.get_markersize() * fig.dpi / 72  # centres closer than this: one marker over the other
            out += [f"'{l.get_label()}' stacks on a point of '{line.get_label()}'" for l in marked[k + 1:]
                    if any(np.hypot(*(points(l) - p).T).min() < near for p in pts)][:1]
        for line in [l for l in ax.lines if len(l.get_ydata()) > 1 == len(set(l.get_ydata()))]:  # a level line through a bar hides its top
            y = points(line)[0][1]
            out += [f"the line '{line.get_label()}' crosses the bar '{b.get_label()}'" for b in ax.patches
                    if b.get_window_extent().y0 + 1 < y < b.get_window_extent().y1 - 2][:1]
        labels = [t for t in ax.get_xticklabels() if t.get_text() and t.get_visible()]
        out += [f"the tick labels '{a.get_text()}' and '{b.get_text()}' collide" for a, b in zip(labels, labels[1:])
                if a.get_window_extent().overlaps(b.get_window_extent())]
        texts = [t for t in ax.texts if t.get_text() and t.get_visible()]
        out += [f"the labels '{a.get_text()}' and '{b.get_text()}' overlap" for i, a in enumerate(texts)
                for b in texts[i + 1:] if a.get_window_extent().overlaps(b.get_window_extent())]
    return list(dict.fromkeys(out))

def save_chart(fig, name, legend_of=None, title=None):
    """docs/img/<name> with the data it was drawn from, once chart_problems() passes; legend_of's legend on the right."""
    import matplotlib.pyplot as plt
    if legend_of:
        legend_of.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    if title:
        fig.suptitle(title, fontsize=9)
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
    ax.set(xlabel=xlabel, ylabel=ylabel, **{"title": title} if title else {})
    ax.grid(True, which=grid, alpha=0.3)

def draw_charts():  # every chart of CHART_SPECS from its data (chart_data), into docs/img/
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    IMG.mkdir(parents=True, exist_ok=True)
    plt.rcParams.update({"figure.dpi": 110, "font.size": 9})
    gpu, top = f"{meta()['device']}, CUDA {meta()['cuda_runtime']}", f(meta()["peak_gbps"])
    marks = {name: chart_data(name)["marks"] for name in CHART_SPECS}
    # The ladder: a bar per row of the table and regime, a note where a stage has no such regime, each reference row a
    # grey bar of its own right of them (a line would cross the bars it equals), the peak a line above all; the
    # legend below.
    first, fig, ax = rows("ladder")[0], *plt.subplots(figsize=(10.5, 4.8))
    refs = [m for m in marks["ladder.png"] if m["series"] == "line"]
    labels = list(dict.fromkeys(m["x"] for m in marks["ladder.png"] if m["series"] != "line"))
    for k, (regime, color) in enumerate([("stream regime", "#1f77b4"), ("tree regime", "#ff7f0e")]):
        pts = dict(series_of(marks["ladder.png"], series=regime).get(regime, []))
        ax.bar([i + (k - 0.5) * 0.38 for i, x in enumerate(labels) if x in pts], [y for y in pts.values()], 0.38,
               label=regime, color=color)
        for i in [i for i, x in enumerate(labels) if x not in pts]:
            ax.text(i + (k - 0.5) * 0.38, top * 0.02, f"no {regime}", rotation=90, fontsize=7, ha="center", va="bottom")
    for i, (m, hatch) in enumerate(zip(refs, ["//", "..", "xx"])):
        ax.bar([len(labels) + 0.5 + i], [m["y"]], 0.6, color="#d9d9d9", edgecolor="#595959", hatch=hatch, label=f"{m['label']}: {m['y']:.0f} GB/s")
    ax.axhline(round(top, 1), label=f"theoretical peak {round(top, 1):.0f} GB/s", **PEAK)
    ticks = labels + [m["label"].replace(" (median of the runs)", "").replace(" device to device", "") for m in refs]
    ax.set_xticks([*range(len(labels)), *(len(labels) + 0.5 + i for i in range(len(refs)))],
                  [x.replace(" ", "\n", 1) for x in ticks], fontsize=7)
    ax.set_ylim(0, 1.08 * top)
    ax.set_ylabel(f"GB/s (n = {first['n']} floats)")
    ax.set_title(f"Sum of {first['n']} floats, median of {first['reps']} reps, L2 flushed ({gpu})", fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, frameon=False)
    save_chart(fig, "ladder.png")
    # The size sweep: a panel per series (GB/s against n; the peak dashed; % of it on the right).
    fig = small_multiples(plt, marks["sweep.png"], 10, "GB/s", (top, "theoretical peak", PEAK), right=lambda ax: (
        ax.secondary_yaxis("right", functions=(lambda y: 100 * y / top, lambda p: p * top / 100)).set_ylabel(
            "% of peak", fontsize=8)))
    save_chart(fig, "sweep.png", title=f"GB/s against n, stream regime, L2 flushed; dashed: the theoretical peak; "
               f"grey: the other series ({gpu})")
    # The block-size probe: a panel per series and regime (a row each), GB/s from 0.
    fig, grid = plt.subplots(2, 7, figsize=(13, 4.8), sharex=True, sharey="row")
    blocks = sorted({m["x"] for m in marks["probe.png"]})
    probe = [series_of(marks["probe.png"], table=t) for t in (0, 1)]
    for t, (regime, series) in enumerate(zip(["stream", "tree"], probe)):
        for ax, name in zip(grid[t], [n for n in probe[1 - t] if n not in series]):  # a stage without this regime
            ax.axis("off")
            ax.text(0.5, 0.5, f"{name}:\nno {regime} regime", ha="center", transform=ax.transAxes)
        for k, (ax, (name, pts)) in enumerate(zip(grid[t][len(grid[t]) - len(series):], series.items())):
            for other in series.values():
                ax.plot(*zip(*other), color="#d9d9d9", linewidth=0.8, label="_other")
            ax.plot(*zip(*pts), label=name, markersize=4, linewidth=1.2, **style(name))
            ax.set_title(name.replace(" (", "\n("), fontsize=7, color=style(name)["color"])
            axes(ax, "threads per block" if t else "", f"{regime} regime, GB/s" if k == 0 else "", None, blocks[::2],
                 lambda b: str(int(b)), False, "major", fontsize=7)
            ax.set_ylim(0, 1.1 * max(m["y"] for m in marks["probe.png"] if m["table"] == t))
            ax.tick_params(labelleft=k == 0)
    save_chart(fig, "probe.png", title=f"Block-size probe, n = {rows('probe_stream')[0]['n']}; grey: the other stages "
               f"({gpu})")
    # GEMM: every kernel of the 16x16 table against size, the FP32 peak as a line.
    fig, ax = plt.subplots(figsize=(8, 4.2))
    fp32 = round(fp32_peak(), 1)
    for name, pts in series_of(marks["gemm.png"]).items():
        ax.plot(*zip(*pts), label=name, markersize=7, linewidth=1.2, **style(name))
    ax.axhline(fp32, label=f"FP32 peak {fp32:,.0f} GFLOP/s", **PEAK)
    ax.set_ylim(min(m["y"] for m in marks["gemm.png"]) / 2, fp32 * 2)
    axes(ax, "M = N = K", "GFLOP/s", f"SGEMM, median of {rows('gemm')[0]['reps']} reps ({gpu})",
         sorted({int(m["x"]) for m in marks["gemm.png"]}), fontsize=7)
    save_chart(fig, "gemm.png", ax)
    # Accuracy: a panel per series, relative error against n, one rounding (u) dashed.
    fig = small_multiples(plt, marks["accuracy.png"], 5, "relative error", (2.0 ** -24, "u = 2^-24 (one rounding)",
                          ROUNDING), lambda y: max(y, 1e-12))
    save_chart(fig, "accuracy.png", title=f"|result - exact sum| / exact sum against n (uniform in [0, 1)); dash-dot: "
               f"u = 2^-24, one rounding; grey: the other series ({gpu})")
    # The roofline: each row of its table a point, in its series' look.
    fig, ax = plt.subplots(figsize=(8.5, 4.4))
    xs, points = [2 ** (i / 4) for i in range(-12, 48)], marks["roofline.png"]
    ax.plot(xs, [min(fp32, x * round(top, 1)) for x in xs], color="black", linewidth=1.5,
            label="roof: min(FP32 peak, FLOP/B × peak GB/s)")
    for m in points:  # points that would cover each other side by side, half an octave apart
        same = [o for o in points if o["x"] == m["x"] and abs(math.log(o["y"] / m["y"])) < 0.15]
        x = m["x"] * 2 ** (0.5 * (same.index(m) - (len(same) - 1) / 2))
        ax.plot([x], [m["y"]], linestyle="none", markersize=7, label=m["label"],
                **{key: v for key, v in style(m["label"]).items() if key != "linestyle"})
    axes(ax, "arithmetic intensity (FLOP per byte moved; points that coincide drawn side by side)", "GFLOP/s",
         f"Roofline ({gpu})")
    save_chart(fig, "roofline.png", ax)
