#!/usr/bin/env python3
"""Builds docs/ from docs/templates/ and the result files in docs/results/ (written on a GPU by
`./ladder measure`). Every number and chart in the docs comes from those files; nothing is typed by hand.

  python3 scripts/make_docs.py           render the pages, draw the charts (charts need matplotlib)
  python3 scripts/make_docs.py --check   fail if a page differs from what the templates and results give,
                                         a stage has no page, a result file does not parse, or a chart
                                         is missing (standard library only: this is a CPU test)

Templates are Markdown with {{ expression }} placeholders, evaluated with the helpers below.
"""
import argparse
import csv
import difflib
import json
import pathlib
import re
import statistics
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
RESULTS = DOCS / "results"
TEMPLATES = DOCS / "templates"
IMG = DOCS / "img"
sys.path.insert(0, str(ROOT / "scripts"))
from ladder import STAGES, REDUCE, GEMM, REGIMES, ladder_lines, stage_diff, try_lines  # noqa: E402
sys.path.insert(0, str(ROOT / "tests"))
from mutants import MUTANTS  # noqa: E402

# Result files and the columns the pages use: --check fails if one is missing or does not parse.
REQUIRED = {
    "ladder": ["stage", "regime", "n", "block", "grid", "blocks_per_sm", "combine", "check", "exact_check",
               "float_check", "abs_error", "bound", "summation_depth", "ms_median", "gbps", "pct_peak", "cub_ms_median", "cub_gbps",
               "x_cub"],
    "mutants": ["mutant", "stage", "expect", "exit", "verdict", "line"],
    "try_06_float4_kLoadsInFlight": ["variant", "regime", "grid", "check", "ms_median", "gbps", "pct_peak"],
    "try_02_grid_stride_grid": ["variant", "regime", "grid", "check", "ms_median", "gbps", "pct_peak"],
    "multiblock": ["n", "combine", "check", "ms_median", "gbps", "pct_peak", "cub_ms_median", "cub_gbps", "x_cub"],
    "determinism": ["combine", "runs", "distinct_results", "bitwise_identical", "deterministic_by_design", "check"],
    "sweep": ["stage", "n", "gbps", "cub_gbps", "check"],
    "probe_stream": ["stage", "block", "gbps", "check"],
    "probe_tree": ["stage", "block", "gbps", "check"],
    "gemm": ["m", "tile", "pad", "check", "ms_median", "gflops", "pct_cublas", "x_naive", "naive_ms_median",
             "naive_gflops", "cublas_ms_median", "cublas_gflops", "cublas_math", "check_method"],
    "flush": ["l2_flush", "n", "ms_median", "gbps", "pct_peak", "cub_ms_median", "cub_gbps", "cub_pct_peak"],
    "ncu": ["stage", "variant", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "smsp__inst_executed.sum",
            "smsp__inst_executed_op_shared_ld.sum", "dram__bytes_read.sum", "gpu__time_duration.sum"],
}
CHARTS = ["ladder.png", "sweep.png", "probe.png", "gemm.png"]


class DocsError(Exception):
    pass


# ---- the result files --------------------------------------------------------------------------------

_cache = {}


# What the pages call the stream and the tree ladder: each stage's row in that regime (01 runs only the tree
# regime, its one launch, and stands in both; 07 at its default combine, atomic).
LADDER_VIEWS = {"ladder_stream": "stream", "ladder_tree": "tree"}


def ladder_view(regime):
    out = []
    for stage in REDUCE:
        mine = [r for r in rows("ladder") if r["stage"] == stage and r["combine"] in ("relaunch", "atomic")]
        pick = [r for r in mine if r["regime"] == regime] or mine
        out.append(pick[0])
    return out


