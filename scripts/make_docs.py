#!/usr/bin/env python3
"""Builds docs/ from docs/templates/ and the result files in docs/results/ (written on a GPU by
`./ladder measure`). Every number and chart in the docs comes from those files; nothing is typed by hand.

  python3 scripts/make_docs.py           render the pages, draw the charts (charts need matplotlib)
  python3 scripts/make_docs.py --check   fail if a page differs from what the templates and results give,
                                         a stage has no page, a result file does not parse, a chart is
                                         missing, a template types a fact of the GPU or a comparative word,
                                         or a page rendered from a synthetic second GPU (tests/
                                         synthetic_gpu.py) keeps a fact of the first or says "N× faster"
                                         with N below 1 (standard library only: this is a CPU test)
  python3 scripts/make_docs.py --self-test   plant such claims and demand that the checks catch each

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
from ladder import STAGES, REDUCE, GEMM, REGIMES, ladder_lines, stage_diff, try_lines, experiments, patch_target  # noqa: E402
sys.path.insert(0, str(ROOT / "tests"))
from mutants import MUTANTS  # noqa: E402

# Result files and the columns the pages use: --check fails if one is missing or does not parse.
REQUIRED = {
    "ladder": ["stage", "regime", "n", "block", "grid", "blocks_per_sm", "combine", "check", "exact_check",
               "read_ms_median", "read_gbps", "pct_read", "copy_gbps", "fp32_peak_gflops",
               "float_check", "abs_error", "bound", "summation_depth", "ms_median", "gbps", "pct_peak", "cub_ms_median", "cub_gbps",
               "x_cub"],
    "mutants": ["mutant", "stage", "expect", "exit", "verdict", "line"],
    "try_06_float4_kLoadsInFlight": ["variant", "regime", "grid", "check", "ms_median", "gbps", "pct_peak"],
    "try_02_grid_stride_grid": ["variant", "regime", "grid", "check", "ms_median", "gbps", "pct_peak"],
    "multiblock": ["n", "combine", "check", "ms_median", "gbps", "pct_peak", "cub_ms_median", "cub_gbps", "x_cub"],
    "determinism": ["n", "combine", "runs", "distinct_results", "min_result", "max_result", "spread_ulps",
                    "max_abs_error", "reference", "bitwise_identical", "deterministic_by_design", "check"],
    "accuracy": ["stage", "n", "regime", "result", "reference", "abs_error", "bound", "summation_depth", "check"],
    "accuracy_cpu": ["n", "exact", "float_loop", "float_loop_error", "kahan_float", "kahan_float_error"],
    "sweep": ["stage", "n", "gbps", "cub_gbps", "check", "cub_result", "cub_abs_error", "reference"],
    "probe_stream": ["stage", "block", "gbps", "check"],
    "probe_tree": ["stage", "block", "gbps", "check"],
    "gemm": ["m", "tile", "pad", "check", "ms_median", "gflops", "pct_cublas", "x_naive", "naive_ms_median",
             "naive_gflops", "cublas_ms_median", "cublas_gflops", "cublas_math", "check_method", "pct_fp32_peak",
             "cublas_pct_fp32_peak", "fp32_peak_gflops"],
    "flush": ["l2_flush", "n", "ms_median", "gbps", "pct_peak", "cub_ms_median", "cub_gbps", "cub_pct_peak"],
    "combine_tree": ["block", "combine", "grid", "check", "ms_median", "gbps"],
    "ncu": ["stage", "variant", "stall_1", "stall_1_per_issue", "launch__registers_per_thread",
            "sm__warps_active.avg.pct_of_peak_sustained_active",
            "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "smsp__inst_executed.sum",
            "smsp__inst_executed_op_shared_ld.sum", "dram__bytes_read.sum", "gpu__time_duration.sum"],
}
CHARTS = ["ladder.png", "sweep.png", "probe.png", "gemm.png", "roofline.png", "accuracy.png"]


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


# ---- comparisons: the only place a page's comparative words come from ----------------------------------------

def _times(r, prefix=""):
    median = f(r[prefix + "ms_median"])
    return median, f(r.get(prefix + "ms_min") or median), f(r.get(prefix + "ms_max") or median)


def compare_rows(a, b, other=None, a_prefix="", b_prefix=""):
    """How row b's median time compares with row a's, in words that agree with the numbers: 'N× faster than
    <other>', 'N× slower than <other>', or 'as fast as <other> (1.00×)'; when the two runs' min-max ranges overlap,
    it says so, since the repetitions then cannot tell the two apart."""
    ma, lo_a, hi_a = _times(a, a_prefix)
    mb, lo_b, hi_b = _times(b, b_prefix)
    r = ma / mb
    tail = f" than {other}" if other else ""
    if f"{r:.2f}" == "1.00" or f"{1 / r:.2f}" == "1.00":
        return (f"as fast as {other}" if other else "the same speed") + " (1.00×)"
    words = f"{r:.2f}× faster{tail}" if r > 1 else f"{1 / r:.2f}× slower{tail}"
    if lo_a <= hi_b and lo_b <= hi_a:
        words += " (within the runs' min–max spread)"
    return words


def speedup(name, field, a, b, key="stage", other=None, **match):
    """Row b against row a: speedup("ladder_tree", "ms_median", "02_grid_stride", "03_padding", other="02")."""
    assert field == "ms_median"
    return compare_rows(select(name, **{key: a}, **match), select(name, **{key: b}, **match), other)


def than_cub(stage, regime="stream"):
    """A ladder row against CUB timed in the same process."""
    r = select(f"ladder_{regime}", stage=stage)
    return compare_rows(r, r, "CUB", a_prefix="cub_")


def which(pred, yes, no):
    """A word chosen by the data: which(x > y, "above", "below")."""
    return yes if pred else no


NCU_SHORT = {"conflicts_ld": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
             "conflicts_st": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
             "shared_ld": "smsp__inst_executed_op_shared_ld.sum", "shared_st": "smsp__inst_executed_op_shared_st.sum",
             "instructions": "smsp__inst_executed.sum", "ns": "gpu__time_duration.sum", "dram": "dram__bytes_read.sum"}


NCU_SHORT.update({
    "dram_pct": "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "mem_pct": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "sm_pct": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "occupancy": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "theoretical_occupancy": "sm__maximum_warps_per_active_cycle_pct",
    "regs": "launch__registers_per_thread",
    "threads": "smsp__thread_inst_executed_per_inst_executed.ratio",
    "pred_on": "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio",
    "divergent": "smsp__sass_branch_targets_threads_divergent.sum",
    "wavefronts_ld": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "wavefronts_st": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "fma_pct": "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "tensor_pct": "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "ffma": "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
})


def size_value(text):
    """'2^24' or '16777216' -> 16777216."""
    base, _, exp = str(text).partition("^")
    return int(base) ** int(exp) if exp else int(base)


def median_of(name, field):
    return statistics.median(f(r[field]) for r in rows(name))


def ncu_value(stage, variant, metric):
    return f(select("ncu", stage=stage, variant=variant)[NCU_SHORT.get(metric, metric)])


def ncu_change(stage_a, stage_b, variant, metric):
    """How much metric falls (or rises) from stage a to stage b, in words: '16% fewer' / '3% more'."""
    a, b = ncu_value(stage_a, variant, metric), ncu_value(stage_b, variant, metric)
    pct = 100 * (b - a) / a
    return f"{abs(pct):.0f}% {'fewer' if pct < 0 else 'more'}"


def stalls(stage, variant, k=3):
    """The top warp stall reasons of a profiled kernel, with warp-cycles stalled per issued instruction."""
    r = select("ncu", stage=stage, variant=variant)
    return ", ".join(f"`{r[f'stall_{i}']}` ({f(r[f'stall_{i}_per_issue']):.1f})" for i in range(1, k + 1)
                     if r.get(f"stall_{i}"))


def stall_value(stage, variant, reason):
    """Warps stalled for one reason per issued instruction, if it is among the top stalls kept; else 0."""
    r = select("ncu", stage=stage, variant=variant)
    if f"stall_{reason}" not in r:
        raise DocsError(f"ncu.csv has no column stall_{reason}: run ./ladder profile")
    return f(r[f"stall_{reason}"])


def largest_step(regime):
    """The stage with the largest × prev in a regime (02 against 01's only launch in the stream regime)."""
    best, best_r = None, 0
    for i in range(1, len(REDUCE)):
        prev = select(f"ladder_{regime}", stage=REDUCE[i - 1])
        r = f(prev["ms_median"]) / f(select(f"ladder_{regime}", stage=REDUCE[i])["ms_median"])
        if r > best_r:
            best, best_r = REDUCE[i], r
    return best


def top_stall(stage, variant):
    return "`" + select("ncu", stage=stage, variant=variant)["stall_1"] + "`"


PROFILE_COLUMNS = [("µs", "ns", lambda v: f"{v / 1e3:.1f}"), ("DRAM % of peak", "dram_pct", lambda v: f"{v:.1f}"),
                   ("achieved occupancy %", "occupancy", lambda v: f"{v:.1f}"), ("registers", "regs", lambda v: f"{v:.0f}"),
                   ("warp instructions", "instructions", lambda v: f"{v:,.0f}"),
                   ("threads on per instruction", "pred_on", lambda v: f"{v:.1f}"),
                   ("shared-load wavefronts", "wavefronts_ld", lambda v: f"{v:,.0f}"),
                   ("bank conflicts (ld + st)", None, None)]


def profile_table(cases):
    """Nsight Compute's view of the first launch of each case [(stage, variant)], as ./ladder profile saved it."""
    body = []
    for stage, variant in cases:
        r = select("ncu", stage=stage, variant=variant)
        cells = [f"{stage} ({variant})"]
        for _, short, fmt_ in PROFILE_COLUMNS:
            if short is None:
                cells.append(f"{f(r[NCU_SHORT['conflicts_ld']]) + f(r[NCU_SHORT['conflicts_st']]):,.0f}")
            else:
                cells.append(fmt_(f(r[NCU_SHORT[short]])))
        cells.append(stalls(stage, variant))
        body.append(cells)
    return md_table(["kernel (first launch)", *[c[0] for c in PROFILE_COLUMNS], "top stalls (warp-cycles per issue)"], body)


def profile_command(stage, variant):
    """The command that repeats one profile row, in a code block."""
    from ladder import profile_command as command
    size = select("ncu", stage=stage, variant=variant)["n_or_size"]
    return "```\n" + command(stage, variant, size) + "\n```"


def per_block_ns(stage, block, regime="tree"):
    """Time per block of a probe row: median ms / (n / block), in ns."""
    r = select(f"probe_{regime}", stage=stage, block=block)
    return f(r["ms_median"]) * 1e6 / (int(r["n"]) / int(block))


def per_block_range(stages, block):
    vals = [per_block_ns(s, block) for s in stages]
    lo, hi = f"{min(vals):.2f}", f"{max(vals):.2f}"
    return f"{lo} ns" if lo == hi else f"{lo}–{hi} ns"


def combine_tree_table():
    body = []
    for r in rows("combine_tree"):
        blocks = int(r["grid"])
        body.append([r["block"], f"`{r['combine']}`", f"{blocks:,}", r["check"], f"{f(r['ms_median']):.3f}",
                     f"{f(r['gbps']):.0f}", f"{f(r['ms_median']) * 1e6 / blocks:.2f}"])
    return md_table(["block", "combine", "blocks", "check", "ms", "GB/s", "ns per block"], body)


def multiblock_range(n):
    vals = [f(r["pct_peak"]) for r in rows("multiblock") if r["n"] == str(n)]
    return f"{min(vals):.0f}–{max(vals):.0f}%"


def than_cub_multiblock(n, combine):
    r = select("multiblock", n=n, combine=combine)
    return compare_rows(r, r, "CUB", a_prefix="cub_")


def per_block(combine, block):
    r = select("combine_tree", combine=combine, block=block)
    return f(r["ms_median"]) * 1e6 / int(r["grid"])


def try_vs_file(name, stage="01_naive", regime="tree"):
    """An experiment's patched build against the file, in one regime, from its try results."""
    data = f"try_{stage}_{name}"
    return compare_rows(select(data, variant="as in the file", regime=regime),
                        select(data, variant=f"{name} (the patch)", regime=regime), stage[:2])


def instr_ratio(variant, stage="01_naive"):
    return f"{ncu_value(stage, variant, 'instructions') / ncu_value(stage, 'tree', 'instructions'):.2f}"


def same_or_both(a, b):
    return f"`{a}` for both" if a == b else f"`{a}` and `{b}`"


def value_range(values):
    lo, hi = min(values, key=float), max(values, key=float)
    return lo if lo == hi else f"{lo}–{hi}"


def conflicts(stage, variant):
    return f"{ncu_value(stage, variant, 'conflicts_ld') + ncu_value(stage, variant, 'conflicts_st'):,.0f}"


def sweep_gbps(stage, n):
    return num("sweep", "gbps", ".0f", stage=stage, n=n)


def per_block_spread_diff(a, b, blocks):
    """How much more (or less) time per block combine a takes than combine b, over the blocks given."""
    vals = [per_block(a, x) - per_block(b, x) for x in blocks]
    lo, hi = min(vals), max(vals)
    if lo > 0:
        return f"{lo:.2f}–{hi:.2f} ns per block more than {b}"
    if hi < 0:
        return f"{-hi:.2f}–{-lo:.2f} ns per block less than {b}"
    return f"between {lo:.2f} and {hi:.2f} ns per block against {b}"


def time_difference(a, b, other):
    """Row b's median time against row a's, in µs: 'X µs more than <other>' or 'X µs less than <other>'."""
    d = 1e3 * (f(b["ms_median"]) - f(a["ms_median"]))
    return f"{abs(d):.1f} µs {'more' if d > 0 else 'less'} than {other}"


def determinism_spread(combine, n):
    """Distinct results of the determinism runs and their spread in ulps of the result."""
    r = select("determinism", combine=combine, n=n)
    return (f"{r['distinct_results']} distinct results in {r['runs']} runs, from {r['min_result']} to "
            f"{r['max_result']}, {r['spread_ulps']} ulp apart")


def per_block_spread(combine, blocks):
    vals = [per_block(combine, b) for b in blocks]
    return f"{min(vals):.2f}–{max(vals):.2f} ns"


def ncu_ratio(stage, variant, a, b, fmt=".2f"):
    r = select("ncu", stage=stage, variant=variant)
    return format(f(r[NCU_SHORT[a]]) / f(r[NCU_SHORT[b]]), fmt)


def ncu(stage, variant, metric, fmt=",.0f"):
    return format(ncu_value(stage, variant, metric), fmt)


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


# How the combines map onto the determinism levels CUB names (https://nvidia.github.io/cccl/unstable/cub/determinism.html).
CUB_LEVEL = {"atomic": "`not_guaranteed`", "two-pass": "`run_to_run`", "last-block": "`run_to_run`"}


def determinism_table():
    body = [[r["n"], f"`{r['combine']}`", r["runs"], r["distinct_results"], r["min_result"], r["max_result"],
             r["spread_ulps"], f"{f(r['max_abs_error']) / abs(f(r['reference'])):.1e}",
             "yes" if r["bitwise_identical"] == "true" else "no", CUB_LEVEL.get(r["combine"], ""), r["check"]]
            for r in rows("determinism")]
    return md_table(["n", "combine", "runs", "distinct results", "smallest", "largest", "spread (ulp)",
                     "largest relative error", "bitwise identical", "CUB's level", "every result checked"], body)


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


def delta_us(before_ms, after_ms):
    d = 1e3 * (f(after_ms) - f(before_ms))
    return f"{abs(d):.1f} µs {'more' if d > 0 else 'less'}"


def flush_lines():
    """What the flush table shows, size by size, in generated words."""
    l2 = int(meta()["l2_bytes"])
    out = []
    for n in sorted({int(r["n"]) for r in rows("flush")}):
        clean, write, none = (select("flush", l2_flush=k, n=n) for k in ("clean", "write", "none"))
        fits = which(4 * n <= l2, "fits in the L2", "does not fit in the L2")
        out.append(f"- n = {n} ({4 * n / 1e6:.0f} MB, {fits}): with no flush 07 is "
                   f"{compare_rows(clean, none, 'after a clean flush')}; after `write` 07 takes "
                   f"{delta_us(clean['ms_median'], write['ms_median'])} than after `clean`, and CUB "
                   f"{delta_us(clean['cub_ms_median'], write['cub_ms_median'])}.")
    return "\n".join(out)


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


def sass_lines(stage):
    path = RESULTS / f"sass_{stage}.txt"
    if not path.exists():
        raise DocsError(f"{path.relative_to(RESULTS.parent.parent) if RESULTS.is_relative_to(ROOT) else path.name} is "
                        f"missing: run ./ladder profile on a GPU")
    return path.read_text().splitlines()


def sass_span(stage, start, end, last=False):
    """From the first instruction containing start to the first (or last) after it containing end."""
    lines = sass_lines(stage)
    a = next(i for i, l in enumerate(lines) if start in l)
    after = [i for i in range(a + 1, len(lines)) if end in lines[i]]
    return lines[a:(after[-1] if last else after[0]) + 1]


def sass(stage, start, end, last=False):
    return "```\n" + "\n".join(sass_span(stage, start, end, last)) + "\n```"


def sass_tree(stage):
    """The shared-memory tree of a stage's kernel: from the first block barrier to the last."""
    return sass(stage, "BAR.SYNC", "BAR.SYNC", last=True)


def lds_predicated(stage):
    """Whether the tree's shared loads carry a predicate (@P) instead of being branched around."""
    return any(" LDS" in l and l.split("*/ ")[1].startswith("@") for l in sass_span(stage, "BAR.SYNC", "BAR.SYNC", True))


def loads_per_iteration(stage):
    """Global loads in the body of the grid-stride loop (from the first LDG to the branch back)."""
    return sum("LDG" in l for l in sass_span(stage, "LDG", "BRA"))


def gemm_lds(tile, pad):
    """The shared-load instructions of one tiled-kernel instantiation, by width: '16 LDS and 4 LDS.128'."""
    lines, inside = sass_lines(GEMM), False
    counts = {}
    for line in lines:
        if line.startswith("Function :"):
            inside = f"gemm_kernelILi{tile}ELi{1 if pad else 0}E" in line
            continue
        m = re.search(r"\b(LDS(?:\.\d+)?)\b", line)
        if inside and m:
            counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    return " and ".join(f"{v} `{k}`" for k, v in sorted(counts.items()))


def gemm_steps(variant):
    """Warp-steps of a profiled tiled GEMM: blocks x 8 warps x K / 16 (16 x 16 tiles, square size)."""
    size = int(select("ncu", stage=GEMM, variant=variant)["n_or_size"])
    return (size // 16) ** 2 * 8 * (size // 16)


def gemm_per_warp_step(variant, metric):
    return ncu_value(GEMM, variant, metric) / gemm_steps(variant)


def ffma_per_shared_load(variant):
    """FFMA warp instructions per shared-load instruction (FFMA thread instructions / 32)."""
    return ncu_value(GEMM, variant, "ffma") / 32 / ncu_value(GEMM, variant, "shared_ld")


def gemm_instr_change():
    a, b = ncu_value(GEMM, "tiled", "instructions"), ncu_value(GEMM, "tiled padded", "instructions")
    return f"{abs(100 * (b - a) / a):.0f}% {'more' if b > a else 'fewer'}"


def gemm_ffma_per_mac(variant):
    size = int(select("ncu", stage=GEMM, variant=variant)["n_or_size"])
    return ncu_value(GEMM, variant, "ffma") / size ** 3


def cublas_kernel():
    name = select("ncu", stage=GEMM, variant="cuBLAS")["kernel"]
    return re.sub(r"^void ", "", name)


def gemm_profile_table():
    return profile_table([(GEMM, v) for v in ("tiled", "naive", "cuBLAS")]) + "\n\n" + md_table(
        ["kernel", "FMA pipe busy, %", "tensor pipe busy, %", "FFMA thread instructions", "per multiply-add"],
        [[v, ncu(GEMM, v, "fma_pct", ".1f"), ncu(GEMM, v, "tensor_pct", ".1f"), ncu(GEMM, v, "ffma"),
          f"{gemm_ffma_per_mac(v):.2f}"] for v in ("tiled", "naive", "cuBLAS")])


def padding_cost(kind):
    """Extra shared-memory wavefronts (ld or st) of the padded tiled kernel over the unpadded one."""
    key = "wavefronts_ld" if kind == "ld" else "wavefronts_st"
    return ncu_value(GEMM, "tiled padded", key) - ncu_value(GEMM, "tiled", key)


def fp32_peak():
    return f(rows("gemm")[0]["fp32_peak_gflops"])


def ridge():
    return fp32_peak() / f(meta()["peak_gbps"])


def roofline_points():
    """(name, FLOP per byte, GFLOP/s attained) for every reduce stage (stream, 07 atomic) and GEMM kernel at 4096³."""
    pts = []
    for r in rows("ladder_stream"):
        pts.append((r["stage"] + (" (tree)" if r["regime"] == "tree" else ""), 0.25, 0.25 * f(r["gbps"])))
    g = select("gemm", m="4096", tile="16", pad="false")
    ai = 2 * 4096 ** 3 / (4 * 3 * 4096 ** 2)
    pts += [("tiled 16×16, 4096³", ai, f(g["gflops"])), ("naive, 4096³", ai, f(g["naive_gflops"])),
            ("cuBLAS, 4096³", ai, f(g["cublas_gflops"]))]
    return pts


def roofline_table():
    bw = f(meta()["peak_gbps"])
    body = []
    for name, ai, gf in roofline_points():
        roof = min(fp32_peak(), ai * bw)
        body.append([name, f"{ai:.2f}", f"{gf:,.0f}", f"{roof:,.0f}", f"{100 * gf / roof:.1f}",
                     which(ai * bw < fp32_peak(), "bandwidth", "FP32 peak")])
    return md_table(["kernel", "FLOP/B", "GFLOP/s", "roof GFLOP/s", "% of roof", "roof set by"], body)


# ---- accuracy --------------------------------------------------------------------------------------------

def accuracy_sizes():
    return sorted({int(r["n"]) for r in rows("accuracy")})


def rel(err, ref):
    return f(err) / abs(f(ref))


def accuracy_series():
    """{name: {n: relative error}} for every stage, CUB and the two CPU float sums."""
    out = {}
    for r in rows("accuracy"):
        out.setdefault(r["stage"], {})[int(r["n"])] = rel(r["abs_error"], r["reference"])
    last = REDUCE[-1]
    out["CUB"] = {int(r["n"]): rel(r["cub_abs_error"], r["reference"]) for r in rows("sweep") if r["stage"] == last}
    cpu = rows("accuracy_cpu")
    out["CPU float loop"] = {int(r["n"]): rel(r["float_loop_error"], r["exact"]) for r in cpu}
    out["CPU Kahan, float"] = {int(r["n"]): rel(r["kahan_float_error"], r["exact"]) for r in cpu}
    return out


def pow2(n):
    n = int(n)
    return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n)


def accuracy_table():
    series = accuracy_series()
    names = list(series)
    body = []
    for n in accuracy_sizes():
        body.append([pow2(n), *[f"{series[s][n]:.1e}" if n in series[s] else "" for s in names]])
    return md_table(["n", *names], body)


def depth_table():
    """The summation depth each stage's launch gives (the harness's summation_depth), against the CPU loop's n."""
    body = []
    for n in accuracy_sizes():
        cells = [pow2(n)]
        for stage in REDUCE:
            cells.append(select("accuracy", stage=stage, n=n)["summation_depth"])
        body.append(cells + [f"{n - 1:,}"])
    return md_table(["n", *REDUCE, "CPU float loop"], body)


def bound_ratio_range():
    vals = [f(r["abs_error"]) / f(r["bound"]) for r in rows("accuracy") if r["float_check"] == "PASS"]
    return f"{min(vals):.2g} to {max(vals):.2g}"


def cpu_row(n):
    return select("accuracy_cpu", n=n)


def accuracy_ulps():
    """{name: {n: error in ulps of the float nearest the exact sum}}."""
    import math
    exact = {int(r["n"]): f(r["exact"]) for r in rows("accuracy_cpu")}
    out = {}
    for name, pts in accuracy_series().items():
        out[name] = {}
        for n, e in pts.items():
            if n in exact:
                ulp = 2.0 ** (math.floor(math.log2(exact[n])) - 23)
                out[name][n] = e * exact[n] / ulp
    return out


def accuracy_ulp_table():
    series = accuracy_ulps()
    names = list(series)
    body = [[pow2(n), *[f"{series[s][n]:.2f}" if n in series[s] else "" for s in names]] for n in accuracy_sizes()]
    return md_table(["n", *names], body)


def loop_gap_line():
    """From which n on every stage is two orders of magnitude closer to the exact sum than the CPU loop."""
    series = accuracy_series()
    sizes = accuracy_sizes()
    gap = [n for n in sizes if all(100 * series[s][n] < series["CPU float loop"][n] for s in REDUCE)]
    start = next((n for i, n in enumerate(sizes) if all(m in gap for m in sizes[i:])), None)
    if start is None:
        return " At no size here is every tree two orders of magnitude closer than the loop."
    return (f" From n = {pow2(start)} on, every tree is closer to the exact sum than the loop by two orders of magnitude "
            f"or more: there, a GPU sum that differs from a CPU loop's says more about the loop.")


def stage_error_range(n):
    vals = [accuracy_series()[s][n] for s in REDUCE]
    return f"{min(vals):.1e} to {max(vals):.1e}"


def loop_stalls():
    """Whether the CPU float loop's result at the largest n is exactly 2^24 (stuck: every later input is below half
    an ulp of the running sum)."""
    r = cpu_row(accuracy_sizes()[-1])
    return f(r["float_loop"]) == 2.0 ** 24


# ---- experiments kept as patches ------------------------------------------------------------------------

def experiments_section(stage, page_dir="stages"):
    """Every docs/experiments/<stage>/*.patch: the patch, its command, its measured rows and, where ./ladder profile
    measured the patched build, the profiler rows beside the file's."""
    found = [p for s, p in experiments() if s == stage]
    if not found:
        return (f"None kept for this stage yet. An experiment is a small patch against `{stage}/"
                f"{stage_file(stage).name}` in `docs/experiments/{stage}/`; `./ladder try {stage[:2]} <patch>` builds and "
                f"measures it beside the file, and `./ladder measure` records every one.")
    out = []
    for patch in found:
        name = patch.stem
        text = patch.read_text()
        intro, _, diff_text = text.partition("--- ")
        out.append(f"### {name}\n\n{' '.join(intro.split())}\n\n```diff\n--- {diff_text.rstrip()}\n```\n")
        out.append(f"`./ladder try {stage[:2]} {patch.relative_to(ROOT)}`, recorded by `./ladder measure`:\n")
        out.append(try_table(f"try_{stage}_{name}") + "\n")
        profiled = [r for r in rows("ncu") if r["stage"] == stage and r["variant"].endswith(f", {name}")]
        if profiled:
            cases = []
            for r in profiled:
                regime = r["variant"].split(",")[0]
                cases += [(stage, regime), (stage, r["variant"])]
            out.append("The profiler, first launch, the file beside the patch (`./ladder profile` profiles every "
                       "experiment that `./ladder try` has built):\n")
            out.append(profile_table(cases) + "\n")
            variant = profiled[0]["variant"]
            command = profile_command(stage, variant.split(",")[0]).replace(
                f"build/bin/{stage}", f"build/try/bin/{patch_target(stage, patch)}")
            out.append(command + "\n")
            out.append(md_table(["kernel", "divergent branch targets", "active threads per instruction",
                                 "threads on per instruction", "warp instructions"],
                                [[f"{s} ({v})", ncu(s, v, "divergent"), ncu(s, v, "threads", ".1f"), ncu(s, v, "pred_on", ".1f"),
                                  ncu(s, v, "instructions")] for s, v in cases]) + "\n")
    return "\n".join(out)


def racecheck():
    text = (RESULTS / "racecheck.txt").read_text().strip()
    return "```\n" + text + "\n```"


def build_time_line():
    """How long a first build took, from docs/results/first_build.json (written by ./ladder's first build)."""
    path = RESULTS / "first_build.json"
    if not path.exists():
        raise DocsError("docs/results/first_build.json is missing: copy <build>/first_build.json from a fresh clone's "
                        "first ./ladder build")
    b = json.loads(path.read_text())
    gpu = "without a GPU" if b["gpu"] == "none" else "with a GPU"
    s = int(b["seconds"])
    took = f"{s} s" if s < 120 else f"{s / 60:.0f} minutes"
    return f"on a machine with {b['cpus']} CPU cores, {gpu}, it took {took} (`{b['command']}`, on {b['date']})."


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
    """Log-2 x axis, log y axis, labels, grid, the legend right of the plot; writes docs/img/<name>."""
    import matplotlib.pyplot as plt
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

    # The size sweep: GB/s over all sizes, and % of the theoretical peak where the stages separate.
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [3, 2]})
    data = rows("sweep")
    stages = list(dict.fromkeys(r["stage"] for r in data))
    big = sorted({int(r["n"]) for r in data})[-6:]
    for stage in stages:
        pts = sorted((int(r["n"]), f(r["gbps"]), f(r["pct_peak"])) for r in data if r["stage"] == stage)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", label=stage)
        ax2.plot([p[0] for p in pts if p[0] in big], [p[2] for p in pts if p[0] in big], marker="o", label=stage)
    pts = sorted((int(r["n"]), f(r["cub_gbps"])) for r in data if r["stage"] == stages[-1])
    ax.plot([p[0] for p in pts], [p[1] for p in pts], color="black", linestyle=":", marker="x", label="CUB")
    ax2.plot([p[0] for p in pts if p[0] in big], [100 * p[1] / peak for p in pts if p[0] in big], color="black",
             linestyle=":", marker="x", label="CUB")
    if "read_gbps" in data[0]:
        pts = sorted((int(r["n"]), f(r["read_pct_peak"])) for r in data if r["stage"] == stages[-1])
        ax2.plot([p[0] for p in pts if p[0] in big], [p[1] for p in pts if p[0] in big], color="gray",
                 linestyle="--", label="read-only kernel")
    ax.axhline(peak, color="gray", linestyle="--", linewidth=1, label="theoretical peak")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("n (floats)")
    ax.set_ylabel("GB/s")
    ax.set_title("GB/s against n, stream regime, L2 flushed")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    ax2.set_xscale("log", base=2)
    ax2.set_xticks(big, [f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n) for n in big])
    ax2.set_xlabel("n (floats)")
    ax2.set_ylabel("% of theoretical peak")
    ax2.set_title(f"the largest sizes")
    ax2.grid(True, alpha=0.3)
    fig.suptitle(title_gpu)
    fig.tight_layout()
    fig.savefig(IMG / "sweep.png")
    plt.close(fig)

    # The block-size probe; one legend for both panels, below them, covering nothing.
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
    for ax, regime in zip(axes, ["stream", "tree"]):
        data = rows(f"probe_{regime}")
        for stage in dict.fromkeys(r["stage"] for r in data):
            pts = sorted((int(r["block"]), f(r["gbps"])) for r in data if r["stage"] == stage)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3, label=stage)
        blocks = sorted({int(r["block"]) for r in data})
        ax.set_xscale("log", base=2)
        ax.set_xticks(blocks, [str(b) for b in blocks])
        ax.set_xlabel("threads per block")
        ax.set_ylabel("GB/s")
        ax.set_title(f"{regime} regime, n = 2^28")
        ax.grid(True, alpha=0.3)
    handles, labels = axes[1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=7, frameon=False)
    fig.suptitle(f"Block-size probe ({title_gpu})")
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(IMG / "probe.png")
    plt.close(fig)

    # GEMM: every kernel and tile against size, the FP32 peak as a line.
    fig, ax = plt.subplots(figsize=(8, 4.2))
    data = rows("gemm")
    sizes = sorted({int(r["m"]) for r in data})
    fp32 = fp32_peak()
    for tile in sorted({r["tile"] for r in data}, key=int):
        for pad in ("false", "true"):
            pts = sorted((int(r["m"]), f(r["gflops"])) for r in data if r["tile"] == tile and r["pad"] == pad)
            if pts:
                name = f"tiled {tile}×{int(tile) + (pad == 'true')}" + (" (padded)" if pad == "true" else "")
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o" if tile == "16" else "s",
                        linestyle="-" if tile == "16" else "none", label=name)
    base = sorted({int(r["m"]): r for r in data if r["tile"] == "16" and r["pad"] == "false"}.items())
    ax.plot([m for m, _ in base], [f(r["naive_gflops"]) for _, r in base], marker="o", label="naive")
    ax.plot([m for m, _ in base], [f(r["cublas_gflops"]) for _, r in base], marker="o", label="cuBLAS (FP32, no TF32)")
    ax.axhline(fp32, color="black", linestyle="--", linewidth=1, label=f"FP32 peak {fp32:,.0f} GFLOP/s")
    ax.set_ylim(min(f(r["naive_gflops"]) for r in data) / 2, fp32 * 2)
    finish_log_log(fig, ax, "M = N = K", "GFLOP/s", f"SGEMM, median of {data[0]['reps']} reps ({title_gpu})",
                   "gemm.png", xticks=sizes)

    # Accuracy: relative error against n.
    fig, ax = plt.subplots(figsize=(8, 4.4))
    for name, pts in accuracy_series().items():
        xs = sorted(pts)
        ys = [max(pts[x], 1e-12) for x in xs]
        style = {"CPU float loop": dict(color="black", linestyle="--"), "CPU Kahan, float": dict(color="gray", linestyle=":"),
                 "CUB": dict(color="green", linestyle="-.")}.get(name, {})
        ax.plot(xs, ys, marker=".", label=name, **style)
    ax.axhline(2.0 ** -24, color="red", linewidth=0.8, label="u = 2^-24 (one rounding)")
    finish_log_log(fig, ax, "n (floats, uniform in [0, 1))", "|result - exact sum| / exact sum",
                   f"Accuracy of the float sum against n ({title_gpu})", "accuracy.png")

    # The roofline.
    fig, ax = plt.subplots(figsize=(8, 4.4))
    bw = peak
    xs = [2 ** (i / 4) for i in range(-12, 48)]
    ax.plot(xs, [min(fp32, x * bw) for x in xs], color="black", linewidth=1.5, label="roof: min(FP32 peak, FLOP/B × peak GB/s)")
    for name, ai, gf in roofline_points():
        ax.plot([ai], [gf], marker="o" if ai < 1 else "s", linestyle="none", label=name)
    finish_log_log(fig, ax, "arithmetic intensity (FLOP per byte moved)", "GFLOP/s", f"Roofline ({title_gpu})",
                   "roofline.png")


