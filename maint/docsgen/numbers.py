"""The numbers the prose quotes, from the result files: the profiler's counters, 07 at small n, the probe and the
sweep, accuracy, GEMM, the CPU, the planted bugs and where the results were measured."""
import collections
import math
import re
import statistics
import struct

from ..measure import NCU_SHORT, STUDY_LOG2, study_sigmas
from ..mutants import MUTANTS
from maint import gemm_stage, has_stream
from scripts.run import cpu_stage_row
from scripts.stages import combine_stage, combines, reduce_stages, regimes, relative_error, row_label
from .base import (and_list, common_constant, default_combine, default_of, DocsError, f, json_result, meta,
                   not_measured, option, pow2, rows, select, stage_rows, state, value_range)

# ---- the profiler (docs/results/ncu.csv), a counter by its short name (maint/measure.py's NCU_COUNTERS) -------------
def ncu_value(stage, variant, metric): return f(select("ncu", stage=stage, variant=variant)[NCU_SHORT.get(metric, metric)])
def ncu(stage, variant, metric, fmt=",.0f"): return format(ncu_value(stage, variant, metric), fmt)
def ncu_ratio(stage, variant, a, b, fmt=".2f"): return format(ncu_value(stage, variant, a) / ncu_value(stage, variant, b), fmt)
def ncu_size(stage, variant):  # the profiled n or size: '2^24' -> 16777216, '2048' -> 2048
    base, _, exp = select("ncu", stage=stage, variant=variant)["n_or_size"].partition("^")
    return int(base) ** int(exp) if exp else int(base)
def conflict_count(stage, variant): return ncu_value(stage, variant, "conflicts_ld") + ncu_value(stage, variant, "conflicts_st")
def conflicts(stage, variant): return f"{conflict_count(stage, variant):,.0f}"
def ncu_change(stage_a, stage_b, variant, metric, variant_b=None):
    """'16% fewer' / '3% more': a counter from one profiled kernel to another."""
    a, b = ncu_value(stage_a, variant, metric), ncu_value(stage_b, variant_b or variant, metric)
    return f"{abs(100 * (b - a) / a):.0f}% {'fewer' if b < a else 'more'}"
def stalls(stage, variant):
    """The top stall reasons of a profiled kernel, with warp-cycles stalled per issued instruction."""
    r = select("ncu", stage=stage, variant=variant)
    return ", ".join(f"`{r[f'stall_{i}']}` ({f(r[f'stall_{i}_per_issue']):.1f})" for i in (1, 2, 3) if r.get(f"stall_{i}"))

# What each stall reason means, said wherever a page names a top stall (the glossary has the longer form).
STALL_MEANING = {"long_scoreboard": "waiting for a global-memory load", "barrier": "waiting at a block barrier",
                 "mio_throttle": "waiting for room in the queue of the MIO unit, which serves shared memory",
                 "short_scoreboard": "waiting for the result of a shared-memory or other MIO instruction",
                 "not_selected": "ready, but another warp was chosen", "wait": "a fixed wait the compiler scheduled",
                 "lg_throttle": "waiting for room in the queue of global-memory instructions",
                 "math_pipe_throttle": "waiting for a busy arithmetic pipe", "dispatch_stall": "held at dispatch",
                 "branch_resolving": "waiting for a branch target", "membar": "waiting at a memory barrier",
                 "no_instruction": "waiting for instructions to be fetched", "drain": "draining its stores at exit"}

def stall_meaning(stage, variant):
    reason = select("ncu", stage=stage, variant=variant)["stall_1"]
    return f"`{reason}` ({STALL_MEANING.get(reason, 'see the glossary')})"
def profiled_cases(gemm_variants):
    return [(s, "stream") for s in reduce_stages() if has_stream(s)] + [(s, "tree") for s in reduce_stages()] + \
        [(gemm_stage(), v) for v in gemm_variants]

# ---- 07 at small n (the size sweep's rows of every combine), and time per block in the tree regime -----------------
SMALL_N_MAX = 2 ** 22  # where the fixed costs of a launch are still a large share of the time

def sweep_07(combine):  # 07's size-sweep rows of one combine, by n
    return {int(r["n"]): r for r in rows("sweep_all") if (r["stage"], r["combine"]) == (combine_stage(), combine)}
