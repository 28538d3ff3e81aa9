"""07 at small n: the size sweep's rows of every combine, beside CUB, the read-only kernel and the floors."""
import statistics

from scripts.stages import combine_stage, combines
from .base import helper, f, md_table, num, pow2, rows, select
from .compare import compare_rows, distinct, NCU_SHORT, ncu_value, NOISE, quicker, said


SMALL_N_MAX = 2 ** 22  # where the fixed costs of a launch are still a large share of the time


def sweep_07(combine):
    """07's size-sweep rows of one combine, by n."""
    return {int(r["n"]): r for r in rows("sweep_all") if r["stage"] == combine_stage() and r["combine"] == combine}


def us(r, field="ms_median"):
    return 1e3 * f(r[field])


def one_block_sizes():
    """The sweep sizes at which 07 ran one block and no combine (grid 1)."""
    return [n for n, r in sorted(sweep_07("atomic").items()) if r["grid"] == "1"]


@helper
def combine_sizes(hi=SMALL_N_MAX):
    """The sweep sizes up to hi at which 07 ran more than one block, so that its combine had work to do."""
    return [n for n, r in sorted(sweep_07("atomic").items()) if r["grid"] != "1" and n <= hi]


def us_range(values):
    return value_range([f"{v:.2f}" for v in values]) + " µs"


@helper
def one_block_size_list():
    """The sizes 07 ran as one block, as a page lists them."""
    return ", ".join(pow2(n) for n in one_block_sizes())


@helper
def one_block_us_range(field=None):
    """The range of 07's times at those sizes: every combine's (field None), or one column of the atomic rows."""
    if field is None:
        return us_range([us(sweep_07(c)[n]) for c in combines(combine_stage()) for n in one_block_sizes()])
    return us_range([us(sweep_07("atomic")[n], field) for n in one_block_sizes()])


@helper
def read_us_range_up_to(hi):
    """The read-only kernel's times at the sizes up to hi where 07's combine had work."""
    return us_range([us(sweep_07("atomic")[n], "read_ms_median") for n in combine_sizes(hi)])


@helper
def atomic_quicker_up_to(hi):
    """07 atomic quicker than last-block at every size up to hi where the combine had work."""
    return all(quicker(sweep_07("atomic")[n], sweep_07("last-block")[n]) for n in combine_sizes(hi))


@helper
def small_n_table():
    by = {c: sweep_07(c) for c in combines(combine_stage())}
    body = []
    for n in sorted(n for n in by["atomic"] if n <= SMALL_N_MAX):
        a = by["atomic"][n]
        body.append([pow2(n), a["grid"] if a["grid"] != "1" else f"1 × {a['threads']} threads",
                     *[f"{us(by[c][n]):.2f}" for c in by], f"{us(a, 'cub_ms_median'):.2f}",
                     f"{us(a, 'read_ms_median'):.2f}", *[f"{f(by[c][n]['x_cub']):.2f}" for c in by],
                     f"{f(a['pct_read']):.0f}"])
    return md_table(["n", "grid", *[f"{c} µs" for c in by], "CUB µs", "read-only µs", *[f"{c} × CUB" for c in by],
                     "atomic % of read"], body)


@helper
def extra_over_read(combine, sizes):
    """How much longer than the read-only kernel, in the same process, a combine took at these sizes."""
    rows_ = sweep_07(combine)
    return us_range([us(rows_[n]) - us(rows_[n], "read_ms_median") for n in sizes])


@helper
def between(combine_a, combine_b, sizes):
    """combine_b's time minus combine_a's at these sizes, in µs."""
    a, b = sweep_07(combine_a), sweep_07(combine_b)
    return us_range([us(b[n]) - us(a[n]) for n in sizes])


@helper
def floor_us(field):
    """The median, over 07's sweep rows, of a floor timed in every run: empty_launch_ms or memset4_ms."""
    return f"{statistics.median(us(r, field) for r in sweep_07('atomic').values()):.2f} µs"


@helper
def x_cub_range(combine):
    vals = [f(r["x_cub"]) for r in sweep_07(combine).values()]
    return f"{min(vals):.2f}–{max(vals):.2f}×"


@helper
def x_cub_min(combine):
    return min(f(r["x_cub"]) for r in sweep_07(combine).values())


@helper
def sweep_span():
    sizes = sorted(sweep_07("atomic"))
    return f"{pow2(sizes[0])} to {pow2(sizes[-1])}"


