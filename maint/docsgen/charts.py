"""The charts: their data (written into each PNG and checked against the table it illustrates) and the drawing."""
import json
import math
import re

from scripts.stages import gemm_stage, ladder_stages, reduce_stages
from .base import DocsError, f, IMG, meta, NOT_MEASURED, pow2, ROOT, rows, size_value
from .numbers import fp32_peak
from .tables import accuracy_table, gemm_table, ladder_table, probe_table, roofline_table, sweep_table


def finish_log_log(fig, ax, xlabel, ylabel, title, name, xticks=None, ticklabel=str):
    """Log-2 x axis with a tick at each x drawn, log y axis, labels, grid, the legend right of the plot; writes
    docs/img/<name>."""
    ax.set_xscale("log", base=2)
    if xticks:
        ax.set_xticks(xticks, [ticklabel(x) for x in xticks], fontsize=7)
        ax.minorticks_off()
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    save_chart(fig, name)


# Every chart is drawn from the cells of the table it illustrates (the first table after it on its pages; the probe,
# the first two), and nothing else but its reference lines: CHART_SPECS names the table and how its cells become
# marks. ./maint/do docs writes the marks into the PNG ("Description"), and --check compares them with the results and
# with the table on every page that shows the chart.

def parse_tables(text):
    """[(offset, headers, rows)] of every Markdown table in text, cells stripped of links, bold and code marks."""
    out, lines, i = [], text.split("\n"), 0
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"\|\s*:?-{3}", lines[i + 1]):
            block = [lines[i]]
            j = i + 2
            while j < len(lines) and lines[j].startswith("|"):
                block.append(lines[j])
                j += 1
            cells = [[clean_cell(c) for c in re.split(r"(?<!\\)\|", l.strip())[1:-1]] for l in block]
            out.append((starts[i], cells[0], cells[1:]))
            i = j
        else:
            i += 1
    return out


def clean_cell(cell):
    cell = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", cell.strip())
    return cell.replace("**", "").replace("`", "").strip()


def cell_number(cell):
    """A table cell as a number ('2,569' -> 2569, '0.12*' -> 0.12, '2^20' -> 1048576), or None."""
    text = cell.replace(",", "").rstrip("*%").strip()
    if re.fullmatch(r"\d+\^\d+", text):
        return float(size_value(text))
    try:
        return float(text)
    except ValueError:
        return None


def cell_matches(cell, value):
    """Whether a printed cell shows value: equal to the printed precision."""
    text = cell.replace(",", "").rstrip("*%").strip()
    number = cell_number(cell)
    if number is None:
        return False
    if "e" in text.lower():
        mantissa = text.lower().split("e")[0]
        digits = len(mantissa.split(".")[1]) if "." in mantissa else 0
        return abs(value - number) <= 0.5 * 10 ** -digits * 10 ** int(text.lower().split("e")[1]) * 1.0001
    digits = len(text.split(".")[1]) if "." in text else 0
    return abs(value - number) <= 0.5 * 10 ** -digits * 1.0001 + 1e-12


def marks_ladder(tables):
    _, headers, body = tables[0]
    marks = []
    for row in body:
        stage_row = row[0].split(" ")[0] in reduce_stages()
        for col, series in ([(3, "stream regime"), (8, "tree regime")] if stage_row else [(3, "line")]):
            if cell_number(row[col]) is not None:
                marks.append({"table": 0, "row": [row[0]], "col": col, "series": series, "label": row[0],
                              "x": row[0], "y": cell_number(row[col])})
    return marks


def marks_by_column(tables, table=0, first=1):
    """Rows are x (the first cell), columns from `first` on are series: the sweep and the accuracy table."""
    _, headers, body = tables[table]
    return [{"table": table, "row": [row[0]], "col": c, "series": headers[c], "label": headers[c],
             "x": cell_number(row[0]), "y": cell_number(row[c])}
            for row in body for c in range(first, len(headers)) if cell_number(row[c]) is not None]