def rows(name):
    if name in LADDER_VIEWS:
        return ladder_view(LADDER_VIEWS[name])
    if name not in _cache:
        path = RESULTS / f"{name}.csv"
        if not path.exists():
            raise DocsError(f"{path.relative_to(ROOT)} is missing: run ./ladder measure on a GPU")
        with open(path, newline="") as f:
            data = list(csv.DictReader(f))
        if not data:
            raise DocsError(f"{path.relative_to(ROOT)} has no rows")
        missing = [c for c in REQUIRED.get(name, []) if c not in data[0]]
        if missing:
            raise DocsError(f"{path.relative_to(ROOT)} lacks columns {missing}")
        _cache[name] = data
    return _cache[name]


def meta():
    path = RESULTS / "meta.json"
    if not path.exists():
        raise DocsError("docs/results/meta.json is missing: run ./ladder measure on a GPU")
    return json.loads(path.read_text())


def select(name, **match):
    found = [r for r in rows(name) if all(str(r[k]) == str(v) for k, v in match.items())]
    if len(found) != 1:
        raise DocsError(f"{name}: {len(found)} rows match {match}")
    return found[0]


def f(value):
    return float(value)


def num(name, field, fmt=".1f", **match):
    """A number from a result file: num("ladder_stream", "gbps", ".0f", stage="07_multiblock")."""
    return format(f(select(name, **match)[field]), fmt)


def ratio(name, field, a, b, fmt=".2f", key="stage", **match):
    """Row a's field over row b's: ratio("ladder_tree", "ms_median", "02_grid_stride", "03_padding")."""
    return format(f(select(name, **{key: a}, **match)[field]) / f(select(name, **{key: b}, **match)[field]), fmt)


def pct_change(name, field, a, b, key="stage", **match):
    """How much faster b is than a, in percent of a's speed, from their times."""
    ta = f(select(name, **{key: a}, **match)[field])
    tb = f(select(name, **{key: b}, **match)[field])
    return format(100 * (ta / tb - 1), ".0f")


NCU_SHORT = {"conflicts_ld": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
             "conflicts_st": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
             "shared_ld": "smsp__inst_executed_op_shared_ld.sum", "shared_st": "smsp__inst_executed_op_shared_st.sum",
             "instructions": "smsp__inst_executed.sum", "ns": "gpu__time_duration.sum", "dram": "dram__bytes_read.sum"}


def ncu_ratio(stage, variant, a, b, fmt=".2f"):
    r = select("ncu", stage=stage, variant=variant)
    return format(f(r[NCU_SHORT[a]]) / f(r[NCU_SHORT[b]]), fmt)


def ncu(stage, variant, metric, fmt=",.0f"):
    short = {"conflicts_ld": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
             "conflicts_st": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
             "shared_ld": "smsp__inst_executed_op_shared_ld.sum",
             "instructions": "smsp__inst_executed.sum", "ns": "gpu__time_duration.sum",
             "dram": "dram__bytes_read.sum"}
    return format(f(select("ncu", stage=stage, variant=variant)[short.get(metric, metric)]), fmt)


# ---- tables -------------------------------------------------------------------------------------------

def md_table(headers, body, align=None):
    align = align or ["---"] + ["---:"] * (len(headers) - 1)
    out = ["| " + " | ".join(headers) + " |", "| " + " | ".join(align) + " |"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in body]
    return "\n".join(out)


def link(stage, page_dir):
    prefix = {"stages": "", "root": "docs/stages/"}.get(page_dir, "stages/")
    return f"[{stage}]({prefix}{stage}.md)"


def ladder_table(page_dir="."):
    """The table ./ladder run prints: both regimes side by side, 07 at atomic and last-block, and CUB."""
    headers, body, refs = ladder_lines(rows("ladder"))
    out = []
    for cells in body:
        stage = cells[0].split(" ")[0]
        out.append([link(stage, page_dir) + cells[0][len(stage):], *cells[1:]])
    names = {"cub": "CUB `DeviceReduce::Sum`", "read": "[read-only kernel](" + {"stages": "../", "root": "docs/"}.get(
        page_dir, "") + "method.md#speed-of-light)", "copy": "`cudaMemcpy` device to device (read + write)"}
    for key, ref in refs.items():
        out.append([names[key] + " (median of the runs)", "", f"{ref['ms']:.3f}", f"{ref['gbps']:.0f}",
                    f"{ref['pct_peak']:.1f}", f"{ref['pct_read']:.1f}" if key != "copy" else "", "", "", "", "", "", "",
                    "1.00" if key == "cub" else ""])
    headers = ["stage", "check", "stream ms", "GB/s", "% of peak", "% of read", "× prev", "tree ms", "GB/s",
               "% of peak", "% of read", "× prev", "× CUB"]
    return md_table(headers, out)


