#!/usr/bin/env python3
"""Builds docs/ from docs/templates/ and the result files in docs/results/ (written on a GPU by
`./ladder measure`). Every number and chart in the docs comes from those files; nothing is typed by hand.

  python3 scripts/make_docs.py           render the pages, draw the charts (charts need matplotlib)
  python3 scripts/make_docs.py --check   fail if a page differs from what the templates and results give,
                                         a stage has no page, a result file does not parse, a chart is
                                         missing or disagrees with its table or the results, a link or
                                         anchor does not resolve, a template types a fact of the GPU or a
                                         comparative word, a page says faster/slower in words the comparison
                                         helpers did not produce, or a page rendered from a synthetic second
                                         GPU (tests/synthetic_gpu.py) keeps a fact of the first, says "N×
                                         faster" with N below 1, or states a cause that is false there
                                         (standard library only: this is a CPU test)
  python3 scripts/make_docs.py --self-test   plant such claims and demand that the checks catch each

Templates are Markdown rendered with Jinja2: {{ expression }} placeholders, evaluated with the helpers below, and
{% if condition %} ... {% else %} ... {% endif %} blocks around the sentences that state a cause, with a condition
from the "conditions" section.
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
from runner.stages import has_stream  # noqa: E402
sys.path.insert(0, str(ROOT / "tests"))
from mutants import MUTANTS  # noqa: E402
# The stage pages' diagrams (SVG, drawn from the thread models; standard library only) and their helpers.
from diagrams import write_diagrams, stale_diagrams, model_check, tolerance_note, tree_degrees, worst_step, race_example  # noqa: E402,F401

# Result files and the columns the pages use: --check fails if one is missing or does not parse.
REQUIRED = {
    "ladder": ["stage", "regime", "n", "block", "grid", "blocks_per_sm", "combine", "check", "exact_check",
               "read_ms_median", "read_gbps", "pct_read", "copy_gbps", "fp32_peak_gflops",
               "float_check", "abs_error", "bound", "error_bound_ratio", "launches", "launches_checked", "ms_median",
               "gbps", "pct_peak", "cub_ms_median", "cub_gbps", "x_cub"],
    "mutants": ["mutant", "stage", "expect", "exit", "verdict", "line"],
    "try_06_float4_kLoadsInFlight": ["variant", "regime", "grid", "check", "ms_median", "gbps", "pct_peak"],
    "try_02_grid_stride_grid": ["variant", "regime", "grid", "check", "ms_median", "gbps", "pct_peak"],
    "multiblock": ["n", "combine", "check", "ms_median", "gbps", "pct_peak", "cub_ms_median", "cub_gbps", "x_cub"],
    "determinism": ["n", "combine", "runs", "distinct_results", "min_result", "max_result", "spread_ulps",
                    "max_abs_error", "reference", "bitwise_identical", "deterministic_by_design", "check"],
    "accuracy": ["stage", "n", "regime", "result", "reference", "abs_error", "bound", "error_bound_ratio", "check"],
    "error_bound": ["stage", "seed", "n", "offset", "block", "regime", "grid", "threads", "combine", "abs_error",
                    "bound", "error_bound_ratio", "check"],
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


class NotMeasured(DocsError):
    """A stage (or a result file a page may do without) that the results do not have yet: the page says so."""


NOT_MEASURED = "*not measured yet*"
not_measured = set()  # what a rendering found missing, reported by --check


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
        if pick:
            out.append(pick[0])
        else:
            not_measured.add(f"{stage}: no rows in docs/results/ladder.csv")
    return out


def rows(name):
    if name in LADDER_VIEWS:
        return ladder_view(LADDER_VIEWS[name])
    if name == "sweep":  # each stage at its default combine; "sweep_all" has 07's every combine
        return [r for r in rows("sweep_all") if r["combine"] in ("relaunch", "atomic")]
    if name == "sweep_all":
        name = "sweep"
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


def stage_rows(name, stage):
    """A stage's rows of a result file; NotMeasured if it has none."""
    found = [r for r in rows(name) if r["stage"] == stage]
    if not found:
        not_measured.add(f"{stage}: no rows in docs/results/{name}.csv")
        raise NotMeasured(f"{stage} is not measured yet")
    return found


def select(name, **match):
    data = rows(name)
    if "stage" in match and not any(r["stage"] == match["stage"] for r in data):
        not_measured.add(f"{match['stage']}: no rows in docs/results/{'ladder' if name in LADDER_VIEWS else name}.csv")
        raise NotMeasured(f"{match['stage']} is not measured yet")
    found = [r for r in data if all(str(r[k]) == str(v) for k, v in match.items())]
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
    lo, hi = r.get(prefix + "ms_min"), r.get(prefix + "ms_max")
    return median, (f(lo) if lo else None), (f(hi) if hi else None)


NOISE = "within noise"  # the words for two runs neither of which distinct() tells apart
_said = set()  # every comparative phrase the helpers produced: lint_rendered() accepts these and no other


def said(phrase):
    _said.add(phrase)
    return phrase


def distinct(a, b, a_prefix="", b_prefix=""):
    """-1 if run a is quicker: its median lies below every repetition of b, or b's median above every repetition of
    a; 1 if slower, the same the other way round; 0 if neither median lies outside the other run's range ("the same
    within noise", as the glossary defines it) or a row has no spread. The one test behind every "faster", "slower"
    and "the same within noise" in the docs, in both directions. A min-max overlap alone would call two runs the
    same whenever one repetition of each strays."""
    m_a, lo_a, hi_a = _times(a, a_prefix)
    m_b, lo_b, hi_b = _times(b, b_prefix)
    if None in (lo_a, hi_a, lo_b, hi_b):
        return 0
    if m_a < lo_b or m_b > hi_a:
        return -1
    return 1 if m_a > hi_b or m_b < lo_a else 0


def compare_rows(a, b, other=None, a_prefix="", b_prefix=""):
    """How row b's median time compares with row a's, in words that agree with the numbers: 'N× faster than
    <other>' or 'N× slower than <other>' only where distinct() tells the runs apart, 'the same speed as <other>
    within noise (N×)' where it does not, and 'N× the speed of <other>' where a row has no spread."""
    ma, lo_a, _ = _times(a, a_prefix)
    mb, lo_b, _ = _times(b, b_prefix)
    r = ma / mb
    tail = f" than {other}" if other else ""
    if lo_a is None or lo_b is None:
        return said(f"{r:.2f}× the speed of {other}" if other else f"{r:.2f}× the speed")
    order = distinct(b, a, b_prefix, a_prefix)
    if order == 0:
        return said((f"the same speed as {other}" if other else "the same speed") + f" {NOISE} ({r:.2f}×)")
    if f"{r:.2f}" == "1.00" or f"{1 / r:.2f}" == "1.00":
        return said(f"{100 * abs(r - 1):.1f}% {'faster' if order < 0 else 'slower'}{tail}")
    return said(f"{r:.2f}× faster{tail}" if order < 0 else f"{1 / r:.2f}× slower{tail}")


def steps_line(view, pairs):
    """Several rungs against the stage before each, said once: the ones that differ each with its ratio, and the ones
    whose runs overlap together, 'the same within noise' once. pairs: [(before, after), ...] in a ladder view."""
    same, differ = [], []
    for a, b in pairs:
        ra, rb = select(view, stage=a), select(view, stage=b)
        if distinct(rb, ra) == 0:
            same.append((b, f(ra["ms_median"]) / f(rb["ms_median"])))
        else:
            differ.append(f"{b[:2]} is {compare_rows(ra, rb, a[:2])}")
    out = differ[:]
    if same:
        names = [s[:2] for s, _ in same]
        ratios = ", ".join(f"{r:.2f}×" for _, r in same)
        who = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        verb = "takes" if len(names) == 1 else "each take"
        out.append(said(f"{who} {verb} the same time as the stage before {NOISE} ({ratios})"))
    return "; ".join(out)


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


# ---- 07 at small n: the sweep's rows of every combine, beside CUB, the read-only kernel and the floors --------

SMALL_N_MAX = 2 ** 22  # where the fixed costs of a launch are still a large share of the time


def sweep_07(combine):
    """07's size-sweep rows of one combine, by n."""
    return {int(r["n"]): r for r in rows("sweep_all") if r["stage"] == REDUCE[-1] and r["combine"] == combine}


def us(r, field="ms_median"):
    return 1e3 * f(r[field])


def one_block_sizes():
    """The sweep sizes at which 07 ran one block and no combine (grid 1)."""
    return [n for n, r in sorted(sweep_07("atomic").items()) if r["grid"] == "1"]


def combine_sizes(hi=SMALL_N_MAX):
    """The sweep sizes up to hi at which 07 ran more than one block, so that its combine had work to do."""
    return [n for n, r in sorted(sweep_07("atomic").items()) if r["grid"] != "1" and n <= hi]


def us_range(values):
    return value_range([f"{v:.2f}" for v in values]) + " µs"