def marks_probe(tables):
    marks = []
    for t in (0, 1):
        _, headers, body = tables[t]
        marks += [{"table": t, "row": [row[0]], "col": c, "series": row[0], "label": row[0],
                   "x": cell_number(headers[c]), "y": cell_number(row[c])}
                  for row in body for c in range(1, len(headers)) if cell_number(row[c]) is not None]
    return marks


def marks_gemm(tables):
    _, headers, body = tables[0]
    col = headers.index("GFLOP/s")
    return [{"table": 0, "row": row[:2], "col": col, "series": row[1], "label": row[1],
             "x": cell_number(row[0].rstrip("³")), "y": cell_number(row[col])} for row in body]


def marks_roofline(tables):
    _, headers, body = tables[0]
    return [{"table": 0, "row": [row[0]], "col": 2, "xcol": 1, "series": row[0], "label": row[0],
             "x": cell_number(row[1]), "y": cell_number(row[2])} for row in body]


def refs_ladder():
    return {"theoretical peak": round(f(meta()["peak_gbps"]), 1)}


CHART_SPECS = {  # chart: (the table it illustrates, as a page renders it; its marks; its reference lines)
    "ladder.png": (lambda: [ladder_table()], marks_ladder, refs_ladder),
    "sweep.png": (lambda: [sweep_table(step=1)], marks_by_column, refs_ladder),
    "probe.png": (lambda: [probe_table("stream"), probe_table("tree")], marks_probe, lambda: {}),
    "gemm.png": (lambda: [gemm_table(gemm_stage(), tile="16")], marks_gemm, lambda: {"FP32 peak": round(fp32_peak(), 1)}),
    "roofline.png": (lambda: [roofline_table()], marks_roofline,
                     lambda: {"FP32 peak": round(fp32_peak(), 1), "peak GB/s": round(f(meta()["peak_gbps"]), 1)}),
    "accuracy.png": (lambda: [accuracy_table()], marks_by_column, lambda: {"u = 2^-24 (one rounding)": 2.0 ** -24}),
}


def chart_data(name):
    """What a chart draws: its marks, from the cells of its table, and its reference lines."""
    tables_fn, marks_fn, refs_fn = CHART_SPECS[name]
    tables = [parse_tables(t)[0] for t in tables_fn()]
    return {"chart": name, "marks": marks_fn(tables), "refs": refs_fn()}


def png_text(path, key="Description"):
    """A PNG's tEXt chunk (standard library: the docs check runs without matplotlib)."""
    import struct
    data = path.read_bytes()
    pos = 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"tEXt" and body.split(b"\0", 1)[0] == key.encode():
            return body.split(b"\0", 1)[1].decode("latin-1")
        pos += 12 + length
    return None


def chart_vs_table(page, text, name, data):
    """The chart's marks against the table(s) after its image on a page: every mark a cell showing its value, with
    its label, and every value cell of the columns it draws a mark."""
    at = text.find(f"img/{name})")
    if at < 0:
        return []
    n_tables = 1 + max(m["table"] for m in data["marks"]) if data["marks"] else 1
    tables = [t for t in parse_tables(text) if t[0] > at][:n_tables]
    if NOT_MEASURED in text[at:tables[0][0] if tables else len(text)]:
        return []  # the page's table of this chart is not measured yet (a stage without results)
    problems, covered = [], set()
    if len(tables) < n_tables:
        return [f"{page}: {name} is not followed by the table it illustrates"]
    width = max([m["col"] for m in data["marks"]] + [m.get("xcol") or 0 for m in data["marks"]] + [0])
    if any(len(h) <= width for _, h, _ in tables):
        return [f"{page}: the first table after {name} is not the one it illustrates (it has too few columns)"]
    for m in data["marks"]:
        _, headers, body = tables[m["table"]]
        row = next((r for r in body if r[:len(m["row"])] == m["row"]), None)
        if row is None:
            problems.append(f"{page}: {name} draws '{' '.join(m['row'])}', a row its table does not have")
            continue
        covered.add((m["table"], tuple(m["row"]), m["col"]))
        if m["label"] not in (m["row"][-1], headers[m["col"]]):
            problems.append(f"{page}: {name} labels '{' '.join(m['row'])}' as '{m['label']}'")
        if not cell_matches(row[m["col"]], m["y"]):
            problems.append(f"{page}: {name} draws {m['y']:g} for '{' '.join(m['row'])}', "
                            f"{headers[m['col']]}; the table says {row[m['col']] or 'nothing'}")
        if m.get("xcol") is not None and not cell_matches(row[m["xcol"]], m["x"]):
            problems.append(f"{page}: {name} places '{' '.join(m['row'])}' at {m['x']:g}; the table says {row[m['xcol']]}")
    for t, col in {(m["table"], m["col"]) for m in data["marks"]}:
        _, headers, body = tables[t]
        key = len(next(m["row"] for m in data["marks"] if m["table"] == t))
        for row in body:
            if cell_number(row[col]) is not None and (t, tuple(row[:key]), col) not in covered:
                problems.append(f"{page}: the table under {name} has '{' '.join(row[:key])}' ({headers[col]} "
                                f"{row[col]}), which the chart does not draw")
    return problems