def stream_grid_line():
    """The stream grid each stage got, as the occupancy API answered."""
    data = [r for r in rows("ladder") if r["regime"] == "stream"]
    grids = ", ".join(f"{r['stage'][:2]}{' ' + r['combine'] if r['combine'] not in ('relaunch', 'atomic') else ''}: "
                      f"{r['grid']} ({r['sms']} × {r['blocks_per_sm']})" for r in data)
    return f"{grids} blocks of {data[0]['block']} threads (SMs × blocks per SM)"


def try_table(name):
    data = rows(name)
    headers, body = try_lines(data, "gflops" in data[0])
    return md_table(headers, body, ["---"] * 2 + ["---:"] * (len(headers) - 2))


def float_error_table():
    body = []
    for r in rows("ladder"):
        bounded = r["float_check"] != "unbounded"
        body.append([r["stage"], r["regime"], r["combine"], r["summation_depth"], r["abs_error"],
                     r["bound"] if bounded else "no bound",
                     f"{f(r['abs_error']) / f(r['bound']):.2g}" if bounded else "", r["exact_check"], r["check"]])
    return md_table(["stage", "regime", "combine", "depth d", "abs error", "bound", "error / bound", "exact check",
                     "verdict"], body, ["---"] * 3 + ["---:"] * 4 + ["---"] * 2)


def mutant_table():
    body = []
    for r in rows("mutants"):
        m = next(m for m in MUTANTS if m.name == r["mutant"])
        how = "racecheck" if m.expect == "racecheck" else "default check"
        body.append([f"`{m.name}`", link(m.stage, "stages"), m.bug, f"`{m.args}`", how, r["verdict"],
                     "`" + r["line"].replace("|", "\\|") + "`"])
    return md_table(["mutant", "stage", "planted bug", "arguments", "caught by", "verdict", "what the stage printed"],
                    body, ["---"] * 7)


def mutants_caught():
    data = rows("mutants")
    return f"{sum(r['verdict'] == 'caught' for r in data)} of {len(data)}"


def stage_table(stage):
    """This stage in both regimes, with the stage before it for comparison."""
    i = REDUCE.index(stage)
    body = []
    for regime in REGIMES:
        for st in ([REDUCE[i - 1]] if i else []) + [stage]:
            r = select(f"ladder_{regime}", stage=st)
            if st == REDUCE[0] and regime == "stream":
                continue  # 01 has no stream regime
            prev = select(f"ladder_{regime}", stage=REDUCE[REDUCE.index(st) - 1]) if REDUCE.index(st) else None
            body.append([regime, st if st != stage else f"**{st}**", r["grid"], f"{f(r['ms_median']):.3f}",
                         f"{f(r['gbps']):.0f}", f"{f(r['pct_peak']):.1f}",
                         "" if prev is None else f"{f(prev['ms_median']) / f(r['ms_median']):.2f}",
                         f"{f(r['x_cub']):.2f}"])
    return md_table(["regime", "stage", "grid", "ms", "GB/s", "% of peak", "× prev", "× CUB"], body,
                    ["---", "---", "---:", "---:", "---:", "---:", "---:", "---:"])