def one_block_size_list():
    """The sizes 07 ran as one block, as a page lists them."""
    return ", ".join(pow2(n) for n in one_block_sizes())


def one_block_us_range(field=None):
    """The range of 07's times at those sizes: every combine's (field None), or one column of the atomic rows."""
    if field is None:
        return us_range([us(sweep_07(c)[n]) for c in ("atomic", "last-block", "two-pass") for n in one_block_sizes()])
    return us_range([us(sweep_07("atomic")[n], field) for n in one_block_sizes()])


def read_us_range_up_to(hi):
    """The read-only kernel's times at the sizes up to hi where 07's combine had work."""
    return us_range([us(sweep_07("atomic")[n], "read_ms_median") for n in combine_sizes(hi)])


def atomic_quicker_up_to(hi):
    """07 atomic quicker than last-block at every size up to hi where the combine had work."""
    return all(quicker(sweep_07("atomic")[n], sweep_07("last-block")[n]) for n in combine_sizes(hi))


def small_n_table():
    combines = ["atomic", "last-block", "two-pass"]
    by = {c: sweep_07(c) for c in combines}
    body = []
    for n in sorted(n for n in by["atomic"] if n <= SMALL_N_MAX):
        a = by["atomic"][n]
        body.append([pow2(n), a["grid"] if a["grid"] != "1" else f"1 × {a['threads']} threads",
                     *[f"{us(by[c][n]):.2f}" for c in combines], f"{us(a, 'cub_ms_median'):.2f}",
                     f"{us(a, 'read_ms_median'):.2f}", *[f"{f(by[c][n]['x_cub']):.2f}" for c in combines],
                     f"{f(a['pct_read']):.0f}"])
    return md_table(["n", "grid", "atomic µs", "last-block µs", "two-pass µs", "CUB µs", "read-only µs",
                     "atomic × CUB", "last-block × CUB", "two-pass × CUB", "atomic % of read"], body)


def extra_over_read(combine, sizes):
    """How much longer than the read-only kernel, in the same process, a combine took at these sizes."""
    rows_ = sweep_07(combine)
    return us_range([us(rows_[n]) - us(rows_[n], "read_ms_median") for n in sizes])


def between(combine_a, combine_b, sizes):
    """combine_b's time minus combine_a's at these sizes, in µs."""
    a, b = sweep_07(combine_a), sweep_07(combine_b)
    return us_range([us(b[n]) - us(a[n]) for n in sizes])


def floor_us(field):
    """The median, over 07's sweep rows, of a floor timed in every run: empty_launch_ms or memset4_ms."""
    return f"{statistics.median(us(r, field) for r in sweep_07('atomic').values()):.2f} µs"


def x_cub_range(combine):
    vals = [f(r["x_cub"]) for r in sweep_07(combine).values()]
    return f"{min(vals):.2f}–{max(vals):.2f}×"


def x_cub_min(combine):
    return min(f(r["x_cub"]) for r in sweep_07(combine).values())


def sweep_span():
    sizes = sorted(sweep_07("atomic"))
    return f"{pow2(sizes[0])} to {pow2(sizes[-1])}"


def first_n_at(combine, pct):
    """The smallest sweep size from which on every larger one reaches pct % of the read-only kernel."""
    data = sorted(sweep_07(combine).items())
    ok = [n for i, (n, _) in enumerate(data) if all(f(r["pct_read"]) >= pct for _, r in data[i:])]
    return pow2(ok[0]) if ok else None


def pct_read_range(combine, sizes):
    rows_ = sweep_07(combine)
    return value_range([f"{f(rows_[n]['pct_read']):.0f}" for n in sizes]) + "%"


def per_block(combine, block):
    r = select("combine_tree", combine=combine, block=block)
    return f(r["ms_median"]) * 1e6 / int(r["grid"])


def try_vs_file(name, stage="01_naive", regime="tree"):
    """An experiment's patched build against the file, in one regime, from its try results."""
    data = f"try_{stage}_{name}"
    return compare_rows(select(data, variant="as in the file", regime=regime),
                        select(data, variant=f"{name} (the patch)", regime=regime), stage[:2])


def mask_row(which_build, name="interleaved_mask", stage="01_naive", regime="tree"):
    """The tree-regime row of an experiment's try results: the file's build ("file") or the patch's ("patch")."""
    variant = "as in the file" if which_build == "file" else f"{name} (the patch)"
    return select(f"try_{stage}_{name}", variant=variant, regime=regime)


def instr_ratio(variant, stage="01_naive"):
    return f"{ncu_value(stage, variant, 'instructions') / ncu_value(stage, 'tree', 'instructions'):.2f}"


def same_or_both(a, b):
    return f"`{a}` for both" if a == b else f"`{a}` and `{b}`"


def value_range(values):
    lo, hi = min(values, key=float), max(values, key=float)
    return lo if lo == hi else f"{lo}–{hi}"


def conflict_count(stage, variant):
    """Bank conflicts of a profiled kernel, loads and stores."""
    return ncu_value(stage, variant, "conflicts_ld") + ncu_value(stage, variant, "conflicts_st")


def conflicts(stage, variant):
    return f"{conflict_count(stage, variant):,.0f}"


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
    """Row b's median time against row a's, in µs: 'X µs more than <other>' or 'X µs less than <other>' where the
    runs' spreads do not overlap, 'the same time as <other> within noise (X µs apart)' where they do."""
    d = 1e3 * (f(b["ms_median"]) - f(a["ms_median"]))
    if distinct(a, b) == 0:
        return said(f"the same time as {other} {NOISE} ({abs(d):.1f} µs apart)")
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


# ---- conditions: the causes a page may state, each evaluated from the results -----------------------------------
# A template states a cause or a comparison only inside {% if condition(...) %} ... {% endif %}, with one of these as
# the condition, so a rendering from another GPU's results leaves the sentence out where it does not hold there.
# method.md lists them with their values (conditions_table()); tests/synthetic_gpu.py makes each one false.

# What each stall reason means, said wherever a page names a top stall (the glossary has the longer form).
STALL_MEANING = {
    "long_scoreboard": "waiting for a global-memory load", "barrier": "waiting at a block barrier",
    "mio_throttle": "waiting for room in the queue of the MIO unit, which serves shared memory",
    "short_scoreboard": "waiting for the result of a shared-memory or other MIO instruction",
    "not_selected": "ready, but another warp was chosen", "wait": "a fixed wait the compiler scheduled",
    "lg_throttle": "waiting for room in the queue of global-memory instructions",
    "math_pipe_throttle": "waiting for a busy arithmetic pipe", "dispatch_stall": "held at dispatch",
    "branch_resolving": "waiting for a branch target", "membar": "waiting at a memory barrier",
    "no_instruction": "waiting for instructions to be fetched", "drain": "draining its stores at exit",
}
MEMORY_BOUND_PCT = 50  # below this DRAM % of peak, a kernel waiting on loads is not using the bandwidth
BUSY_PCT = 80  # a unit at or above this % of its peak is the one a kernel is bound by


def stall_meaning(stage, variant):
    """The top stall of a profiled kernel, named and explained: '`barrier` (waiting at a block barrier)'."""
    reason = select("ncu", stage=stage, variant=variant)["stall_1"]
    return f"`{reason}` ({STALL_MEANING.get(reason, 'see the glossary')})"


def top_stall_is(stage, variant, reason):
    """The profiled kernel's most frequent stall reason is `reason`."""
    return select("ncu", stage=stage, variant=variant)["stall_1"] == reason


def waits_for_loads(stage, variant):
    """The kernel's top stall is long_scoreboard: its warps mostly wait for global-memory loads."""
    return top_stall_is(stage, variant, "long_scoreboard")


def latency_bound(stage, variant):
    """The warps mostly wait for global loads (top stall long_scoreboard) while DRAM runs below
    MEMORY_BOUND_PCT % of its peak: too few bytes in flight, not too little bandwidth."""
    return waits_for_loads(stage, variant) and ncu_value(stage, variant, "dram_pct") < MEMORY_BOUND_PCT


def cache_bound(stage, variant):
    """The busiest memory unit is at BUSY_PCT % of its peak or more while DRAM is below a quarter of that: a cache,
    not DRAM, sets the pace."""
    return ncu_value(stage, variant, "mem_pct") >= BUSY_PCT and ncu_value(stage, variant, "dram_pct") < BUSY_PCT / 4


def shared_pipe_bound(stage, variant):
    """The top stall is mio_throttle or short_scoreboard (waiting on the unit that serves shared memory) and the
    busiest memory unit is at BUSY_PCT % of its peak or more."""
    r = select("ncu", stage=stage, variant=variant)
    return r["stall_1"] in ("mio_throttle", "short_scoreboard") and ncu_value(stage, variant, "mem_pct") >= BUSY_PCT


def about_equal(a, b, within=0.05):
    """Two counts within 5% of each other."""
    return abs(a - b) <= within * max(abs(a), abs(b))