def check_charts(rendered):
    """Each chart's PNG holds the data the results give now, and agrees with its table on every page showing it."""
    problems = []
    for name in CHART_SPECS:
        want = chart_data(name)
        path = IMG / name
        saved = png_text(path) if path.exists() else None
        if saved is None:
            problems.append(f"docs/img/{name} carries no chart data: run ./maint/do docs where matplotlib is installed")
        elif json.loads(saved) != json.loads(json.dumps(want)):
            problems.append(f"docs/img/{name} was drawn from other data than the results give now: run ./maint/do docs")
        for out, text in rendered.items():
            problems += chart_vs_table(out.relative_to(ROOT), text, name, want)
    return problems


def save_chart(fig, name):
    """Writes docs/img/<name> with the data it was drawn from, once its layout passes chart_problems()."""
    import matplotlib.pyplot as plt
    problems = chart_problems(fig)
    if problems:
        plt.close(fig)
        raise DocsError(f"docs/img/{name}: " + "; ".join(problems))
    fig.savefig(IMG / name, metadata={"Description": json.dumps(chart_data(name), ensure_ascii=True)})
    plt.close(fig)


def series_of(marks, **match):
    """{series: [(x, y), ...]} of the marks that match, in table order."""
    out = {}
    for m in marks:
        if all(m.get(k) == v for k, v in match.items()):
            out.setdefault(m["series"], []).append((m["x"], m["y"]))
    return out


# ---- one look per series, the same in every chart ----------------------------------------------------------------
# A stage keeps its colour and marker (from its place in the ladder), a combine its line style, and each reference
# its own look: black and greys, none of them a stage's colour, no two alike.
STAGE_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22"]
STAGE_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
COMBINE_LINES = {"atomic": "-", "last-block": "--", "two-pass": ":"}
REFERENCE_STYLES = {
    "CUB": dict(color="black", linestyle=":", marker="x"),
    "cuBLAS": dict(color="black", linestyle=":", marker="x"),  # the vendor library's figure, as CUB's
    "read-only kernel": dict(color="#7f7f7f", linestyle="-", marker="+"),
    "naive": dict(color="#7f7f7f", linestyle="-.", marker="1"),
    "CPU float loop": dict(color="#17becf", linestyle="--", marker="."),
    "CPU Kahan, float": dict(color="#7f7f7f", linestyle=":", marker="."),
}
PEAK = dict(color="black", linestyle="--", linewidth=1)  # a theoretical peak: a line, no marker
COPY = dict(color="#7f7f7f", linestyle="-.", linewidth=1.5)  # the ladder's cudaMemcpy row
ROUNDING = dict(color="#8b0000", linestyle="-.", linewidth=0.8)  # u = 2^-24