@helper
def first_n_at(combine, pct):
    """The smallest sweep size from which on every larger one reaches pct % of the read-only kernel."""
    data = sorted(sweep_07(combine).items())
    ok = [n for i, (n, _) in enumerate(data) if all(f(r["pct_read"]) >= pct for _, r in data[i:])]
    return pow2(ok[0]) if ok else None


@helper
def pct_read_range(combine, sizes):
    rows_ = sweep_07(combine)
    return value_range([f"{f(rows_[n]['pct_read']):.0f}" for n in sizes]) + "%"


@helper
def per_block(combine, block):
    r = select("combine_tree", combine=combine, block=block)
    return f(r["ms_median"]) * 1e6 / int(r["grid"])


@helper
def try_vs_file(name, stage="01_naive", regime="tree"):
    """An experiment's patched build against the file, in one regime, from its try results."""
    data = f"try_{stage}_{name}"
    return compare_rows(select(data, variant="as in the file", regime=regime),
                        select(data, variant=f"{name} (the patch)", regime=regime), stage[:2])


@helper
def mask_row(which_build, name="interleaved_mask", stage="01_naive", regime="tree"):
    """The tree-regime row of an experiment's try results: the file's build ("file") or the patch's ("patch")."""
    variant = "as in the file" if which_build == "file" else f"{name} (the patch)"
    return select(f"try_{stage}_{name}", variant=variant, regime=regime)


@helper
def instr_ratio(variant, stage="01_naive"):
    return f"{ncu_value(stage, variant, 'instructions') / ncu_value(stage, 'tree', 'instructions'):.2f}"


@helper
def same_or_both(a, b):
    return f"`{a}` for both" if a == b else f"`{a}` and `{b}`"


def value_range(values):
    lo, hi = min(values, key=float), max(values, key=float)
    return lo if lo == hi else f"{lo}–{hi}"


@helper
def conflict_count(stage, variant):
    """Bank conflicts of a profiled kernel, loads and stores."""
    return ncu_value(stage, variant, "conflicts_ld") + ncu_value(stage, variant, "conflicts_st")


@helper
def conflicts(stage, variant):
    return f"{conflict_count(stage, variant):,.0f}"


@helper
def sweep_gbps(stage, n):
    return num("sweep", "gbps", ".0f", stage=stage, n=n)


@helper
def per_block_spread_diff(a, b, blocks):
    """How much more (or less) time per block combine a takes than combine b, over the blocks given."""
    vals = [per_block(a, x) - per_block(b, x) for x in blocks]
    lo, hi = min(vals), max(vals)
    if lo > 0:
        return f"{lo:.2f}–{hi:.2f} ns per block more than {b}"
    if hi < 0:
        return f"{-hi:.2f}–{-lo:.2f} ns per block less than {b}"
    return f"between {lo:.2f} and {hi:.2f} ns per block against {b}"


@helper
def time_difference(a, b, other=None, prefix=""):
    """Row b's median time against row a's (the columns with prefix, e.g. "cub_"), in µs: 'X µs more [than <other>]'
    or 'X µs less [than <other>]' where the runs' spreads do not overlap, 'the same time [as <other>] within noise
    (X µs apart)' where they do."""
    d = 1e3 * (f(b[prefix + "ms_median"]) - f(a[prefix + "ms_median"]))
    if distinct(a, b, prefix, prefix) == 0:
        return said(f"the same time{' as ' + other if other else ''} {NOISE} ({abs(d):.1f} µs apart)")
    return f"{abs(d):.1f} µs {'more' if d > 0 else 'less'}" + (f" than {other}" if other else "")


@helper
def determinism_spread(combine, n):
    """Distinct results of the determinism runs and their spread in ulps of the result."""
    r = select("determinism", combine=combine, n=n)
    return (f"{r['distinct_results']} distinct results in {r['runs']} runs, from {r['min_result']} to "
            f"{r['max_result']}, {r['spread_ulps']} ulp apart")


@helper
def per_block_spread(combine, blocks):
    vals = [per_block(combine, b) for b in blocks]
    return f"{min(vals):.2f}–{max(vals):.2f} ns"


@helper
def ncu_ratio(stage, variant, a, b, fmt=".2f"):
    r = select("ncu", stage=stage, variant=variant)
    return format(f(r[NCU_SHORT[a]]) / f(r[NCU_SHORT[b]]), fmt)


@helper
def ncu(stage, variant, metric, fmt=",.0f"):
    return format(ncu_value(stage, variant, metric), fmt)