def quicker(a, b):
    """Every run of row a took less time than every run of row b (their min-max spreads do not overlap)."""
    return distinct(a, b) == -1


def not_slower(a, b):
    """Row a is quicker than row b, or the same within noise."""
    return distinct(a, b) <= 0


def none_at_peak():
    """No measured reduce kernel (the ladder, the size sweep, the read-only kernel) reaches 100% of the theoretical
    peak."""
    data = rows("ladder") + rows("sweep")
    return all(f(r["pct_peak"]) < 100 for r in data) and all(f(r["read_pct_peak"]) < 100 for r in rows("ladder"))


def read_kernel_passed():
    """Some stage's median time in the ladder is below the read-only kernel's, timed in the same process (% of read
    above 100)."""
    return any(f(r["pct_read"]) > 100 for r in rows("ladder"))


def two_pass_quicker_at(blocks):
    """In the tree regime at each block size given, two-pass quicker than atomic."""
    return all(quicker(select("combine_tree", combine="two-pass", block=b), select("combine_tree", combine="atomic", block=b))
               for b in blocks)


def every_row_passed():
    """Every row of the ladder table passed its checks."""
    return all(r["check"] == "PASS" for r in rows("ladder"))


def every_launch_checked():
    """Every row of the ladder table checked all of its launches."""
    return all(r["launches_checked"] == r["launches"] for r in rows("ladder"))


def per_block_flat(combine, blocks, within=0.10):
    """A combine's time per block (tree regime) stays within 10% over the block sizes given."""
    vals = [per_block(combine, b) for b in blocks]
    return max(vals) <= (1 + within) * min(vals)


def per_block_same(stages, block, within=0.05):
    """The stages' time per block in the tree-regime probe at one block size lies within 5%."""
    vals = [per_block_ns(s, block) for s in stages]
    return max(vals) <= (1 + within) * min(vals)


def costliest(combine, view="combine_tree"):
    """At every block size of the tree-regime combine runs, `combine`'s runs are all slower than every other
    combine's."""
    data = rows(view)
    return all(quicker(o, r) for r in data if r["combine"] == combine
               for o in data if o["block"] == r["block"] and o["combine"] != combine)


CONDITIONS = [top_stall_is, waits_for_loads, latency_bound, cache_bound, shared_pipe_bound, about_equal, quicker, not_slower,
              none_at_peak, read_kernel_passed, per_block_flat, per_block_same, costliest, atomic_quicker_up_to,
              two_pass_quicker_at, every_row_passed, every_launch_checked]


def tag(words):
    """A template tag as inline code, for the page that explains them: tag("endif") gives `{% endif %}`."""
    return "`{% " + words + " %}`"


def conditions_table():
    """Every condition a page may rest a cause on, with its definition, and which pages use it."""
    uses = {}
    for t in TEMPLATES.rglob("*.md"):
        for c in CONDITIONS:
            if re.search(r"\{%[-+]?\s*(?:el)?if\b[^%]*\b" + c.__name__ + r"\(", t.read_text()):
                uses.setdefault(c.__name__, []).append(t.stem)
    body = [[f"`{c.__name__}`", " ".join(c.__doc__.split()).replace("MEMORY_BOUND_PCT %", f"{MEMORY_BOUND_PCT}%")
             .replace("BUSY_PCT %", f"{BUSY_PCT}%"), ", ".join(sorted(uses.get(c.__name__, [])))] for c in CONDITIONS]
    return md_table(["condition", "holds when", "pages"], body, ["---"] * 3)


# ---- tables -------------------------------------------------------------------------------------------

def md_table(headers, body, align=None):
    align = align or ["---"] + ["---:"] * (len(headers) - 1)
    out = ["| " + " | ".join(headers) + " |", "| " + " | ".join(align) + " |"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in body]
    return "\n".join(out)


def next_rung(stage):
    """The footer of a stage page: a link to the next rung, or, on the last one, back to the docs."""
    i = STAGES.index(stage)
    if i + 1 < len(STAGES):
        return f"**Next rung:** [{STAGES[i + 1]}]({STAGES[i + 1]}.md) (back to the [docs](../index.md))"
    return "This is the last rung: back to the [docs](../index.md) and the [results](../results.md)."


def link(stage, page_dir=None):
    page_dir = page_dir or PAGE_DIR
    prefix = {"stages": "", "root": "docs/stages/"}.get(page_dir, "stages/")
    return f"[{stage}]({prefix}{stage}.md)"


def ladder_table(page_dir=None):
    page_dir = page_dir or PAGE_DIR
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
    measured = {r["stage"] for r in rows("ladder")}
    out += [[link(s, page_dir), NOT_MEASURED] + [""] * 11 for s in REDUCE if s not in measured]
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
        bounded = r["float_check"] != "skipped"
        body.append([r["stage"], r["regime"], r["combine"], f"{r['grid']} x {r['threads']}", r["abs_error"],
                     r["bound"] if bounded else "skipped", f"{f(r['error_bound_ratio']):.2g}" if bounded else "",
                     f"{r['launches_checked']} of {r['launches']}", r["check"]])
    return md_table(["stage", "regime", "combine", "first launch (blocks x threads)", "abs error", "bound",
                     "error / bound", "launches checked", "verdict"], body, ["---"] * 4 + ["---:"] * 4 + ["---"])


# The error study (--error-study, docs/results/error_bound.csv): the bound against the errors of random
# configurations. BINS are the edges of the distribution's columns.
ERROR_BINS = [0.01, 0.03, 0.1, 0.3, 0.5, 1.0]


def error_quantile(values, q):
    ordered = sorted(values)
    return ordered[int(q * (len(ordered) - 1))]


def error_study():
    """Every judged ratio of the study, by stage and in all; and how many configurations were not judged or failed."""
    data = rows("error_bound")
    judged = [r for r in data if r["check"] != "skipped"]
    by_stage = {s: [f(r["error_bound_ratio"]) for r in judged if r["stage"] == s] for s in REDUCE}
    # error_sigmas (each error over its sigma, for the centring test) came with a later harness than some results
    sigmas = {s: [f(r["error_sigmas"]) for r in judged if r["stage"] == s and r.get("error_sigmas")] for s in REDUCE}
    if not any(sigmas.values()):
        not_measured.add("the error study's signed errors: docs/results/error_bound.csv has no error_sigmas column")
    every = [v for vals in by_stage.values() for v in vals]
    return {"configs": len(data), "judged": len(judged), "skipped": len(data) - len(judged),
            "failed": sum(r["check"] == "FAIL" for r in data), "ratios": every, "by_stage": by_stage,
            "seeds": len({r["seed"] for r in data}), "max_n": max(int(r["n"]) for r in data), "sigmas": sigmas,
            "median": error_quantile(every, 0.5), "p99": error_quantile(every, 0.99), "max": max(every),
            "min": min(every)}


def error_study_table():
    """The distribution of error / bound per stage: quantiles and how many fall between the bins' edges."""
    study = error_study()
    edges = [0.0] + ERROR_BINS
    heads = [f"{lo:g} to {hi:g}" for lo, hi in zip(edges, edges[1:])] + [f"over {ERROR_BINS[-1]:g}"]
    body = []
    for stage, vals in [*study["by_stage"].items(), ("all", study["ratios"])]:
        if not vals:
            body.append([stage, "0"] + [NOT_MEASURED] * (5 + len(heads)))
            continue
        counts = [sum(lo < v <= hi or (lo == 0 and v == 0) for v in vals) for lo, hi in zip(edges, edges[1:])]
        counts.append(sum(v > ERROR_BINS[-1] for v in vals))
        z = study["sigmas"].get(stage)
        mean_z = "" if stage == "all" else f"{statistics.fmean(z):.3g} (limit {10 / len(z) ** 0.5:.2g})" if z \
            else NOT_MEASURED
        body.append([stage, str(len(vals)), *[f"{error_quantile(vals, q):.3g}" for q in (0.5, 0.9, 0.99, 1.0)],
                     mean_z, *[str(c) for c in counts]])
    return md_table(["stage", "configurations", "median", "90th pct", "99th pct", "max", "mean error / σ", *heads],
                    body, ["---"] + ["---:"] * (6 + len(heads)))


# The part of the default check a FAIL line names: "...: exact: launch 2 of 3: ..." -> "exact".
FAILED_CHECK = re.compile(r"^FAIL [^:]*: (exact|probe_a|probe_b|probe|float|timed|launches|cub|read|naive|cublas): ")
CHECK_NAMES = {"exact": "the exact check", "probe": "the precision probe", "probe_a": "the probe of A",
               "probe_b": "the probe of B", "float": "the float bound",
               "timed": "the check of every warm-up and timed launch", "launches": "the count of checked launches"}