# ---- rendering ------------------------------------------------------------------------------------------

PLACEHOLDER = re.compile(r"\{\{(.+?)\}\}", re.S)


def render(template):
    rel = template.relative_to(TEMPLATES)
    page_dir = "root" if rel.name == "README.md" else (rel.parent.name or ".")
    env = {name: obj for name, obj in globals().items() if callable(obj)}
    env.update(STAGES=STAGES, REDUCE=REDUCE, GEMM=GEMM, format=format, int=int, float=float, len=len,
               min=min, max=max, round=round, str=str, abs=abs, any=any, all=all)
    env["link"] = lambda stage: link(stage, page_dir)
    env["img"] = lambda name, alt: img(name, alt, page_dir)
    env["ladder_table"] = lambda: ladder_table(page_dir)
    env["experiments_section"] = lambda stage: experiments_section(stage, page_dir)

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


# ---- claims: what a template may say in its own words, and the second GPU it must stay true on ----------------

# Words that compare two measurements. A template may not type them: they come from compare_rows(), speedup(), which() and the
# other helpers above, so they change when the numbers do. ALLOWED lists the phrases that use such a word to
# describe, not to claim, each with its reason.
COMPARATIVE = re.compile(r"\b(faster|slower|fastest|slowest|largest|smallest|beats?|outperforms?|no measurable|"
                         r"nothing measurable|no faster|no slower|no change|better|worse|doubles|halves|"
                         r"more than|less than|above CUB|below CUB|ahead of)\b", re.I)
