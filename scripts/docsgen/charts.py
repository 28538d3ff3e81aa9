"""The charts: their data (written into each PNG and checked against the table it illustrates) and the drawing."""
import json
import re

from ..runner.stages import gemm_stage, ladder_stages, reduce_stages
from .accuracy import accuracy_table
from .base import f, IMG, meta, NOT_MEASURED, pow2, ROOT, rows
from .compare import size_value
from .gemm import fp32_peak, gemm_table, roofline_table
from .tables import ladder_table, probe_table, sweep_table


def finish_log_log(fig, ax, xlabel, ylabel, title, name, xticks=None):
    """Log-2 x axis, log y axis, labels, grid, the legend right of the plot; writes docs/img/<name>."""
    ax.set_xscale("log", base=2)
    if xticks:
        ax.set_xticks(xticks, [str(x) for x in xticks])
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
# marks. ./ladder docs writes the marks into the PNG ("Description"), and --check compares them with the results and
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
            problems.append(f"docs/img/{name} carries no chart data: run ./ladder docs where matplotlib is installed")
        elif json.loads(saved) != json.loads(json.dumps(want)):
            problems.append(f"docs/img/{name} was drawn from other data than the results give now: run ./ladder docs")
        for out, text in rendered.items():
            problems += chart_vs_table(out.relative_to(ROOT), text, name, want)
    return problems


def save_chart(fig, name):
    """Writes docs/img/<name> with the data it was drawn from."""
    import matplotlib.pyplot as plt
    fig.savefig(IMG / name, metadata={"Description": json.dumps(chart_data(name), ensure_ascii=True)})
    plt.close(fig)


def series_of(marks, **match):
    """{series: [(x, y), ...]} of the marks that match, in table order."""
    out = {}
    for m in marks:
        if all(m.get(k) == v for k, v in match.items()):
            out.setdefault(m["series"], []).append((m["x"], m["y"]))
    return out


# A stage's colour and marker on every chart, from its place in the ladder, not from its place in a chart's list.
STAGE_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "h", "<"]


def stage_style(name):
    stage = next((s for s in ladder_stages() if name == s or name.startswith(s + " ")), None)
    if stage is None:
        return {}
    i = ladder_stages().index(stage)
    return dict(color=f"C{i % 10}", marker=STAGE_MARKERS[i % len(STAGE_MARKERS)])


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


# The ladder: a bar per row of the table and regime (none where a stage has no such regime), and its reference rows.
def draw_ladder(plt, title_gpu):
    n_ladder, reps = rows("ladder")[0]["n"], rows("ladder")[0]["reps"]
    data = chart_data("ladder.png")
    fig, ax = plt.subplots(figsize=(10.5, 4.4))
    labels = list(dict.fromkeys(mk["x"] for mk in data["marks"] if mk["series"] != "line"))
    for k, (regime, color) in enumerate([("stream regime", "#1f77b4"), ("tree regime", "#ff7f0e")]):
        pts = series_of(data["marks"], series=regime).get(regime, [])
        ax.bar([labels.index(x) + (k - 0.5) * 0.38 for x, _ in pts], [y for _, y in pts], 0.38, label=regime, color=color)
    styles = iter([dict(color="green", linestyle=":"), dict(color="gray", linestyle="-."),
                   dict(color="purple", linestyle=(0, (1, 3)))] * 2)
    for mk in [mk for mk in data["marks"] if mk["series"] == "line"]:
        ax.axhline(mk["y"], linewidth=1.5, label=f"{mk['label']}: {mk['y']:.0f} GB/s", **next(styles))
    ax.axhline(data["refs"]["theoretical peak"], color="black", linestyle="--", linewidth=1,
               label=f"theoretical peak {data['refs']['theoretical peak']:.0f} GB/s")
    ax.set_xticks(range(len(labels)), [x.replace(" (", "\n(") for x in labels], fontsize=7)
    ax.set_ylabel(f"GB/s (n = {n_ladder} floats)")
    ax.set_title(f"Sum of {n_ladder} floats, median of {reps} reps, L2 flushed ({title_gpu})", fontsize=9)
    ax.legend(fontsize=6, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    save_chart(fig, "ladder.png")


# The size sweep: GB/s against n, and the six largest sizes as % of the theoretical peak.
def draw_sweep(plt, title_gpu):
    data, peak = chart_data("sweep.png"), f(meta()["peak_gbps"])
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [3, 2]})
    series = series_of(data["marks"])
    big = sorted({x for pts in series.values() for x, _ in pts})[-6:]
    for name, pts in series.items():
        style = {"CUB": dict(color="black", linestyle=":", marker="x"),
                 "read-only kernel": dict(color="gray", linestyle="--", marker="+")}.get(name, stage_style(name))
        ax.plot([x for x, _ in pts], [y for _, y in pts], label=name, **style)
        ax2.plot([x for x, _ in pts if x in big], [100 * y / peak for x, y in pts if x in big], label=name, **style)
    ax.axhline(peak, color="gray", linestyle="--", linewidth=1, label="theoretical peak")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("n (floats)")
    ax.set_ylabel("GB/s")
    ax.set_title("GB/s against n, stream regime, L2 flushed")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    ax2.set_xscale("log", base=2)
    ax2.set_xticks(big, [pow2(int(n)) for n in big])
    ax2.set_xlabel("n (floats)")
    ax2.set_ylabel("% of theoretical peak")
    ax2.set_title("the largest sizes")
    ax2.grid(True, alpha=0.3)
    fig.suptitle(title_gpu)
    fig.tight_layout()
    save_chart(fig, "sweep.png")