def caught_by(r, m):
    """Which check caught a mutant: racecheck, or the part of the default check its FAIL line names."""
    if m.expect == "racecheck":
        return "racecheck"
    if m.expect == "sass":
        return "the machine code (`tests/check_sass.py`)"
    if "reported a first launch" in r["line"]:
        return "the launch shape (from the captured graph)"
    part = FAILED_CHECK.match(r["line"])
    return f"default check: {CHECK_NAMES.get(part.group(1), part.group(1))}" if part else "default check"


def mutant_results():
    """The planted bugs of tests/mutants.py with their measured rows; a mutant without one (added since the last
    ./ladder measure) is noted as not measured yet, and results of a mutant the table no longer has are left out."""
    measured = {r["mutant"]: r for r in rows("mutants")}
    for m in MUTANTS:
        if m.name not in measured:
            not_measured.add(f"planted bug {m.name}: no row in docs/results/mutants.csv")
    return [(m, measured[m.name]) for m in MUTANTS if m.name in measured]


def mutant_table():
    body = []
    for m, r in mutant_results():
        args = f"`{m.args}`" if m.args else "none (the default run)"
        args = "none (not run: compiled for sm_90 and read)" if m.expect == "sass" else args
        body.append([f"`{m.name}`", link(m.stage), m.bug, args, caught_by(r, m), r["verdict"],
                     "`" + r["line"].replace("|", "\\|") + "`"])
    return md_table(["mutant", "stage", "planted bug", "arguments", "caught by", "verdict", "what the stage printed"],
                    body, ["---"] * 7)


def mutant_verdict(name):
    """'caught by racecheck' / 'caught by the default check' / 'not caught', from mutants.csv."""
    r = select("mutants", mutant=name)
    how = {"racecheck": "racecheck", "sass": "the machine-code check"}.get(r["expect"], "the default check")
    return f"caught by {how}" if r["verdict"] == "caught" else f"not caught ({r['verdict']})"


def probe_best_line(regime):
    """Each stage's quickest block size in the probe: '01 512, 02 1024, ...'."""
    stages = dict.fromkeys(r["stage"] for r in rows(f"probe_{regime}"))
    return ", ".join(f"{s[:2]} {probe_rank(s, regime)}" for s in stages)


def repeats_bits(combine):
    """Every determinism run of a combine gave bitwise the same result, at every size."""
    return all(r["bitwise_identical"] == "true" for r in rows("determinism") if r["combine"] == combine)


def mutants_line():
    """What the planted bugs show of the check, from mutants.csv: how many the default check fails, which ones only
    racecheck reports, and any that got through."""
    every = [r for _, r in mutant_results()]
    data = [r for r in every if r["expect"] != "sass"]
    check = [r for r in data if r["expect"] == "fail"]
    race = [r for r in data if r["expect"] == "racecheck"]
    caught = sum(r["verdict"] == "caught" for r in check)
    words = (f"Of the {len(every)} [planted bugs]({docs_path('method.md#bugs-this-check-catches')}), {caught} of the "
             f"{len(check)} that the default run must catch fail their stage's check")
    if race:
        names = ", ".join(f"`{r['mutant']}`" for r in race)
        seen = sum(r["verdict"] == "caught" for r in race)
        words += (f"; the other {len(race)} ({names}) are races that need not change the sum, and "
                  f"`compute-sanitizer --tool racecheck` reports {seen} of them")
    sass = [r for r in every if r["expect"] == "sass"]
    if sass:
        words += (f"; the last {len(sass)} are orderings and scopes one GPU hides, and `tests/check_sass.py` refuses "
                  f"the machine code of {sum(r['verdict'] == 'caught' for r in sass)} of them")
    missed = [f"`{r['mutant']}`" for r in every if r["verdict"] != "caught"]
    return words + (f". Not caught: {', '.join(missed)}." if missed else ".")


def stage_table(stage):
    """This stage in both regimes, with the stage before it for comparison. × prev across regimes (02's stream row
    against 01's one launch, in the tree regime) is marked *, as in ./ladder run's table."""
    i = REDUCE.index(stage)
    body, crossed = [], False
    for regime in REGIMES:
        for st in ([REDUCE[i - 1]] if i else []) + [stage]:
            r = select(f"ladder_{regime}", stage=st)
            if r["regime"] != regime:
                continue  # 01 has no stream regime
            prev = select(f"ladder_{regime}", stage=REDUCE[REDUCE.index(st) - 1]) if REDUCE.index(st) else None
            mark = "*" if prev is not None and prev["regime"] != regime else ""
            crossed = crossed or bool(mark)
            body.append([regime, st if st != stage else f"**{st}**", r["grid"], f"{f(r['ms_median']):.3f}",
                         f"{f(r['gbps']):.0f}", f"{f(r['pct_peak']):.1f}",
                         "" if prev is None else f"{f(prev['ms_median']) / f(r['ms_median']):.2f}{mark}",
                         f"{f(r['x_cub']):.2f}"])
    table = md_table(["regime", "stage", "grid", "ms", "GB/s", "% of peak", "× prev", "× CUB"], body,
                     ["---", "---", "---:", "---:", "---:", "---:", "---:", "---:"])
    if crossed:
        table += (f"\n\n\\* against {REDUCE[0]}'s only launch, in the tree regime: {REDUCE[0]} has no loop, so no "
                  f"stream regime.")
    return table


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


def gbps_cell(v):
    """GB/s as a table prints it: three significant digits at least, so the smallest sizes still tell apart."""
    v = f(v)
    return f"{v:.0f}" if v >= 100 else f"{v:.3g}"


def sweep_label(r):
    return r["stage"] if r["combine"] == "relaunch" else f"{r['stage']} ({r['combine']})"


def sweep_table(step=2):
    """GB/s against n: every stage with a stream regime (07 with each combine), CUB and the read-only kernel from
    07's default-combine run; "-" where a stage was not run at that size."""
    data = rows("sweep_all")
    labels = list(dict.fromkeys(sweep_label(r) for r in data))
    sizes = sorted({int(r["n"]) for r in data})
    by = {(sweep_label(r), int(r["n"])): r for r in data}
    ref = next(l for l in labels if l.startswith(REDUCE[-1]))
    body = []
    for i, n in enumerate(sizes):
        if i % step and n != sizes[-1]:
            continue
        cells = [gbps_cell(by[(s, n)]["gbps"]) if (s, n) in by else "-" for s in labels]
        body.append([f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n), *cells,
                     gbps_cell(by[(ref, n)]["cub_gbps"]), gbps_cell(by[(ref, n)]["read_gbps"])])
    return md_table(["n", *labels, "CUB", "read-only kernel"], body)


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


def best_read():
    """The ladder row closest to (or furthest past) the read-only kernel: (its label, its % of read)."""
    r = max(rows("ladder"), key=lambda r: f(r["pct_read"]))
    label = r["stage"] + ("" if r["combine"] == "relaunch" else f" ({r['combine']})")
    return label, f"{f(r['pct_read']):.1f}"


def read_check_line():
    """The read-only kernel's own check in the ladder results, where the results record it."""
    data = rows("ladder")
    if "read_check" not in data[0]:
        return ("Its verdict in the results on these pages: not measured yet (they predate the `read_check` "
                "column; `./ladder measure` records it).")
    passed = sum(r["read_check"] == "PASS" for r in data)
    return f"In the ladder results it passed in {passed} of {len(data)} runs (`read_check` in `ladder.csv`)."


def time_delta(a, b, prefix=""):
    """Row b's median against row a's (the same prefix, e.g. "cub_"), in µs: 'X µs more' or 'X µs less' where the
    runs' spreads do not overlap, 'the same time within noise (X µs apart)' where they do."""
    d = 1e3 * (f(b[prefix + "ms_median"]) - f(a[prefix + "ms_median"]))
    if distinct(a, b, prefix, prefix) == 0:
        return said(f"the same time {NOISE} ({abs(d):.1f} µs apart)")
    return f"{abs(d):.1f} µs {'more' if d > 0 else 'less'}"


def flush_rows(n):
    return [select("flush", l2_flush=k, n=n) for k in ("clean", "write", "none")]


def flush_lines():
    """What the flush table shows, size by size, in generated words."""
    l2 = int(meta()["l2_bytes"])
    out = []
    for n in sorted({int(r["n"]) for r in rows("flush")}):
        clean, write, none = flush_rows(n)
        fits = which(4 * n <= l2, "fits in the L2", "does not fit in the L2")
        out.append(f"- n = {n} ({4 * n / 1e6:.0f} MB, {fits}): with no flush 07 is "
                   f"{compare_rows(clean, none, 'after a clean flush')}; after `write` 07 takes "
                   f"{time_delta(clean, write)} against `clean`, and CUB {time_delta(clean, write, 'cub_')}.")
    return "\n".join(out)