ALLOWED = {
    "the fastest of each row in bold",  # how a table marks its maximum, computed by probe_table()
    "above 1 is faster than",  # the definition of the × CUB column
    "above 1: faster than",  # the same definition as ./ladder run prints it
}
FACT = r"(?<!\w)(?<!\d[.,]){}(?!\w)(?![.,]\d)"  # a fact as a whole number or word, not inside 1,320 or 2.64
SPEED_CLAIM = re.compile(r"(\d+(?:\.\d+)?)× (faster|slower)")


def hardware_literals():
    """The facts of the GPU the results were measured on, as a page would print them: none may be typed into a
    template, and none may survive a rendering from another GPU's results."""
    m = meta()
    facts = {m["device"], m["device"].split()[-1], str(m["sms"]), f"{int(m['l2_bytes']) / 1e6:.0f} MB",
             f"{int(m['l2_bytes']) / 1e6:.1f} MB",
             f"{f(m['peak_gbps']):.0f}", f"{f(m['peak_gbps']) / 1e3:.1f} TB/s"}
    first = rows("ladder")[0]
    if "fp32_peak_gflops" in first:
        facts |= {f"{f(first['fp32_peak_gflops']):.0f}", f"{f(first['fp32_peak_gflops']) / 1e3:.1f} TFLOP/s",
                  f"{int(first['clock_mhz'])} MHz"}
    facts |= {r["grid"] for r in rows("ladder") if r["regime"] == "stream"}
    return {x for x in facts if x}