def multiblock_table():
    body = []
    for r in rows("multiblock"):
        body.append([r["n"], f"`{r['combine']}`", r["check"], f"{f(r['ms_median']) * 1e3:.1f}", f"{f(r['gbps']):.0f}",
                     f"{f(r['pct_peak']):.1f}", f"{f(r['cub_ms_median']) * 1e3:.1f}", f"{f(r['cub_gbps']):.0f}",
                     f"{f(r['x_cub']):.2f}"])
    return md_table(["n", "combine", "check", "µs", "GB/s", "% of peak", "CUB µs", "CUB GB/s", "× CUB"], body)


def determinism_table():
    body = [[f"`{r['combine']}`", r["runs"], r["distinct_results"], r.get("min_result", ""), r.get("max_result", ""),
             "yes" if r["bitwise_identical"] == "true" else "no",
             "yes" if r["deterministic_by_design"] == "true" else "no", r["check"]] for r in rows("determinism")]
    return md_table(["combine", "runs", "distinct results", "smallest", "largest", "bitwise identical",
                     "deterministic by design", "every result checked"], body)


def sweep_table(step=2):
    data = rows("sweep")
    stages = list(dict.fromkeys(r["stage"] for r in data))
    sizes = sorted({int(r["n"]) for r in data})
    by = {(r["stage"], int(r["n"])): r for r in data}
    body = []
    for i, n in enumerate(sizes):
        if i % step and n != sizes[-1]:
            continue
        body.append([f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n),
                     *[f"{f(by[(s, n)]['gbps']):.0f}" for s in stages], f"{f(by[(stages[-1], n)]['cub_gbps']):.0f}"])
    return md_table(["n", *stages, "CUB"], body)


def probe_table(regime):
    data = rows(f"probe_{regime}")
    blocks = sorted({int(r["block"]) for r in data})
    body = []
    for stage in dict.fromkeys(r["stage"] for r in data):
        by = {int(r["block"]): f(r["gbps"]) for r in data if r["stage"] == stage}
        best = max(by, key=by.get)
        body.append([stage, *[f"**{by[b]:.0f}**" if b == best else f"{by[b]:.0f}" for b in blocks]])
    return md_table(["stage", *[str(b) for b in blocks]], body)


def gemm_name(r):
    t = int(r["tile"])
    return f"tiled {t}×{t + 1} (padded)" if r["pad"] == "true" else f"tiled {t}×{t}"


def gemm_table(tile="16", sizes=None):
    body = []
    data = [r for r in rows("gemm") if r["tile"] == tile and (sizes is None or r["m"] in sizes)]
    for size in dict.fromkeys(r["m"] for r in data):
        group = [r for r in data if r["m"] == size]
        for r in group:
            body.append([f"{size}³", gemm_name(r), r["check"], f"{f(r['ms_median']):.3f}", f"{f(r['gflops']):.0f}",
                         f"{f(r['pct_cublas']):.1f}", f"{f(r['x_naive']):.2f}"])
        r = group[0]
        body.append([f"{size}³", "naive", r["naive_check"], f"{f(r['naive_ms_median']):.3f}", f"{f(r['naive_gflops']):.0f}",
                     f"{100 * f(r['cublas_ms_median']) / f(r['naive_ms_median']):.1f}", "1.00"])
        body.append([f"{size}³", "cuBLAS SGEMM", r["cublas_check"], f"{f(r['cublas_ms_median']):.3f}",
                     f"{f(r['cublas_gflops']):.0f}", "100.0", f"{f(r['naive_ms_median']) / f(r['cublas_ms_median']):.2f}"])
    return md_table(["M = N = K", "kernel", "check", "ms", "GFLOP/s", "% of cuBLAS", "× naive"], body)


def flush_table():
    body = []
    for r in rows("flush"):
        body.append([f"`{r['l2_flush']}`", r["n"], f"{f(r['ms_median']) * 1e3:.1f}", f"{f(r['gbps']):.0f}",
                     f"{f(r['pct_peak']):.1f}", f"{f(r['cub_ms_median']) * 1e3:.1f}", f"{f(r['cub_gbps']):.0f}",
                     f"{f(r['cub_pct_peak']):.1f}"])
    return md_table(["--flush", "n", "07 µs", "07 GB/s", "07 % of peak", "CUB µs", "CUB GB/s", "CUB % of peak"], body)