def flush_conclusion():
    """Skipping the flush, size by size, said once per outcome: quicker, slower or the same within noise."""
    groups = {-1: [], 0: [], 1: []}
    for n in sorted({int(r["n"]) for r in rows("flush")}):
        clean, _, none = flush_rows(n)
        groups[distinct(none, clean)].append(pow2(n))
    words = {-1: "makes 07 faster", 1: "makes 07 slower", 0: f"leaves 07 the same {NOISE}"}
    parts = [said(f"{words[k]} at n = {', '.join(v)}") for k, v in groups.items() if v]
    return "; it ".join(parts)


def flush_before_hold():
    """The same flush study as measured before the stream hold (flush_before_hold.csv, the results of commit
    21ec217): at each size, 07's time with no flush and after a clean flush, and the same now, in µs."""
    old = {(r["l2_flush"], r["n"]): f(r["ms_median"]) * 1e3 for r in rows("flush_before_hold")}
    now = {(r["l2_flush"], r["n"]): f(r["ms_median"]) * 1e3 for r in rows("flush")}
    body = [[pow2(n), f"{old[('none', n)]:.1f}", f"{old[('clean', n)]:.1f}", f"{now[('none', n)]:.1f}",
             f"{now[('clean', n)]:.1f}"]
            for n in sorted({k[1] for k in now}, key=int) if ("none", n) in old]
    return md_table(["n", "before: no flush µs", "before: clean µs", "now: no flush µs", "now: clean µs"], body)


def flush_compare(file, n):
    """07 with no flush against after a clean flush, at size n, in one of the two flush studies."""
    pick = {r["l2_flush"]: r for r in rows(file) if r["n"] == str(n)}
    return compare_rows(pick["clean"], pick["none"], "after a clean flush")


def hold_changed_hot(n):
    """Whether the stream hold changed the verdict on skipping the flush at size n: before it, no flush was not
    quicker than a clean flush, and now it is."""
    old = {(r["l2_flush"], r["n"]): f(r["ms_median"]) for r in rows("flush_before_hold")}
    clean, _, none = flush_rows(n)
    return old[("none", str(n))] >= old[("clean", str(n))] and distinct(none, clean) == -1


def flush_table():
    body = []
    for r in rows("flush"):
        body.append([f"`{r['l2_flush']}`", r["n"], f"{f(r['ms_median']) * 1e3:.1f}", f"{f(r['gbps']):.0f}",
                     f"{f(r['pct_peak']):.1f}", f"{f(r['cub_ms_median']) * 1e3:.1f}", f"{f(r['cub_gbps']):.0f}",
                     f"{f(r['cub_pct_peak']):.1f}"])
    return md_table(["--flush", "n", "07 µs", "07 GB/s", "07 % of peak", "CUB µs", "CUB GB/s", "CUB % of peak"], body)


def probe_rank(stage, regime, which="best"):
    """The fastest ("best") or slowest ("worst") block size of a stage in the probe."""
    data = stage_rows(f"probe_{regime}", stage)
    pick = max if which == "best" else min
    return pick(data, key=lambda r: f(r["gbps"]))["block"]


def probe_gbps(stage, regime, block, fmt=".0f"):
    return num(f"probe_{regime}", "gbps", fmt, stage=stage, block=block)


def sweep_best_n(stage, fmt=".1f"):
    """The sweep sizes at which a stage reached its best % of the peak, as the page prints it (ties all named)."""
    data = stage_rows("sweep", stage)
    best = max(format(f(r["pct_peak"]), fmt) for r in data)
    return " and ".join(pow2(r["n"]) for r in data if format(f(r["pct_peak"]), fmt) == best)


def gemm_extreme(field, pick, fmt=".2f", tile="16", pad="false"):
    return format(pick(f(r[field]) for r in rows("gemm") if r["tile"] == tile and r["pad"] == pad), fmt)


def tree_gbps_at_64():
    """The tree-regime probe's GB/s of 01 to 06 at 64 threads per block."""
    return ", ".join(probe_gbps(s, "tree", "64") for s in REDUCE[:6])


def sweep_max_range():
    """The range of 02 to 05's largest % of peak in the size sweep."""
    return value_range([sweep_max(s, ".0f") for s in REDUCE[1:5]])


def profiled_cases(gemm_variants):
    """The profiled runs a results table shows: every reduce stage in each regime it has, then the GEMM variants."""
    return [(s, "stream") for s in REDUCE if has_stream(s)] + [(s, "tree") for s in REDUCE] + \
        [(GEMM, v) for v in gemm_variants]


def stage_links():
    return ", ".join(link(s) for s in STAGES)


def sweep_max(stage, fmt=".1f"):
    return format(max(f(r["pct_peak"]) for r in stage_rows("sweep", stage)), fmt)


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
        m = re.search(r"\bLDS(?:\.U)?(\.\d+)?\b", line)  # sm_75 spells a shared load LDS.U, LDS.U.128
        if inside and m:
            name = "LDS" + (m.group(1) or "")
            counts[name] = counts.get(name, 0) + 1
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


def naive_dram_ratio():
    """Bytes the profiled naive GEMM read from DRAM over the bytes of A and B (square size)."""
    size = int(select("ncu", stage=GEMM, variant="naive")["n_or_size"])
    return ncu_value(GEMM, "naive", "dram") / (8 * size ** 2)


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


def bound_ratio_max():
    """The largest error over bound of the judged accuracy rows."""
    return max(f(r["abs_error"]) / f(r["bound"]) for r in rows("accuracy") if r["float_check"] == "PASS")


def bound_table():
    """The bound each stage's launch gets from its own shape (common/oracle.cpp, stage_shape), relative to the exact
    sum, against the CPU loop's worst case n u."""
    body = []
    for n in accuracy_sizes():
        cells = [pow2(n)]
        for stage in REDUCE:
            r = [x for x in rows("accuracy") if x["stage"] == stage and int(x["n"]) == n]
            cells.append(f"{f(r[0]['bound']) / f(r[0]['reference']):.1e}" if r else NOT_MEASURED)
        body.append(cells + [f"{n * 2.0 ** -24:.1e}"])
    return md_table(["n", *REDUCE, "CPU float loop, n u"], body)


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
    gap = [n for n in sizes if all(100 * series[s][n] < series["CPU float loop"][n] for s in REDUCE if s in series)]
    start = next((n for i, n in enumerate(sizes) if all(m in gap for m in sizes[i:])), None)
    if start is None:
        return " At no size here is every tree two orders of magnitude closer than the loop."
    return (f" From n = {pow2(start)} on, every tree is closer to the exact sum than the loop by two orders of magnitude "
            f"or more: there, a GPU sum that differs from a CPU loop's says more about the loop.")


def stage_error_range(n):
    vals = [accuracy_series()[s][n] for s in REDUCE if s in accuracy_series()]
    return f"{min(vals):.1e} to {max(vals):.1e}"


def loop_stalls():
    """Whether the CPU float loop's result at the largest n is exactly 2^24 (stuck: every later input is below half
    an ulp of the running sum)."""
    r = cpu_row(accuracy_sizes()[-1])
    return f(r["float_loop"]) == 2.0 ** 24


# ---- experiments kept as patches ------------------------------------------------------------------------

def experiments_section(stage):
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


def float4_share():
    """Of the stream-regime time 06 saves over 05, the share that float4 alone (kLoadsInFlight = 1) saves, in %."""
    data = "try_06_float4_kLoadsInFlight"
    t05 = f(select("ladder_stream", stage="05_shuffle")["ms_median"])
    one = f(select(data, variant="kLoadsInFlight = 1", regime="stream")["ms_median"])
    file = f(select(data, variant=rows(data)[0]["variant"], regime="stream")["ms_median"])
    return 100 * (t05 - one) / (t05 - file)


# docs/results/memcheck.txt: the output of `./ladder measure`'s compute-sanitizer memcheck runs of 06, each run
# introduced by a line "$ <the command>" and closed by its "========= ERROR SUMMARY: N errors" line.
MEMCHECK_SUMMARY = re.compile(r"ERROR SUMMARY: (\d+) error")


def memcheck_runs():
    """[(command, errors)] from docs/results/memcheck.txt, or None where it has not been measured."""
    path = RESULTS / "memcheck.txt"
    if not path.exists():
        return None
    runs, command = [], None
    for line in path.read_text().splitlines():
        if line.startswith("$ "):
            command = line[2:].strip()
        m = MEMCHECK_SUMMARY.search(line)
        if m:
            runs.append((command, int(m.group(1))))
            command = None
    if not runs or any(c is None for c, _ in runs):
        raise DocsError("docs/results/memcheck.txt: every run must start with '$ <command>' and end with its "
                        "ERROR SUMMARY line")
    return runs


def docs_path(target):
    """A path under docs/ as the page being rendered links it."""
    return {"stages": "../", "root": "docs/"}.get(PAGE_DIR, "") + target