def outside_placeholders(text):
    return PLACEHOLDER.sub(" ", text)


def lint_template(rel, text, facts):
    """A template's own words: no hardware fact, no comparative word outside ALLOWED."""
    problems = []
    body = outside_placeholders(text)
    for lineno, line in enumerate(body.splitlines(), 1):
        clean = line
        for phrase in ALLOWED:
            clean = clean.replace(phrase, "")
        for m in COMPARATIVE.finditer(clean):
            problems.append(f"{rel}:{lineno}: the comparative '{m.group(0)}' is typed, not generated: use "
                            f"compare_rows(), speedup() or which() so it follows the numbers")
        for fact in facts:
            if re.search(FACT.format(re.escape(fact)), line):
                problems.append(f"{rel}:{lineno}: '{fact}' is a fact of the measured GPU typed into the template")
    return problems


def lint_rendered(rel, text):
    """A rendered page: every 'N× faster' or 'N× slower' has N above 1."""
    return [f"{rel}: '{m.group(0)}' says {m.group(2)} with a ratio of {m.group(1)}"
            for m in SPEED_CLAIM.finditer(text) if float(m.group(1)) <= 1.0]


def use_results(directory):
    global RESULTS
    RESULTS = pathlib.Path(directory)
    _cache.clear()


def check_claims():
    """The template lint on the real results, then every page rendered from a synthetic second GPU."""
    problems = []
    facts = hardware_literals()
    for out, template in pages().items():
        rel = template.relative_to(ROOT)
        problems += lint_template(rel, template.read_text(), facts)
        problems += lint_rendered(out.relative_to(ROOT), render(template))
    real = RESULTS
    import tempfile
    import synthetic_gpu
    with tempfile.TemporaryDirectory() as tmp:
        synthetic_gpu.write(real, pathlib.Path(tmp))
        use_results(tmp)
        try:
            for out, template in pages().items():
                rel = out.relative_to(ROOT)
                text = render(template)
                problems += [f"{rel} (synthetic GPU): {p}" for p in lint_rendered(rel, text)]
                for fact in facts:
                    if re.search(FACT.format(re.escape(fact)), outside_code(text)):
                        problems.append(f"{rel} (synthetic GPU): '{fact}', a fact of the measured GPU, survives a "
                                        f"rendering from another GPU's results")
        except DocsError as e:
            problems.append(f"rendering from the synthetic GPU's results failed: {e}")
        finally:
            use_results(real)
    return problems