def probe_rank(stage, regime, which="best"):
    """The fastest ("best") or slowest ("worst") block size of a stage in the probe."""
    data = [r for r in rows(f"probe_{regime}") if r["stage"] == stage]
    pick = max if which == "best" else min
    return pick(data, key=lambda r: f(r["gbps"]))["block"]


def probe_gbps(stage, regime, block, fmt=".0f"):
    return num(f"probe_{regime}", "gbps", fmt, stage=stage, block=block)


def sweep_best_n(stage):
    n = int(max((r for r in rows("sweep") if r["stage"] == stage), key=lambda r: f(r["pct_peak"]))["n"])
    return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n)


def gemm_extreme(field, pick, fmt=".2f", tile="16", pad="false"):
    return format(pick(f(r[field]) for r in rows("gemm") if r["tile"] == tile and r["pad"] == pad), fmt)


def sweep_max(stage, fmt=".1f"):
    return format(max(f(r["pct_peak"]) for r in rows("sweep") if r["stage"] == stage), fmt)


def ncu_table(cases):
    """cases: list of (stage, variant)."""
    body = []
    for stage, variant in cases:
        r = select("ncu", stage=stage, variant=variant)
        body.append([f"{stage} ({variant})", f"{f(r['l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum']):,.0f}",
                     f"{f(r['l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum']):,.0f}",
                     f"{f(r['smsp__inst_executed_op_shared_ld.sum']):,.0f}", f"{f(r['smsp__inst_executed.sum']):,.0f}",
                     f"{f(r['gpu__time_duration.sum']) / 1e3:.1f}"])
    return md_table(["kernel (first launch)", "bank conflicts, loads", "bank conflicts, stores",
                     "shared-load instructions", "instructions", "µs"], body)


def racecheck():
    text = (RESULTS / "racecheck.txt").read_text().strip()
    return "```\n" + text + "\n```"


def provenance():
    m = meta()
    return (f"Measured on an {m['device']} (compute capability {m['compute_capability']}, {m['sms']} SMs, "
            f"{int(m['l2_bytes']) / 1e6:.1f} MB L2, {f(m['peak_gbps']):.0f} GB/s theoretical from the device "
            f"attributes), driver {m['driver']}, CUDA runtime {m['cuda_runtime']}, nvcc \"{m['nvcc']}\", "
            f"at commit {m['commit']} on {m['date']}, with `{m['command']}`.")


# ---- code ---------------------------------------------------------------------------------------------

def stage_file(stage):
    return ROOT / stage / ("gemm.cu" if (ROOT / stage / "gemm.cu").exists() else "reduce.cu")


def code_lines(stage):
    lines = stage_file(stage).read_text().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("#include"))
    return lines[start:]


def diff(stage):
    """The code this stage adds to the previous reduce stage: exactly what `./ladder diff` prints."""
    i = REDUCE.index(stage)
    if i == 0:
        raise DocsError(f"{stage} has no previous stage")
    prev = REDUCE[i - 1]
    return ("```diff\n" + stage_diff(prev, stage) + "\n```\n\n"
            f"`./ladder diff {prev[:2]} {stage[:2]}` prints exactly this, with the files' own line numbers. It leaves out "
            f"the header comment, which says in words what changed and why; `diff -u {prev}/reduce.cu "
            f"{stage}/reduce.cu` shows that too.")


def excerpt(stage, start, end):
    """Lines of a stage file from the first line containing `start` to the first after it containing `end`."""
    lines = stage_file(stage).read_text().splitlines()
    a = next(i for i, l in enumerate(lines) if start in l)
    b = next(i for i in range(a, len(lines)) if end in lines[i])
    return "```cuda\n" + "\n".join(lines[a:b + 1]) + "\n```"


def img(name, alt, page_dir="."):
    prefix = {"stages": "../", "root": "docs/"}.get(page_dir, "")
    return f"![{alt}]({prefix}img/{name})"