def memcheck_line():
    runs = memcheck_runs()
    if runs is None:
        return ("compute-sanitizer memcheck on this stage: not measured yet (`./ladder measure` writes "
                "`docs/results/memcheck.txt`).")
    errors = sum(e for _, e in runs)
    cmds = "; ".join(f"`{c}`" for c, _ in runs)
    if errors == 0:
        return (f"compute-sanitizer memcheck reports 0 errors (no access outside an allocation, none misaligned) in "
                f"{cmds}; a read just past either end of the input would meet the NaN guards around it and fail the "
                f"check ([over-reads]({docs_path('method.md#what-a-pass-proves')})).")
    return f"compute-sanitizer memcheck reports {errors} errors in {cmds}: see `docs/results/memcheck.txt`."


def racecheck():
    text = (RESULTS / "racecheck.txt").read_text().strip()
    return "```\n" + text + "\n```"


def build_time_line():
    """How long first builds took, from docs/results/first_build.json (one record, or a list of them, each written
    by a first ./ladder build: copy <build>/first_build.json there, or add it to the list)."""
    path = RESULTS / "first_build.json"
    if not path.exists():
        raise DocsError("docs/results/first_build.json is missing: copy <build>/first_build.json from a fresh clone's "
                        "first ./ladder build")
    data = json.loads(path.read_text())
    builds = data if isinstance(data, list) else [data]

    def took(b):
        s = int(b["seconds"])
        return f"{s} s" if s < 120 else f"{s / 60:.0f} minutes"

    def where(b):
        return f"{b['cpus']} CPU cores, {'without a GPU' if b['gpu'] == 'none' else 'with a GPU'}"

    if len(builds) == 1:
        b = builds[0]
        return f"on a machine with {where(b)}, it took {took(b)} ({b['command']}, on {b['date']})."
    listed = "; ".join(f"{took(b)} with {where(b)} ({b['command']}, on {b['date']})" for b in builds)
    return (f"the recorded first builds took {listed}. They are not runs of one command on one quiet machine, so take "
            f"them as a rough guide.")


# The result files whose rows carry the clocks of their timed series (common/gpu_clocks.hpp): every timed study.
def clocked():
    return ["ladder", "gemm", "sweep_all", "multiblock", "combine_tree", "flush", "probe_stream", "probe_tree"] + \
        sorted(p.stem for p in RESULTS.glob("try_*.csv"))


def clock_summary():
    """Over every timed series in the results: the SM and memory clocks read at their first and last
    repetitions, how many series reported throttling (and why), and how many stream holds timed out."""
    s = {"series": 0, "sm": set(), "mem": set(), "throttled": 0, "reasons": set(), "timeouts": 0}
    for name in clocked():
        try:
            data = rows(name)
        except DocsError:
            continue
        for r in data:
            if not r.get("sm_clock_start_mhz"):
                continue
            s["series"] += 1
            s["sm"].update(int(r[k]) for k in ("sm_clock_start_mhz", "sm_clock_end_mhz"))
            s["mem"].update(int(r[k]) for k in ("mem_clock_start_mhz", "mem_clock_end_mhz"))
            s["timeouts"] += int(r.get("hold_timeouts") or 0)
            if r.get("throttled") == "yes":
                s["throttled"] += 1
                s["reasons"].update(r["clock_reasons"].split("+"))
    return s


def _mhz(values):
    lo, hi = min(values), max(values)
    return f"{lo} MHz throughout" if lo == hi else f"between {lo} and {hi} MHz"


def peak_line():
    """The theoretical peak and, where the results record them, the attributes it is computed from."""
    r = rows("ladder")[0]
    peak = f"{f(meta()['peak_gbps']):.0f} GB/s"
    if not r.get("mem_clock_mhz"):
        return peak
    return f"2 × {r['mem_clock_mhz']} MHz × {r['bus_width_bits']} bits / 8 = {peak}"


def clocks_line():
    """What the clocks of the measured series were, and whether any throttled: a sentence from the results."""
    s = clock_summary()
    if not s["series"]:
        return "The results on these pages carry no clock readings: *not measured yet*."
    throttle = (f"{s['throttled']} of them reported throttling ({', '.join(sorted(s['reasons']))})" if s["throttled"]
                else "none of them reported throttling")
    return (f"Over the {s['series']} timed series of the stages in the results on these pages (each row's own; the "
            f"references' series beside them are checked and warned about the same way, not recorded) the SM clock "
            f"read {_mhz(s['sm'])} and the memory clock {_mhz(s['mem'])}; {throttle}.")


def hold_timeouts():
    s = clock_summary()
    if not s["series"]:
        return "*not measured yet*"
    return (f"{s['timeouts']} repetitions were not held to the end over the stages' {s['series']} timed series"
            if s["timeouts"] else f"no hold timed out over the stages' {s['series']} timed series")


def provenance():
    m = meta()
    s = clock_summary()
    clocks = ""
    if s["series"]:
        clocks = (f" SM clock {_mhz(s['sm'])}, memory clock {_mhz(s['mem'])} over the timed series"
                  + (f"; **the GPU throttled in {s['throttled']} of {s['series']} series** "
                     f"({', '.join(sorted(s['reasons']))})." if s["throttled"] else "; no throttling reported."))
    profile = m.get("profile")
    profiled = (f" The profiler's rows, the saved machine code and the sanitizer reports ({', '.join(profile['files'])}) "
                f"come from the measurement at {profile['commit']} on {profile['date']}: {profile['why']}."
                if profile else "")
    return (f"Measured on an {m['device']} (compute capability {m['compute_capability']}, {m['sms']} SMs, "
            f"{int(m['l2_bytes']) / 1e6:.1f} MB L2, {f(m['peak_gbps']):.0f} GB/s theoretical from the device "
            f"attributes), driver {m['driver']}, CUDA runtime {m['cuda_runtime']}, nvcc \"{m['nvcc']}\", "
            f"at commit {m['commit']} on {m['date']}, with `{m['command']}`.{clocks}{profiled}")


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


def excerpt(stage, start, end, through=False):
    """Lines of a stage file from the first line containing `start` up to the first after it containing `end`
    (that line too, with through), blank lines at its end dropped."""
    lines = stage_file(stage).read_text().splitlines()
    a = next(i for i, l in enumerate(lines) if start in l)
    b = next(i for i in range(a, len(lines)) if end in lines[i]) + (1 if through else 0)
    return "```cuda\n" + "\n".join(lines[a:b]).rstrip("\n") + "\n```"


def img(name, alt, page_dir=None):
    page_dir = page_dir or PAGE_DIR
    prefix = {"stages": "../", "root": "docs/"}.get(page_dir, "")
    return f"![{alt}]({prefix}img/{name})"


# ---- charts ---------------------------------------------------------------------------------------------

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
        stage_row = row[0].split(" ")[0] in REDUCE
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
    "gemm.png": (lambda: [gemm_table(tile="16")], marks_gemm, lambda: {"FP32 peak": round(fp32_peak(), 1)}),
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
    stage = next((s for s in STAGES if name == s or name.startswith(s + " ")), None)
    if stage is None:
        return {}
    i = STAGES.index(stage)
    return dict(color=f"C{i % 10}", marker=STAGE_MARKERS[i % len(STAGE_MARKERS)])


def draw_charts():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m = meta()
    peak = f(m["peak_gbps"])
    title_gpu = f"{m['device']}, CUDA {m['cuda_runtime']}"
    IMG.mkdir(parents=True, exist_ok=True)
    plt.rcParams.update({"figure.dpi": 110, "font.size": 9})
    n_ladder, reps = rows("ladder")[0]["n"], rows("ladder")[0]["reps"]

    # The ladder: a bar per row of the table and regime (none where a stage has no such regime), and its reference rows.
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
    data = chart_data("sweep.png")
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
    data = chart_data("roofline.png")
    fig, ax = plt.subplots(figsize=(8, 4.4))
    bw, fp32 = data["refs"]["peak GB/s"], data["refs"]["FP32 peak"]
    xs = [2 ** (i / 4) for i in range(-12, 48)]
    ax.plot(xs, [min(fp32, x * bw) for x in xs], color="black", linewidth=1.5, label="roof: min(FP32 peak, FLOP/B × peak GB/s)")
    for mk in data["marks"]:
        ax.plot([mk["x"]], [mk["y"]], marker="o" if mk["x"] < 1 else "s", linestyle="none", label=mk["label"])
    finish_log_log(fig, ax, "arithmetic intensity (FLOP per byte moved)", "GFLOP/s", f"Roofline ({title_gpu})",
                   "roofline.png")


# ---- rendering ------------------------------------------------------------------------------------------

# Every {{ expression }} and {% tag %} of a template (the claims check reads the words around them).
PLACEHOLDER = re.compile(r"\{\{(.+?)\}\}|\{%-?(.+?)-?%\}", re.S)
PAGE_DIR = "."  # the folder of the page being rendered: "root" (README.md), "." (docs/) or "stages"