def us(r, field="ms_median"): return 1e3 * f(r[field])
def one_block_sizes(): return [n for n, r in sorted(sweep_07("atomic").items()) if r["grid"] == "1"]
def combine_sizes(hi=SMALL_N_MAX): return [n for n, r in sorted(sweep_07("atomic").items()) if r["grid"] != "1" and n <= hi]
def floor_us(field): return f"{statistics.median(us(r, field) for r in sweep_07('atomic').values()):.2f} µs"
def x_cub(combine): return [f(r["x_cub"]) for r in sweep_07(combine).values()]
def sweep_span(): return f"{pow2(min(sweep_07('atomic')))} to {pow2(max(sweep_07('atomic')))}"
def pct_read_range(combine, sizes): return value_range([f"{f(sweep_07(combine)[n]['pct_read']):.0f}" for n in sizes]) + "%"

def us_range(combine, sizes, field="ms_median", less=None):
    """The range of 07's times at these sizes in µs: a column of a combine's rows (combine "all": of every combine's),
    less the read-only kernel's time in the same run (less="read") or another combine's time."""
    def value(c, n):
        r = sweep_07(c)[n]
        return us(r, field) - (0 if less is None else us(r, "read_ms_median") if less == "read" else us(sweep_07(less)[n]))
    return value_range([f"{value(c, n):.2f}" for c in (combines(combine_stage()) if combine == "all" else [combine])
                        for n in sizes]) + " µs"
def first_n_at(combine, pct):
    """The smallest sweep size from which on every larger one reaches pct % of the read-only kernel."""
    data = sorted(sweep_07(combine).items())
    return next((pow2(n) for i, (n, _) in enumerate(data) if all(f(r["pct_read"]) >= pct for _, r in data[i:])), None)
def ns_per_block(r): return f(r["ms_median"]) * 1e6 / int(r["grid"])  # a row of combine_tree.csv
def per_block(combine, block): return ns_per_block(select("combine_tree", combine=combine, block=block))
def per_block_ns(stage, block): return ns_per_block(select("probe_tree", stage=stage, block=block))
def per_block_spread(combine, blocks): return value_range([f"{per_block(combine, b):.2f}" for b in blocks]) + " ns"
def probe_blocks(): return sorted({r["block"] for r in rows("probe_tree")}, key=int)  # the probe's block sizes
def per_block_range(stages, block): return value_range([f"{per_block_ns(s, block):.2f}" for s in stages]) + " ns"

# ---- the block-size probe, the size sweep and the ladder -------------------------------------------------------------
def probe_rank(stage, regime):  # the block size at which a stage was fastest in the probe
    return max(stage_rows(f"probe_{regime}", stage), key=lambda r: f(r["gbps"]))["block"]
def probe_tied(data):  # the block sizes of one row's probe whose runs distinct() cannot tell from its fastest's
    from .compare import distinct
    best = max(data, key=lambda r: f(r["gbps"]))
    return [r["block"] for r in data if distinct(r, best) == 0]
def probe_best_line(regime):  # '02 1024 (128, 256 within noise), ..., 06 1024'
    stages = dict.fromkeys(r["stage"] for r in rows(f"probe_{regime}"))
    ties = {s: [b for b in probe_tied(stage_rows(f"probe_{regime}", s)) if b != probe_rank(s, regime)] for s in stages}
    return ", ".join(f"{s[:2]} {probe_rank(s, regime)}" + (f" ({', '.join(ties[s])} within noise)" if ties[s] else "")
                     for s in stages)
def sweep_max(stage, fmt=".1f"): return format(max(f(r["pct_peak"]) for r in stage_rows("sweep", stage)), fmt)
def sweep_max_range(stages): return value_range([sweep_max(s, ".0f") for s in stages])
def sweep_best_n(stage, fmt=".1f"):  # the sizes at which a stage reached its best % of the peak, as printed
    best = sweep_max(stage, fmt)  # the numbers' maximum, not the strings' ("9.5" > "85.3")
    return " and ".join(pow2(r["n"]) for r in stage_rows("sweep", stage) if format(f(r["pct_peak"]), fmt) == best)
def sweep_reach():  # 'up to 2^30 for 02_grid_stride and 03_padding, up to 2^32 for ...'
    top = {s: max(int(r["n"]) for r in stage_rows("sweep", s))
           for s in dict.fromkeys(r["stage"] for r in rows("sweep"))}
    return ", ".join(f"up to {pow2(n)} for {and_list(s for s in top if top[s] == n)}" for n in sorted(set(top.values())))