# The block-size probe; one legend for both panels, below them, covering nothing. Each stage keeps its colour
# and marker in both panels (the stream panel has no 01).
def draw_probe(plt, title_gpu):
    data = chart_data("probe.png")
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
    for t, (ax, regime) in enumerate(zip(axes, ["stream", "tree"])):
        for name, pts in series_of(data["marks"], table=t).items():
            ax.plot([x for x, _ in pts], [y for _, y in pts], markersize=4, label=name, **stage_style(name))
        blocks = sorted({mk["x"] for mk in data["marks"]})
        ax.set_xscale("log", base=2)
        ax.set_xticks(blocks, [str(int(b)) for b in blocks])
        ax.set_xlabel("threads per block")
        ax.set_ylabel("GB/s")
        ax.set_title(f"{regime} regime, n = {rows('probe_' + regime)[0]['n']}")
        ax.grid(True, alpha=0.3)
    handles, labels = axes[1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=7, frameon=False)
    fig.suptitle(f"Block-size probe ({title_gpu})")
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    save_chart(fig, "probe.png")


# GEMM: every kernel of the 16x16 table against size, the FP32 peak as a line.
def draw_gemm(plt, title_gpu):
    data = chart_data("gemm.png")
    fig, ax = plt.subplots(figsize=(8, 4.2))
    fp32 = data["refs"]["FP32 peak"]
    for name, pts in series_of(data["marks"]).items():
        ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=name)
    ax.axhline(fp32, color="black", linestyle="--", linewidth=1, label=f"FP32 peak {fp32:,.0f} GFLOP/s")
    ax.set_ylim(min(mk["y"] for mk in data["marks"]) / 2, fp32 * 2)
    finish_log_log(fig, ax, "M = N = K", "GFLOP/s", f"SGEMM, median of {rows('gemm')[0]['reps']} reps ({title_gpu})",
                   "gemm.png", xticks=sorted({int(mk["x"]) for mk in data["marks"]}))


# Accuracy: relative error against n.
def draw_accuracy(plt, title_gpu):
    data = chart_data("accuracy.png")
    fig, ax = plt.subplots(figsize=(8, 4.4))
    for name, pts in series_of(data["marks"]).items():
        style = {"CPU float loop": dict(color="black", linestyle="--"), "CPU Kahan, float": dict(color="gray", linestyle=":"),
                 "CUB": dict(color="green", linestyle="-.")}.get(name, {})
        ax.plot([x for x, _ in pts], [max(y, 1e-12) for _, y in pts], marker=".", label=name, **style)
    ax.axhline(2.0 ** -24, color="red", linewidth=0.8, label="u = 2^-24 (one rounding)")
    finish_log_log(fig, ax, "n (floats, uniform in [0, 1))", "|result - exact sum| / exact sum",
                   f"Accuracy of the float sum against n ({title_gpu})", "accuracy.png")


# The roofline.
def draw_roofline(plt, title_gpu):
    data = chart_data("roofline.png")
    fig, ax = plt.subplots(figsize=(8, 4.4))
    bw, fp32 = data["refs"]["peak GB/s"], data["refs"]["FP32 peak"]
    xs = [2 ** (i / 4) for i in range(-12, 48)]
    ax.plot(xs, [min(fp32, x * bw) for x in xs], color="black", linewidth=1.5, label="roof: min(FP32 peak, FLOP/B × peak GB/s)")
    for mk in data["marks"]:
        ax.plot([mk["x"]], [mk["y"]], marker="o" if mk["x"] < 1 else "s", linestyle="none", label=mk["label"])
    finish_log_log(fig, ax, "arithmetic intensity (FLOP per byte moved)", "GFLOP/s", f"Roofline ({title_gpu})",
                   "roofline.png")