class NotMeasuredValue:
    """What a helper gives a template where its results are missing (NotMeasured): it prints as *not measured yet*,
    is false as a condition, compares false, and stays itself through indexing, arithmetic and format(), so a page
    says "not measured yet" where the number would be and asserts nothing that rests on it."""

    def __str__(self):
        return NOT_MEASURED

    __format__ = lambda self, spec: NOT_MEASURED  # noqa: E731
    __bool__ = lambda self: False  # noqa: E731
    __len__ = lambda self: 0  # noqa: E731
    __iter__ = lambda self: iter(())  # noqa: E731

    def _self(self, *args, **kwargs):
        return self

    __getitem__ = __getattr__ = __call__ = _self
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _self
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __pow__ = __rpow__ = __neg__ = _self

    def _false(self, other):
        return False

    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = _false
    __hash__ = object.__hash__


NM = NotMeasuredValue()


def template_helper(fn):
    """fn as a template sees it: NotMeasured, raised anywhere inside, or a not-measured argument, gives NM."""
    def call(*args, **kwargs):
        if any(a is NM for a in (*args, *kwargs.values())):
            return NM
        try:
            return fn(*args, **kwargs)
        except NotMeasured:
            return NM
    return call


def jinja_environment():
    """Jinja2, set up for Markdown: a tag alone on its line takes the line with it (trim_blocks, lstrip_blocks),
    nothing is escaped, and an unknown name is an error, not an empty string."""
    try:
        import jinja2
    except ImportError:
        raise DocsError("the docs need Jinja2 (apt-get install python3-jinja2, or pip install jinja2); ./ladder "
                        "installs it unless LADDER_NO_INSTALL=1") from None
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True, autoescape=False)
    helpers = {name: obj for name, obj in globals().items() if callable(obj) and not isinstance(obj, type)}
    helpers.update(format=format, int=int, float=float, len=len, min=min, max=max, round=round, str=str, abs=abs,
                   any=any, all=all)
    env.globals.update({name: template_helper(fn) for name, fn in helpers.items()})
    env.globals.update(STAGES=STAGES, REDUCE=REDUCE, GEMM=GEMM)
    return env


def render(template):
    return render_text(template.read_text(), template.relative_to(TEMPLATES))


def render_text(text, rel):
    """A template's text rendered as the page docs/templates/<rel> would be."""
    global PAGE_DIR
    import jinja2
    rel = pathlib.Path(rel)
    PAGE_DIR = "root" if rel.name == "README.md" else (rel.parent.name or ".")
    try:
        body = jinja_environment().from_string(text).render()
    except DocsError:
        raise
    except jinja2.TemplateSyntaxError as e:
        raise DocsError(f"{rel}:{e.lineno}: {e.message}") from None
    except Exception as e:  # a broken placeholder names the page and the error
        raise DocsError(f"{rel}: {type(e).__name__}: {e}") from None
    header = f"<!-- Generated by scripts/make_docs.py from docs/templates/{rel} and docs/results/. Edit the template, then run ./ladder docs. -->\n"
    return header + autolink(body, rel)


# ---- glossary links: each page links a term of docs/glossary.md where it first uses it -----------------------------

GLOSSARY_ENTRY = re.compile(r'<a id="([^"]+)"></a>(?:\*\*([^*]+)\*\*|`([^`]+)`)')
# Words a page uses for a glossary entry besides its own name. Entries not named here link by their name alone.
GLOSSARY_FORMS = {
    "stage": [], "thread": [], "block": [], "grid": [], "gbs": [], "cub": [], "prev": [],  # too common to link
    "regime": [], "stream-regime": ["stream regime"], "tree-regime": ["tree regime"],
    "speed-of-light": ["speed of light", "read-only kernel"], "theoretical-peak": ["theoretical peak"],
    "warp": ["warp", "warps"], "sm": ["SM", "SMs"], "bank": ["banks"], "bank-conflict": ["bank conflict", "bank conflicts"],
    "wavefront": ["wavefront", "wavefronts"], "divergence": ["divergence", "diverges"],
    "predication": ["predicated", "predication"], "loop-unrolling": ["loop unrolling", "unrolled"],
    "syncwarp": ["__syncwarp()"], "shuffle": ["shuffle", "shuffles", "__shfl_down_sync"],
    "vectorized-loads": ["vectorized loads", "16-byte loads", "vector loads"], "coalesced": ["coalesced"],
    "atomic": ["atomicAdd", "atomics"], "two-pass": ["two-pass"], "last-block": ["last-block"],
    "acquire-release": ["acquire-release", "acq_rel"], "occupancy": ["occupancy"], "data-race": ["data race", "race"],
    "interleaved-addressing": ["interleaved tree", "interleaved addressing"],
    "sequential-addressing": ["sequential addressing"], "grid-stride-loop": ["grid-stride loop"],
    "shared-memory": ["shared memory"], "padding": ["padding"], "l2-flush": ["L2 flush"],
    "within-noise": ["within noise"], "oracle": ["oracle"], "exact-check": ["exact check"],
    "float-bound": ["float bound"], "summation-depth": ["summation depth"], "ulp": ["ulp", "ulps"],
    "kahan-summation": ["Kahan"], "planted-bug": ["planted bug", "planted bugs", "mutants"],
    "deterministic": ["deterministic", "determinism"], "nsight-compute": ["Nsight Compute"], "sass": ["SASS"],
    "stall-reason": ["stall reason", "stall reasons", "top stall"],
    "threads-on-per-instruction": ["threads on per instruction"], "dram-throughput": ["DRAM throughput"],
    "gemm": ["GEMM", "SGEMM"], "tile": ["tile", "tiles"], "register-tiling": ["register tiling"],
    "fp32-peak": ["FP32 peak"], "tf32": ["TF32", "tensor cores"], "roofline": ["roofline"],
    "arithmetic-intensity": ["arithmetic intensity"],
}
INLINE = re.compile(r"(`[^`\n]+`|!?\[(?:[^\[\]]|\[[^\]]*\])*\]\([^)]*\)|<[^>\n]+>)")


def glossary_terms():
    """[(form, anchor, in code only)] from docs/templates/glossary.md, the longest forms first. An entry named in
    code (a stall reason) links only where a page writes it as code: `wait`, not the word wait."""
    terms = []
    for anchor, bold, code in GLOSSARY_ENTRY.findall((TEMPLATES / "glossary.md").read_text()):
        forms = GLOSSARY_FORMS.get(anchor)
        forms = [(bold or code).strip("`")] if forms is None else forms
        terms += [(form, anchor, bool(code)) for form in forms]
    return sorted(terms, key=lambda t: -len(t[0]))


def term_pattern(form):
    flags = 0 if any(c.isupper() for c in form[1:]) or form.isupper() else re.I
    return re.compile(r"(?<![\w-])" + re.escape(form) + r"(?![\w-])", flags)


def autolink(text, rel):
    """Links the first use of each glossary term in a page's prose (not in headings, tables, code blocks, links or
    other code; a code span that is exactly the term is linked whole)."""
    if str(rel) == "glossary.md":
        return text
    target = docs_path("glossary.md")
    done, lines, fenced = set(), text.split("\n"), False
    terms = [(form, anchor, None if code else term_pattern(form)) for form, anchor, code in glossary_terms()]
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fenced = not fenced
        if fenced or line.startswith(("#", "|", "```", "<!--", "![")) or not line.strip():
            continue
        for form, anchor, pattern in terms:
            if anchor in done:
                continue
            parts = INLINE.split(line)
            for k, part in enumerate(parts):
                if k % 2:  # code, a link or a tag: linked only when it is the term itself, in code
                    if part == f"`{form}`":
                        parts[k] = f"[{part}]({target}#{anchor})"
                        break
                    continue
                m = pattern.search(part) if pattern else None
                if m:
                    parts[k] = part[:m.start()] + f"[{m.group(0)}]({target}#{anchor})" + part[m.end():]
                    break
            else:
                continue
            done.add(anchor)
            line = "".join(parts)
        lines[i] = line
    return "\n".join(lines)


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


def outside_blocks(text):
    """The template with the words inside {% if %} ... {% endif %} blanked (newlines kept): a comparative there is
    asserted only where its condition, computed from the results, holds."""
    out, depth, pos = [], 0, 0
    for m in PLACEHOLDER.finditer(text):
        chunk = text[pos:m.start()]
        out.append(chunk if depth == 0 else re.sub(r"[^\n]", " ", chunk))
        tag_words = (m.group(2) or "").split()
        depth += {"if": 1, "endif": -1}.get(tag_words[0] if tag_words else "", 0)
        out.append(re.sub(r"[^\n]", " ", m.group(0)))
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def lint_template(rel, text, facts):
    """A template's own words: no hardware fact, no comparative word outside ALLOWED or an {% if %}."""
    problems = []
    body = PLACEHOLDER.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)  # line numbers kept
    unguarded = outside_blocks(text).splitlines()
    for lineno, line in enumerate(body.splitlines(), 1):
        clean = unguarded[lineno - 1] if lineno <= len(unguarded) else ""
        for phrase in ALLOWED:
            clean = clean.replace(phrase, "")
        for m in COMPARATIVE.finditer(re.sub(r'"[^"]*"', " ", clean)):  # a word in quotes is named, not used
            problems.append(f"{rel}:{lineno}: the comparative '{m.group(0)}' is typed, not generated: use "
                            f"compare_rows(), speedup() or which() so it follows the numbers")
        for fact in facts:
            if re.search(FACT.format(re.escape(fact)), line):
                problems.append(f"{rel}:{lineno}: '{fact}' is a fact of the measured GPU typed into the template")
    return problems