def stream_grid_line():
    data = [r for r in rows("ladder") if r["regime"] == "stream"]
    return ", ".join(f"{r['stage'][:2]}{'' if default_combine(r) else ' ' + r['combine']}: {r['grid']} ({r['sms']} × "
                     f"{r['blocks_per_sm']})" for r in data) + f" blocks of {data[0]['block']} threads (SMs × blocks per SM)"
def best_read():  # the ladder row closest to (or furthest past) the read-only kernel: (its label, its % of read)
    r = max(rows("ladder"), key=lambda r: f(r["pct_read"]))
    return row_label(r), f"{f(r['pct_read']):.1f}"
def spread_ulps(r):  # how many floats lie between a determinism row's smallest and largest result (-0, +0: none)
    def key(x):  # the float's bits as sign and magnitude, ordered as the floats are
        i = struct.unpack("<i", struct.pack("<f", f(x)))[0]
        return i if i >= 0 else -(i & 0x7fffffff)
    return abs(key(r["max_result"]) - key(r["min_result"]))
def multiblock_range(n): return value_range([f"{f(r['pct_peak']):.1f}" for r in rows("multiblock") if r["n"] == str(n)]) + "%"
def median_of(name, field): return statistics.median(f(r[field]) for r in rows(name))
def stages_with(regime, only=False):  # '02', ... of the stages that run a regime (only: that regime alone)
    return [s[:2] for s in reduce_stages() if regime in regimes(s) and (not only or regimes(s) == [regime])]

# ---- accuracy --------------------------------------------------------------------------------------------------
def accuracy_series():
    """{name: {n: relative error}} for every stage, CUB (timed in the combine stage's process) and the CPU's sums."""
    out = {}
    for r in rows("accuracy"):
        out.setdefault(r["stage"], {})[int(r["n"])] = relative_error(r)
    out["CUB"] = {int(r["n"]): relative_error(r, "cub_result") for r in rows("sweep") if r["stage"] == combine_stage()}
    for name, column in (("CPU float loop", "float_loop"), ("CPU Kahan, float", "kahan_float")):
        out[name] = {int(r["n"]): relative_error(r, column, "exact") for r in rows("accuracy_cpu")}
    return out
def accuracy_ulps():  # the same errors in ulps of the float nearest the exact sum
    exact = {int(r["n"]): f(r["exact"]) for r in rows("accuracy_cpu")}
    return {name: {n: e * exact[n] / 2.0 ** (math.floor(math.log2(exact[n])) - 23) for n, e in pts.items() if n in exact}
            for name, pts in accuracy_series().items()}
def stage_error_range(n):
    vals = [accuracy_series()[s][n] for s in reduce_stages() if s in accuracy_series()]
    return f"{min(vals):.1e} to {max(vals):.1e}"
def accuracy_sizes(): return sorted({int(r["n"]) for r in rows("accuracy")})
def bound_ratios(): return [f(r["abs_error"]) / f(r["bound"]) for r in rows("accuracy") if r["float_check"] == "PASS"]
def quantile(values, q): return sorted(values)[int(q * (len(values) - 1))]
def loop_gap_start():
    """The n from which on every stage is two orders of magnitude closer to the exact sum than the CPU loop."""
    series, sizes = accuracy_series(), accuracy_sizes()
    gap = [n for n in sizes if all(100 * series[s][n] < series["CPU float loop"][n] for s in reduce_stages() if s in series)]
    return next((pow2(n) for i, n in enumerate(sizes) if all(m in gap for m in sizes[i:])), None)

def error_study():
    """The error study (error_bound.csv): every judged error over bound, by stage and in all, each error over its sigma
    (the centring test's), and how many configurations were not judged or failed."""
    data = rows("error_bound")
    judged = [r for r in data if r["check"] != "skipped" and r["error_bound_ratio"]]  # a NaN result has no ratio
    by_stage = {s: [f(r["error_bound_ratio"]) for r in judged if r["stage"] == s] for s in reduce_stages()}
    every, large = [v for vals in by_stage.values() for v in vals], 2 ** STUDY_LOG2[1]
    return {"configs": len(data), "judged": len(judged), "skipped": sum(r["check"] == "skipped" for r in data), "by_stage": by_stage,
            "failed": sum(r["check"] == "FAIL" for r in data), "ratios": every, "seeds": len({r["seed"] for r in data}),
            "sigmas": {s: study_sigmas(judged, s) for s in reduce_stages()},
            "above": pow2(2 ** STUDY_LOG2[0]), "below": pow2(large), "large_sizes": [pow2(n) for n in sorted({int(r["n"]) for r in data if int(r["n"]) >= large})],
            "median": quantile(every, 0.5), "p99": quantile(every, 0.99), "max": max(every)}