# ---- charts ---------------------------------------------------------------------------------------------

def finish_log_log(fig, ax, xlabel, ylabel, title, name, xticks=None):
    """Log-2 x axis, log y axis, labels, legend, grid; writes docs/img/<name>."""
    import matplotlib.pyplot as plt
    ax.set_xscale("log", base=2)
    if xticks:
        ax.set_xticks(xticks, [str(x) for x in xticks])
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(IMG / name)
    plt.close(fig)


def draw_charts():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m = meta()
    peak = f(m["peak_gbps"])
    title_gpu = f"{m['device']}, CUDA {m['cuda_runtime']}"
    IMG.mkdir(parents=True, exist_ok=True)
    plt.rcParams.update({"figure.dpi": 110, "font.size": 9})

    # The ladder: GB/s per stage in both regimes.
    fig, ax = plt.subplots(figsize=(8, 3.6))
    stages = [r["stage"] for r in rows("ladder_stream")]
    x = range(len(stages))
    for k, (regime, color) in enumerate([("stream", "#1f77b4"), ("tree", "#ff7f0e")]):
        vals = [f(select(f"ladder_{regime}", stage=s)["gbps"]) for s in stages]
        ax.bar([i + (k - 0.5) * 0.38 for i in x], vals, 0.38, label=f"{regime} regime", color=color)
    cub = statistics.median(f(r["cub_gbps"]) for r in rows("ladder_stream"))
    ax.axhline(peak, color="black", linestyle="--", linewidth=1, label=f"theoretical peak {peak:.0f} GB/s")
    ax.axhline(cub, color="green", linestyle=":", linewidth=1.5, label=f"CUB {cub:.0f} GB/s")
    ax.set_xticks(list(x), stages, rotation=20)
    ax.set_ylabel("GB/s (n = 2^28 floats)")
    ax.set_title(f"Sum of 2^28 floats, median of {rows('ladder_stream')[0]['reps']} reps, L2 flushed ({title_gpu})")
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(IMG / "ladder.png")
    plt.close(fig)

    # The size sweep.
    fig, ax = plt.subplots(figsize=(8, 4))
    data = rows("sweep")
    for stage in dict.fromkeys(r["stage"] for r in data):
        pts = sorted((int(r["n"]), f(r["gbps"])) for r in data if r["stage"] == stage)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", label=stage)
    last = list(dict.fromkeys(r["stage"] for r in data))[-1]
    pts = sorted((int(r["n"]), f(r["cub_gbps"])) for r in data if r["stage"] == last)
    ax.plot([p[0] for p in pts], [p[1] for p in pts], color="black", linestyle=":", marker="x", label="CUB")
    ax.axhline(peak, color="gray", linestyle="--", linewidth=1, label="theoretical peak")
    finish_log_log(fig, ax, "n (floats)", "GB/s", f"GB/s against n, stream regime, L2 flushed ({title_gpu})",
                   "sweep.png")

    # The block-size probe.
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=False)
    for ax, regime in zip(axes, ["stream", "tree"]):
        data = rows(f"probe_{regime}")
        for stage in dict.fromkeys(r["stage"] for r in data):
            pts = sorted((int(r["block"]), f(r["gbps"])) for r in data if r["stage"] == stage)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3, label=stage)
        ax.set_xscale("log", base=2)
        ax.set_xticks([64, 128, 256, 512, 1024], ["64", "128", "256", "512", "1024"])
        ax.set_xlabel("threads per block")
        ax.set_ylabel("GB/s")
        ax.set_title(f"{regime} regime, n = 2^28")
        ax.grid(True, alpha=0.3)
    axes[1].legend(fontsize=7)
    fig.suptitle(f"Block-size probe ({title_gpu})")
    fig.tight_layout()
    fig.savefig(IMG / "probe.png")
    plt.close(fig)

    # GEMM.
    fig, ax = plt.subplots(figsize=(7, 3.8))
    data = [r for r in rows("gemm") if r["tile"] == "16"]
    sizes = list(dict.fromkeys(int(r["m"]) for r in data))
    series = {
        "tiled 16×16": [f(r["gflops"]) for r in data if r["pad"] == "false"],
        "tiled 16×17 (padded)": [f(r["gflops"]) for r in data if r["pad"] == "true"],
        "naive": [f(r["naive_gflops"]) for r in data if r["pad"] == "false"],
        "cuBLAS (FP32, no TF32)": [f(r["cublas_gflops"]) for r in data if r["pad"] == "false"],
    }
    for name, vals in series.items():
        ax.plot(sizes, vals, marker="o", label=name)
    finish_log_log(fig, ax, "M = N = K", "GFLOP/s", f"SGEMM, median of {data[0]['reps']} reps ({title_gpu})",
                   "gemm.png", xticks=sizes)