SPEED_WORD = re.compile(r"\b(faster|slower|quicker)\b", re.I)


def lint_rendered(rel, text):
    """A rendered page: every 'N× faster' or 'N× slower' has N above 1, and every 'faster' or 'slower' in its prose
    is one that compare_rows() said (so its runs' spreads do not overlap), not words inside a placeholder."""
    problems = [f"{rel}: '{m.group(0)}' says {m.group(2)} with a ratio of {m.group(1)}"
                for m in SPEED_CLAIM.finditer(text) if float(m.group(1)) <= 1.0]
    prose = link_text(outside_code(text))
    for phrase in sorted(_said | ALLOWED, key=len, reverse=True):
        prose = prose.replace(phrase, " ")
    for line in prose.splitlines():
        for m in SPEED_WORD.finditer(re.sub(r'"[^"]*"', " ", line)):  # a word in quotes is named, not used
            problems.append(f"{rel}: '{m.group(0)}' in \"{line.strip()[:100]}\" does not come from compare_rows()")
    return problems


def link_text(text):
    """Markdown with every link replaced by its text, as a reader reads it."""
    return re.sub(r"(?<!!)\[([^\[\]]*)\]\([^)]*\)", r"\1", text)


def guarded_problems(rel, template_text, text, guarded):
    """The sentences the synthetic GPU makes false: each still in its template, inside an {% if %}, and absent from
    the page rendered from the synthetic results."""
    problems = []
    template_text, text = " ".join(template_text.split()), " ".join(link_text(text).split())
    for page, words in guarded:
        if page != rel:
            continue
        at = template_text.find(words)
        before = template_text[:max(at, 0)]
        depth = len(re.findall(r"\{%[-+]?\s*if\b", before)) - len(re.findall(r"\{%[-+]?\s*endif\s*[-+]?%\}", before))
        if at < 0:
            problems.append(f"{rel}: the guarded sentence \"{words}\" (tests/synthetic_gpu.py) is not in the template")
        elif depth <= 0:
            problems.append(f"{rel}: \"{words}\" states a cause outside any {{% if %}}")
        if words in text:
            problems.append(f"{rel} (synthetic GPU): \"{words}\" is asserted where its condition fails")
    return problems


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
                problems += [p.replace(f"{rel}:", f"{rel} (synthetic GPU):", 1) for p in lint_rendered(rel, text)]
                problems += guarded_problems(str(template.relative_to(TEMPLATES)), template.read_text(), text,
                                             synthetic_gpu.GUARDED)
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


# ---- links: every relative link and anchor in README.md and docs/ resolves -------------------------------------

LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


def without_code(text):
    """Markdown without fenced code blocks and inline code: what a reader sees as prose, links included."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def slug(heading):
    """GitHub's anchor for a heading: its visible text, lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").replace("*", "").strip().lower()
    return re.sub(r" ", "-", re.sub(r"[^\w\- ]", "", text))


def anchors(text):
    """Every anchor a page defines: its headings (numbered -1, -2 when repeated, as GitHub does) and <a id>."""
    found, seen = set(), {}
    for line in re.sub(r"^```.*?^```", "", text, flags=re.S | re.M).splitlines():
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            base = slug(m.group(1))
            k = seen.get(base, 0)
            seen[base] = k + 1
            found.add(base if k == 0 else f"{base}-{k}")
    return found | set(HTML_ANCHOR.findall(text))


def check_links(texts):
    """texts: {path: Markdown}. Every relative link's file exists and every #anchor is on its page; web links are
    not followed (this is a CPU test without a network)."""
    problems, cache = [], {}

    def anchors_of(path):
        if path not in cache:
            cache[path] = anchors(texts[path] if path in texts else path.read_text())
        return cache[path]

    for page, text in texts.items():
        for m in LINK.finditer(without_code(text)):
            target = m.group(2)
            if re.match(r"[a-z]+:", target):
                continue
            file_part, _, anchor = target.partition("#")
            dest = (page.parent / file_part).resolve() if file_part else page
            rel = page.relative_to(ROOT)
            if file_part and not dest.exists() and dest not in texts:
                problems.append(f"{rel}: the link [{m.group(1)}]({target}) points to a file that does not exist")
            elif anchor and dest.suffix == ".md" and anchor not in anchors_of(dest):
                problems.append(f"{rel}: the link [{m.group(1)}]({target}) names an anchor #{anchor} that "
                                f"{dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest.name} does not have")
    return problems


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
        # a's median inside b's range, b's above every one of a's repetitions: told apart from b's side only
        "a difference seen from one side only": [] if distinct(
            {"ms_median": "1.0", "ms_min": "0.9", "ms_max": "1.3"},
            {"ms_median": "1.35", "ms_min": "0.95", "ms_max": "1.4"}) != -1 else ["told apart"],
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
            page, words = synthetic_gpu.GUARDED[1]
            planted_text = f"The top stall says it: {{% if True %}}{words}{{% endif %}}."  # a condition that is no test
            planted["a causal sentence false on the synthetic GPU"] = [
                p for p in guarded_problems(page, planted_text, render_text(planted_text, page), synthetic_gpu.GUARDED)
                if "synthetic GPU" in p]
        finally:
            use_results(real)
    with tempfile.TemporaryDirectory() as tmp:  # a stage without results, as when a rung is added
        for path in real.iterdir():
            text = path.read_text()
            if path.suffix == ".csv":
                text = "\n".join(l for l in text.split("\n") if not l.startswith(REDUCE[4] + ","))
            (pathlib.Path(tmp) / path.name).write_text(text)
        use_results(tmp)
        not_measured.clear()
        try:
            texts = [render(t) for t in pages().values()]
            planted["a stage without results"] = [f"{n}, and the README says {NOT_MEASURED}" for n in sorted(not_measured)
                                                  if NOT_MEASURED in texts[0] + "".join(texts)]
        except Exception as e:  # noqa: BLE001 (what the check must not do is die on it)
            planted["a stage without results"] = []
            print(f"docs self-test: rendering without {REDUCE[4]}'s results failed: {type(e).__name__}: {e}")
        finally:
            use_results(real)
            not_measured.clear()
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
    missed = [name for name, found in planted.items() if not found]
    for name, found in planted.items():
        print(f"docs self-test: {name}: {'caught: ' + str(found[0]) if found else 'MISSED'}")
    return 1 if missed else 0


DOCS_HELP = """\
render docs/ and README.md from docs/templates/ and the result files in docs/results/, which ./ladder measure
writes on a GPU: every number, table and chart comes from those files (charts need matplotlib; without it the
pages are written and the charts left as they are)."""
DOCS_EXAMPLES = """\
examples:
  ./ladder docs               render the pages and draw the charts
  ./ladder docs --check       change nothing: fail if a page differs from what the templates and results give, a
                              result file or chart is missing or disagrees with its table, a link does not
                              resolve, or a template types a fact of one GPU or a comparative word
  ./ladder docs --self-test   plant such claims and demand that --check catches each"""


class OneLineParser(argparse.ArgumentParser):
    """argparse, with its errors in the one-line form every ./ladder command uses."""

    def error(self, message):
        print(f"ladder: error: {message} (see ./ladder docs --help)", file=sys.stderr)
        sys.exit(2)


def main():
    p = OneLineParser(prog="./ladder docs", description=DOCS_HELP, epilog=DOCS_EXAMPLES, allow_abbrev=False,
                      formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true", help="compare instead of writing")
    p.add_argument("--self-test", action="store_true", help="plant wrong claims and demand that the checks catch them")
    a = p.parse_args()
    try:
        import jinja2  # noqa: F401
    except ImportError:  # a missing tool, not a wrong page: CTest reports the docs tests skipped, with this line
        print("SKIPPED: the docs need Jinja2 (apt-get install python3-jinja2, or pip install jinja2; ./ladder "
              "installs it unless LADDER_NO_INSTALL=1)", file=sys.stderr)
        return 77
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
        problems += check_claims() + stale_diagrams(IMG)
        problems += check_links(rendered)
        problems += check_charts(rendered)
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
            print(f"docs: not measured yet: {note} (the pages say so; run ./ladder measure on a GPU)")
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
    print(f"drew {', '.join(write_diagrams(IMG))} in docs/img/", file=sys.stderr)
    remaining = [p for p in check_structure()]
    for problem in remaining:
        print(f"docs: {problem}", file=sys.stderr)
    return 1 if remaining else 0


if __name__ == "__main__":
    sys.exit(main())