# ---- GEMM ------------------------------------------------------------------------------------------------------
def fp32_peak(): return f(rows("gemm")[0]["fp32_peak_gflops"])
def ffma_per_shared_load(stage, variant): return ncu_value(stage, variant, "ffma") / 32 / ncu_value(stage, variant, "shared_ld")
def naive_dram_ratio(stage): return ncu_value(stage, "naive", "dram") / (8 * ncu_size(stage, "naive") ** 2)
def gemm_ffma_per_mac(stage, variant): return ncu_value(stage, variant, "ffma") / ncu_size(stage, variant) ** 3
def padding_cost(stage, kind):
    return ncu_value(stage, "tiled padded", f"wavefronts_{kind}") - ncu_value(stage, "tiled", f"wavefronts_{kind}")
def gemm_extreme(stage, field, pick, fmt=".2f", tile="16", pad="false"):
    return format(pick(f(r[field]) for r in stage_rows("gemm", stage) if r["tile"] == tile and r["pad"] == pad), fmt)
def sampled_elements():  # the random elements a sampled check compares: checked_elements less rows and columns 0 and last
    found = {int(r["checked_elements"]) - 2 * (int(r["m"]) + int(r["n"])) for r in rows("gemm") if r["check_method"].startswith("first")}
    if len(found) != 1:
        raise DocsError(f"gemm.csv's sampled checks compare {sorted(found)} random elements, not one number")
    return found.pop()