def style(label):
    """The look of a series, from its label: a reference's own, else its stage's colour and marker and its combine's
    line ('tiled ...' is 08's kernel, padded dashed)."""
    for name, look in REFERENCE_STYLES.items():
        if label == name or label.startswith((name + " ", name + ",")):
            return dict(look)
    base = label.split(",")[0].strip()
    stage = gemm_stage() if base.startswith("tiled") else next(
        (s for s in ladder_stages() if base == s or base.startswith(s + " ")), None)
    if stage is None:
        raise DocsError(f"the charts have no look for the series '{label}'")
    i = ladder_stages().index(stage) % len(STAGE_COLOURS)
    combine = next((c for c in COMBINE_LINES if f"({c})" in base), None)
    line = COMBINE_LINES[combine] if combine else "--" if "padded" in base else "-"
    return dict(color=STAGE_COLOURS[i], marker=STAGE_MARKERS[i], linestyle=line)


def plot_series(ax, series, scale=lambda y: y):
    """Each series as a line with hollow markers, the k-th smaller than the one before: values that coincide show as
    rings one inside another, so no point hides another."""
    for k, (name, pts) in enumerate(series.items()):
        ax.plot([x for x, _ in pts], [scale(y) for _, y in pts], label=name, markerfacecolor="none",
                markersize=max(11 - 0.8 * k, 3), linewidth=1.2, **style(name))


# ---- what a chart must not do: a legend over data, two series alike, a point hidden or cut off ---------------------

def _points(line):
    """A line's vertices in display coordinates (axhline's too, through its own transform)."""
    import numpy as np
    xy = np.asarray(line.get_xydata(), dtype=float)
    return line.get_transform().transform(xy) if len(xy) else xy


def _legend_problems(fig, axes):
    import numpy as np
    legends = [a.get_legend() for a in axes if a.get_legend()] + list(fig.legends)
    out = []
    for legend in legends:
        box = legend.get_window_extent()
        for ax in axes:
            for line in ax.lines:
                pts = _points(line)
                dense = [pts[i] + t * (pts[i + 1] - pts[i]) for i in range(len(pts) - 1)
                         for t in np.linspace(0, 1, 25)] if line.get_linestyle() not in ("None", "") else list(pts)
                if any(box.contains(x, y) for x, y in dense):
                    out.append(f"the legend covers '{line.get_label()}'")
            for patch in ax.patches:
                if patch.get_window_extent().overlaps(box):
                    out.append(f"the legend covers a bar of '{patch.get_label()}'")
    return out


def _style_problems(axes):
    out, seen = [], {}
    for ax in axes:
        for line in ax.lines:
            label = line.get_label()
            if label.startswith("_"):
                continue
            key = (str(line.get_color()), str(line.get_linestyle()), str(line.get_marker()))
            if seen.setdefault(key, label) != label:
                out.append(f"'{label}' and '{seen[key]}' look alike ({', '.join(key)})")
    return out


def _hidden_problems(axes):
    import numpy as np
    out = []
    for ax in axes:
        frame = ax.get_window_extent()
        marked = [l for l in ax.lines if l.get_marker() not in ("None", "", None) and not l.get_label().startswith("_")]
        for k, line in enumerate(marked):
            pts = _points(line)
            for x, y in pts:
                if not frame.padded(1).contains(x, y):
                    out.append(f"a point of '{line.get_label()}' lies outside its axes")
                    break
            for later in marked[k + 1:]:
                if later.get_markersize() < line.get_markersize() or str(later.get_markerfacecolor()) == "none":
                    continue
                other = _points(later)
                if any(np.hypot(*(other - p).T).min() < 1.0 for p in pts):
                    out.append(f"'{later.get_label()}' hides a point of '{line.get_label()}'")
                    break
    return out


def _label_problems(axes):
    out = []
    for ax in axes:
        labels = [t for t in ax.get_xticklabels() if t.get_text() and t.get_visible()]
        boxes = [t.get_window_extent() for t in labels]
        for k in range(len(boxes) - 1):
            if boxes[k].overlaps(boxes[k + 1]):
                out.append(f"the tick labels '{labels[k].get_text()}' and '{labels[k + 1].get_text()}' collide")
    return out