def outside_code(text):
    """A page's prose: without fenced code, inline code and table rows (diffs and commands hold numbers that are
    not GPU facts, and a measured cell of a table can equal one by chance; tables come from helpers, which the
    rendering exercises, and the prose around them is what a hand could get wrong)."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("|"))
    return re.sub(r"`[^`]*`", " ", text)


def self_test():
    """Planted claims the checks must catch: a typed GPU fact, a typed comparative, a 'faster' whose ratio turns
    below 1 on the synthetic GPU, and a helper that hard-codes a fact. Exit 0 only if every one is caught."""
    import tempfile
    import synthetic_gpu
    facts = hardware_literals()
    sms, grid = str(meta()["sms"]), next(r["grid"] for r in rows("ladder") if r["regime"] == "stream")
    planted = {
        "a typed SM count": lint_template("planted.md", f"The GPU has {sms} SMs.", facts),
        "a typed grid": lint_template("planted.md", f"The stream grid is {grid} blocks.", facts),
        "a typed comparative": lint_template("planted.md", "03 is faster than 02 in the tree regime.", facts),
    }
    real = RESULTS
    with tempfile.TemporaryDirectory() as tmp:
        synthetic_gpu.write(real, pathlib.Path(tmp))
        use_results(tmp)
        try:
            text = f'03 runs {ratio("ladder_tree", "ms_median", "02_grid_stride", "03_padding")}× faster than 02.'
            planted["'N× faster' from a ratio below 1"] = lint_rendered("planted.md", text)
            text = outside_code(f"The stream grid is {{}} blocks.".format(grid))  # a helper returning a constant
            planted["a fact hard-coded in a helper"] = [fact for fact in facts if re.search(FACT.format(re.escape(fact)), text)]
        finally:
            use_results(real)
    missed = [name for name, found in planted.items() if not found]
    for name, found in planted.items():
        print(f"docs self-test: {name}: {'caught: ' + str(found[0]) if found else 'MISSED'}")
    return 1 if missed else 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true", help="compare instead of writing")
    p.add_argument("--self-test", action="store_true", help="plant wrong claims and demand that the checks catch them")
    a = p.parse_args()
    if a.self_test:
        try:
            return self_test()
        except DocsError as e:
            print(f"docs: {e}", file=sys.stderr)
            return 1
    try:
        problems = check_structure()
        rendered = {out: render(t) for out, t in pages().items()}
    except DocsError as e:
        print(f"docs: {e}", file=sys.stderr)
        return 1
    if a.check:
        problems += check_claims()
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
    remaining = [p for p in check_structure()]
    for problem in remaining:
        print(f"docs: {problem}", file=sys.stderr)
    return 1 if remaining else 0


if __name__ == "__main__":
    sys.exit(main())