def gemm_other_tiles(): return [t for t in option(gemm_stage(), "--tile")["values"] if t != default_of(gemm_stage(), "--tile")]
def gemm_per_warp_step(stage, variant, metric):  # per blocks × warps a block × K / tile, of a square size
    size, tile = ncu_size(stage, variant), int(select("ncu", stage=stage, variant=variant)["block"].strip("()").split(",")[0])
    return ncu_value(stage, variant, metric) / ((size // tile) ** 2 * (tile * tile // 32) * (size // tile))

# ---- the CPU beside the ladder ---------------------------------------------------------------------------------
def ms(r): return f"{f(r['ms_median']):.3f} ms"
def after_copy(stage):  # the stage's row the CPU's are compared with, the copy's times added to its own
    k, c = cpu_stage_row(rows("ladder"), stage), select("cpu", row="copy")
    return {**k, **{key: str(f(k[key]) + f(c[key])) for key in ("ms_median", "ms_min", "ms_max")}}

# ---- the planted bugs (maint/mutants.py) and what caught them (mutants.csv) -----------------------------------------
# The part of the default check a FAIL line names: "...: exact: launch 2 of 3: ..." -> "exact".
FAILED_CHECK = re.compile(r"^FAIL [^:]*: (exact|probe_a|probe_b|probe|float|timed|canary|rate|launches|cub|read|naive|"
                          r"cublas): ")
CHECK_NAMES = {"exact": "the exact check", "probe": "the precision probe", "probe_a": "the probe of A",
               "probe_b": "the probe of B", "float": "the float bound", "launches": "the count of checked launches",
               "timed": "the check of every warm-up and timed launch", "rate": "the rate against the theoretical peak",
               "canary": "the canary (the poison around what a launch may write)"}

def caught_by(r, m):
    if m.expect in ("racecheck", "sass"):
        return {"racecheck": "racecheck", "sass": "the machine code (`scripts/sass.py`)"}[m.expect]
    if "reported a first launch" in r["line"]:
        return "the launch shape (from the captured graph)"
    part = FAILED_CHECK.match(r["line"])
    return f"default check: {CHECK_NAMES.get(part.group(1), part.group(1))}" if part else "default check"
def mutant_results():
    """The planted bugs with their measured rows (one without, added since ./maint/do measure, is not measured yet)."""
    measured = {r["mutant"]: r for r in rows("mutants")}
    not_measured.update(f"planted bug {m.name}: no row in docs/results/mutants.csv" for m in MUTANTS if m.name not in measured)
    return [(m, measured[m.name]) for m in MUTANTS if m.name in measured]
def mutant_caught_by(name):  # the check that caught a planted bug ('the exact check'); the docs fail if none did
    for m, r in mutant_results():
        if m.name == name and r["verdict"] == "caught":
            return caught_by(r, m).removeprefix("default check: ")
    raise DocsError(f"a page says which check caught {name}, which mutants.csv does not record as caught")
def mutant_verdict(name):
    r = select("mutants", mutant=name)
    how = {"racecheck": "racecheck", "sass": "the machine-code check"}.get(r["expect"], "the default check")
    return f"caught by {how}" if r["verdict"] == "caught" else f"not caught ({r['verdict']})"
def mutant_counts():  # the bugs the default run must catch, the races and the machine-code bugs, and how many were caught
    every = [r for _, r in mutant_results()]
    of = {kind: [r for r in every if r["expect"] == kind] for kind in ("fail", "racecheck", "sass")}
    caught = {kind: sum(r["verdict"] == "caught" for r in found) for kind, found in of.items()}
    return {"all": len(every), "check": len(of["fail"]), "caught": caught["fail"], "sass": len(of["sass"]),
            "race": [f"`{r['mutant']}`" for r in of["racecheck"]], "race_caught": caught["racecheck"],
            "sass_caught": caught["sass"], "missed": [f"`{r['mutant']}`" for r in every if r["verdict"] != "caught"]}

# ---- where and how the results were measured -------------------------------------------------------------------
def clock_summary():
    """Over every timed series in the results: the SM and memory clocks read at their first and last repetitions, the
    series that reported throttling (and why), the stream holds that timed out, and the timed rows without clocks."""
    timed, unclocked = [], collections.Counter()
    for path in sorted(state.results.glob("*.csv")):
        try:
            data = rows("sweep_all" if path.stem == "sweep" else path.stem)
        except DocsError:
            continue
        timed += [r for r in data if r.get("sm_clock_start_mhz")]
        # a timed row without clocks: the CPU's, or one from before they were recorded
        unclocked.update(f"{path.stem}.csv" for r in data if r.get("ms_median") and not r.get("sm_clock_start_mhz"))
    throttled = [r for r in timed if r.get("throttled") == "yes"]
    s = {"series": len(timed), "throttled": len(throttled), "unclocked": unclocked,
         "reasons": ", ".join(sorted({x for r in throttled for x in r["clock_reasons"].split("+")})),
         "timeouts": sum(int(r.get("hold_timeouts") or 0) for r in timed),
         "mem_attribute": sorted({int(r["mem_clock_mhz"]) for r in rows("ladder")})}  # what the peak is computed from
    for k in ("sm", "mem"):
        s[k] = {int(r[f"{k}_clock_{at}_mhz"]) for r in timed for at in ("start", "end")}
        lo, hi = min(s[k], default=0), max(s[k], default=0)
        s[f"{k}_mhz"] = f"{lo} MHz at every reading" if lo == hi else f"between {lo} and {hi} MHz"
    return s

def measure_parts():  # [((commit, date, GPU), [part, ...])]: the parts taken at another commit (--part) or on another GPU
    m, by = meta(), {}
    for part, p in m.get("parts", {}).items():
        if (p["commit"], p["date"], p.get("device") or m["device"]) != (m["commit"], m["date"], m["device"]):
            by.setdefault((p["commit"], p["date"], p.get("device") or m["device"]), []).append(part)
    return list(by.items())
def first_builds():
    """docs/results/first_build.json: each first ./ladder build recorded there, with how long it took and where."""
    data = json_result("first_build.json", "copy <build>/first_build.json from a fresh clone's first ./ladder build")
    return [{**b, "took": f"{int(b['seconds'])} s" if int(b["seconds"]) < 120 else f"{int(b['seconds']) / 60:.0f} minutes",
             "where": f"{b['cpus']} CPU cores, {'without a GPU' if b['gpu'] == 'none' else 'with a GPU'}"}
            for b in (data if isinstance(data, list) else [data])]
def constant_sweep(name, regime):  # a constant's ./ladder try rows of one regime, by its value: [(value, row)]
    return sorted((int(re.search(r"= (\d+)", r["variant"])[1]), r) for r in rows(name) if r["regime"] == regime)
def combine_tree_at(block):  # combine_tree.csv's rows at one block size, slowest first
    return sorted((r for r in rows("combine_tree") if int(r["block"]) == block), key=lambda r: -f(r["ms_median"]))
def gemm_pct_peak(column, **match):  # a GEMM row's GFLOP/s as % of the FP32 peak, computed as the roofline table does
    return f"{100 * f(select('gemm', **match)[column]) / fp32_peak():.1f}"