def chart_problems(fig):
    """What a reader could not read at a glance: a legend over data, two series alike, a hidden point, tick labels
    that collide."""
    fig.canvas.draw()
    axes = fig.get_axes()
    return list(dict.fromkeys(_legend_problems(fig, axes) + _style_problems(axes) + _hidden_problems(axes)
                              + _label_problems(axes)))


def draw_charts():
    """Draws every chart of CHARTS from its data (chart_data), into docs/img/."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    IMG.mkdir(parents=True, exist_ok=True)
    plt.rcParams.update({"figure.dpi": 110, "font.size": 9})
    m = meta()
    context = {"plt": plt, "title_gpu": f"{m['device']}, CUDA {m['cuda_runtime']}"}
    for draw in (draw_ladder, draw_sweep, draw_probe, draw_gemm, draw_accuracy, draw_roofline):
        draw(**context)


# The ladder: a bar per row of the table and regime (none where a stage has no such regime), and its reference rows;
# the legend below the bars.
def draw_ladder(plt, title_gpu):
    n_ladder, reps = rows("ladder")[0]["n"], rows("ladder")[0]["reps"]
    data = chart_data("ladder.png")
    fig, ax = plt.subplots(figsize=(8.5, 5.2))
    labels = list(dict.fromkeys(mk["x"] for mk in data["marks"] if mk["series"] != "line"))
    for k, (regime, color) in enumerate([("stream regime", "#1f77b4"), ("tree regime", "#ff7f0e")]):
        pts = series_of(data["marks"], series=regime).get(regime, [])
        ax.bar([labels.index(x) + (k - 0.5) * 0.38 for x, _ in pts], [y for _, y in pts], 0.38, label=regime, color=color)
    for mk in [mk for mk in data["marks"] if mk["series"] == "line"]:
        look = COPY if mk["label"].startswith("cudaMemcpy") else {
            k: v for k, v in style(mk["label"]).items() if k != "marker"}
        ax.axhline(mk["y"], label=f"{mk['label']}: {mk['y']:.0f} GB/s", **{"linewidth": 1.5, **look})
    ax.axhline(data["refs"]["theoretical peak"], label=f"theoretical peak {data['refs']['theoretical peak']:.0f} GB/s",
               **PEAK)
    ax.set_xticks(range(len(labels)), [x.replace(" (", "\n(") for x in labels], fontsize=7, rotation=30, ha="right")
    ax.set_ylabel(f"GB/s (n = {n_ladder} floats)")
    ax.set_title(f"Sum of {n_ladder} floats, median of {reps} reps, L2 flushed ({title_gpu})", fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.32), ncol=2, frameon=False)
    fig.tight_layout()
    save_chart(fig, "ladder.png")


# The size sweep: GB/s against n, and the six largest sizes as % of the theoretical peak (from 0); one legend right of
# both panels.
def draw_sweep(plt, title_gpu):
    data, peak = chart_data("sweep.png"), f(meta()["peak_gbps"])
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.2), gridspec_kw={"width_ratios": [3, 2]})
    series = series_of(data["marks"])
    big = sorted({x for pts in series.values() for x, _ in pts})[-6:]
    plot_series(ax, series)
    plot_series(ax2, {name: [(x, y) for x, y in pts if x in big] for name, pts in series.items()},
                scale=lambda y: 100 * y / peak)
    ax.axhline(peak, label="theoretical peak", **PEAK)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("n (floats)")
    ax.set_ylabel("GB/s")
    ax.set_title("GB/s against n, stream regime, L2 flushed")
    ax.grid(True, which="both", alpha=0.3)
    ax2.set_xscale("log", base=2)
    ax2.set_xticks(big, [pow2(int(n)) for n in big])
    ax2.minorticks_off()
    ax2.set_ylim(0, 105)
    ax2.set_xlabel("n (floats)")
    ax2.set_ylabel("% of theoretical peak")
    ax2.set_title("the largest sizes")
    ax2.grid(True, alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=7, loc="center left", bbox_to_anchor=(0.8, 0.5), frameon=False)
    fig.suptitle(title_gpu)
    fig.tight_layout(rect=(0, 0, 0.8, 1))
    save_chart(fig, "sweep.png")


# The block-size probe: GB/s from 0; one legend for both panels, below them, covering nothing.
def draw_probe(plt, title_gpu):
    data = chart_data("probe.png")
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.4))
    for t, (ax, regime) in enumerate(zip(axes, ["stream", "tree"])):
        plot_series(ax, series_of(data["marks"], table=t))
        blocks = sorted({mk["x"] for mk in data["marks"]})
        ax.set_xscale("log", base=2)
        ax.set_xticks(blocks, [str(int(b)) for b in blocks])
        ax.minorticks_off()
        ax.set_ylim(0, 1.08 * max(mk["y"] for mk in data["marks"] if mk["table"] == t))
        ax.set_xlabel("threads per block")
        ax.set_ylabel("GB/s")
        ax.set_title(f"{regime} regime, n = {rows('probe_' + regime)[0]['n']}")
        ax.grid(True, alpha=0.3)
    handles, labels = axes[1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=7, frameon=False)
    fig.suptitle(f"Block-size probe ({title_gpu})")
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    save_chart(fig, "probe.png")


# GEMM: every kernel of the 16x16 table against size, the FP32 peak as a line.
def draw_gemm(plt, title_gpu):
    data = chart_data("gemm.png")
    fig, ax = plt.subplots(figsize=(8, 4.2))
    fp32 = data["refs"]["FP32 peak"]
    plot_series(ax, series_of(data["marks"]))
    ax.axhline(fp32, label=f"FP32 peak {fp32:,.0f} GFLOP/s", **PEAK)
    ax.set_ylim(min(mk["y"] for mk in data["marks"]) / 2, fp32 * 2)
    finish_log_log(fig, ax, "M = N = K", "GFLOP/s", f"SGEMM, median of {rows('gemm')[0]['reps']} reps ({title_gpu})",
                   "gemm.png", xticks=sorted({int(mk["x"]) for mk in data["marks"]}))


# Accuracy: relative error against n, a tick at each size run.
def draw_accuracy(plt, title_gpu):
    data = chart_data("accuracy.png")
    fig, ax = plt.subplots(figsize=(8.5, 4.4))
    plot_series(ax, series_of(data["marks"]), scale=lambda y: max(y, 1e-12))
    ax.axhline(2.0 ** -24, label="u = 2^-24 (one rounding)", **ROUNDING)
    finish_log_log(fig, ax, "n (floats, uniform in [0, 1))", "|result - exact sum| / exact sum",
                   f"Accuracy of the float sum against n ({title_gpu})", "accuracy.png",
                   xticks=sorted({int(mk["x"]) for mk in data["marks"]}), ticklabel=lambda n: pow2(int(n)))


# The roofline: each row of its table a point, in its series' look.
def draw_roofline(plt, title_gpu):
    data = chart_data("roofline.png")
    fig, ax = plt.subplots(figsize=(8.5, 4.4))
    bw, fp32 = data["refs"]["peak GB/s"], data["refs"]["FP32 peak"]
    xs = [2 ** (i / 4) for i in range(-12, 48)]
    ax.plot(xs, [min(fp32, x * bw) for x in xs], color="black", linewidth=1.5, label="roof: min(FP32 peak, FLOP/B × peak GB/s)")
    for k, mk in enumerate(data["marks"]):
        look = {key: v for key, v in style(mk["label"]).items() if key != "linestyle"}
        under = sum(abs(math.log(mk["x"] / o["x"])) < 0.1 and abs(math.log(mk["y"] / o["y"])) < 0.1
                    for o in data["marks"][:k])  # earlier points it would cover: a smaller ring inside theirs
        ax.plot([mk["x"]], [mk["y"]], linestyle="none", markerfacecolor="none", markersize=max(12 - 1.4 * under, 4),
                label=mk["label"], **look)
    finish_log_log(fig, ax, "arithmetic intensity (FLOP per byte moved)", "GFLOP/s", f"Roofline ({title_gpu})",
                   "roofline.png")