# ---- rendering ------------------------------------------------------------------------------------------

PLACEHOLDER = re.compile(r"\{\{(.+?)\}\}", re.S)


def render(template):
    rel = template.relative_to(TEMPLATES)
    page_dir = "root" if rel.name == "README.md" else (rel.parent.name or ".")
    env = {name: obj for name, obj in globals().items() if callable(obj)}
    env.update(STAGES=STAGES, REDUCE=REDUCE, GEMM=GEMM, format=format, int=int, float=float, len=len,
               min=min, max=max, round=round, str=str)
    env["link"] = lambda stage: link(stage, page_dir)
    env["img"] = lambda name, alt: img(name, alt, page_dir)
    env["ladder_table"] = lambda: ladder_table(page_dir)

    def expand(m):
        try:
            return str(eval(m.group(1), {"__builtins__": {}, **env}))
        except DocsError:
            raise
        except Exception as e:  # a broken placeholder names itself
            raise DocsError(f"{rel}: {{{{{m.group(1).strip()}}}}}: {type(e).__name__}: {e}")

    header = f"<!-- Generated by scripts/make_docs.py from docs/templates/{rel} and docs/results/. Edit the template, then run ./ladder docs. -->\n"
    return header + PLACEHOLDER.sub(expand, template.read_text())


def pages():
    """Output path -> template. README.md renders to the top of the repository, the rest into docs/."""
    return {(ROOT / "README.md" if t.name == "README.md" and t.parent == TEMPLATES else DOCS / t.relative_to(TEMPLATES)): t
            for t in sorted(TEMPLATES.rglob("*.md"))}


def check_structure():
    problems = []
    for stage in STAGES:
        if not (TEMPLATES / "stages" / f"{stage}.md").exists():
            problems.append(f"stage {stage} has no page (docs/templates/stages/{stage}.md)")
    for name in list(REQUIRED) + list(LADDER_VIEWS):
        try:
            rows(name)
        except DocsError as e:
            problems.append(str(e))
    for chart in CHARTS:
        if not (IMG / chart).exists():
            problems.append(f"docs/img/{chart} is missing: run ./ladder docs where matplotlib is installed")
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true", help="compare instead of writing")
    a = p.parse_args()
    try:
        problems = check_structure()
        rendered = {out: render(t) for out, t in pages().items()}
    except DocsError as e:
        print(f"docs: {e}", file=sys.stderr)
        return 1
    if a.check:
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
        if not problems:
            print(f"docs: {len(rendered)} pages match the templates and results; {len(CHARTS)} charts present")
        return 1 if problems else 0
    for out, text in rendered.items():
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
        print(f"wrote {out.relative_to(ROOT)}")
    try:
        draw_charts()
        print(f"drew {', '.join(CHARTS)} in docs/img/")
    except ImportError:
        print("matplotlib is not installed: charts not drawn (pip install matplotlib)", file=sys.stderr)
    remaining = [p for p in check_structure()]
    for problem in remaining:
        print(f"docs: {problem}", file=sys.stderr)
    return 1 if remaining else 0


if __name__ == "__main__":
    sys.exit(main())
