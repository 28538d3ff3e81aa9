"""Comparisons, the only place a page's comparative words (faster, slower, the same within noise) come from, and the
conditions: the causes a page may state, each a function of the results."""
import re

from maint import gemm_stage
from scripts.stages import reduce_stages
from .base import default_of, f, md_table, rows, select, TEMPLATES
from .numbers import combine_sizes, ncu_value, per_block, per_block_ns, sweep_07

NOISE = "within noise"  # the words for two runs neither of which distinct() tells apart
SAID = set()  # every comparative phrase the helpers produced: lint_rendered() accepts these and no other

def said(phrase): return SAID.add(phrase) or phrase  # noted as said, which lint_rendered() accepts
def times(r, prefix=""):  # a row's median, fastest and slowest repetition (None where it has no spread)
    return tuple(f(r[prefix + k]) if r.get(prefix + k) else None for k in ("ms_median", "ms_min", "ms_max"))

def distinct(a, b, a_prefix="", b_prefix=""):
    """-1 if run a is quicker: its median lies below every repetition of b, or b's median above every repetition of
    a; 1 if slower, the same the other way round; 0 if neither ("the same within noise", the glossary's words) or a
    row has no spread. The one test behind every "faster", "slower" and "the same within noise" in the docs."""
    (m_a, lo_a, hi_a), (m_b, lo_b, hi_b) = times(a, a_prefix), times(b, b_prefix)
    if None in (lo_a, hi_a, lo_b, hi_b):
        return 0
    if m_a < lo_b or m_b > hi_a:
        return -1
    return 1 if m_a > hi_b or m_b < lo_a else 0

def compare_rows(a, b, other=None, a_prefix="", b_prefix=""):
    """How row b's median time compares with row a's, in words that agree with the numbers: 'N× faster than
    <other>' or 'N× slower than <other>' only where distinct() tells the runs apart, 'the same speed as <other>
    within noise (N×)' where it does not, and 'N× the speed of <other>' where a row has no spread."""
    (ma, lo_a, _), (mb, lo_b, _) = times(a, a_prefix), times(b, b_prefix)
    r, tail = ma / mb, f" than {other}" if other else ""
    if lo_a is None or lo_b is None:
        return said(f"{r:.2f}× the speed of {other}" if other else f"{r:.2f}× the speed")
    order = distinct(b, a, b_prefix, a_prefix)
    if order == 0:
        return said((f"the same speed as {other}" if other else "the same speed") + f" {NOISE} ({r:.2f}×)")
    if f"{r:.2f}" == "1.00" or f"{1 / r:.2f}" == "1.00":
        return said(f"{100 * abs(r - 1):.1f}% {'faster' if order < 0 else 'slower'}{tail}")
    return said(f"{r:.2f}× faster{tail}" if order < 0 else f"{1 / r:.2f}× slower{tail}")
def speedup(view, a, b, other=None): return compare_rows(select(view, stage=a), select(view, stage=b), other)
def than_cub(name, **match): return compare_rows(select(name, **match), select(name, **match), "CUB", a_prefix="cub_")

def time_difference(a, b, other=None, prefix=""):
    """Row b's median time against row a's (the columns with prefix, e.g. "cub_"): 'X µs more/less [than <other>]' where
    distinct() tells them apart, else 'the same time [as <other>] within noise (X µs apart)'."""
    d = 1e3 * (f(b[prefix + "ms_median"]) - f(a[prefix + "ms_median"]))
    if distinct(a, b, prefix, prefix) == 0:
        return said(f"the same time{' as ' + other if other else ''} {NOISE} ({abs(d):.1f} µs apart)")
    return f"{abs(d):.1f} µs {'more' if d > 0 else 'less'}" + (f" than {other}" if other else "")
def mask_row(which_build, name="interleaved_mask"):  # 01's tree row of the "file"'s or the "patch"'s run
    return select(f"try_01_naive_{name}", variant="as in the file" if which_build == "file" else f"{name} (the patch)",
                  regime="tree")
def try_vs_file(name): return compare_rows(mask_row("file", name), mask_row("patch", name), "01")
def flush_rows(n): return [select("flush", l2_flush=k, n=n) for k in ("clean", "write", "none")]
def which(pred, yes, no): return yes if pred else no  # a word chosen by the data: which(x > y, "above", "below")
def largest_step(regime):  # the stage with the largest × prev in a regime
    stages = reduce_stages()
    ms = [f(select(f"ladder_{regime}", stage=s)["ms_median"]) for s in stages]
    return stages[max(range(1, len(stages)), key=lambda i: ms[i - 1] / ms[i])]
def repeats_bits(combine): return all(r["bitwise_identical"] == "true" for r in rows("determinism") if r["combine"] == combine)
def runs_at_defaults():  # the ladder and the GEMM ran at the warm-up and repetition counts the binaries default to
    runs = ((rows("ladder")[0], rows("ladder")[0]["stage"]), (rows("gemm")[0], gemm_stage()))
    return all(r[key] == default_of(stage, f"--{key}") for r, stage in runs for key in ("reps", "warmup"))

# ---- the conditions ------------------------------------------------------------------------------------------------
# A template states a cause or a comparison only inside {% if condition(...) %} ... {% endif %}, with one of these (or
# an expression over the results) as the condition, so a rendering from another GPU's results leaves the sentence out
# where it does not hold there. method.md lists them (conditions_table()); synthetic_gpu.py makes each one false.
# Their docstrings are that table's definitions.

MEMORY_BOUND_PCT = 50  # below this DRAM % of peak, a kernel waiting on loads is not using the bandwidth
BUSY_PCT = 80  # a unit at or above this % of its peak is the one a kernel is bound by

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
    """Row a is faster than row b as distinct() tells them apart (the glossary's "faster")."""
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
def spread_within(vals, share): return max(vals) <= (1 + share) * min(vals)  # the largest at most share above the least
def per_block_flat(combine, blocks, within=0.10):
    """A combine's time per block (tree regime) stays within 10% over the block sizes given."""
    return spread_within([per_block(combine, b) for b in blocks], within)
def per_block_same(stages, block, within=0.05):
    """The stages' time per block in the tree-regime probe at one block size lies within 5%."""
    return spread_within([per_block_ns(s, block) for s in stages], within)
def costliest(combine):
    """At every block size of the tree-regime combine runs, `combine`'s runs are all slower than every other
    combine's."""
    data = rows("combine_tree")
    return all(quicker(o, r) for r in data if r["combine"] == combine
               for o in data if o["block"] == r["block"] and o["combine"] != combine)
def atomic_quicker_up_to(hi):
    """07 atomic quicker than last-block at every size up to hi where the combine had work."""
    return all(quicker(sweep_07("atomic")[n], sweep_07("last-block")[n]) for n in combine_sizes(hi))
def two_pass_quicker_at(blocks):
    """In the tree regime at each block size given, two-pass quicker than atomic."""
    return all(quicker(select("combine_tree", combine="two-pass", block=b), select("combine_tree", combine="atomic", block=b))
               for b in blocks)
def every_launch_checked():
    """Every row of the ladder table checked all of its launches."""
    return all(r["launches_checked"] == r["launches"] for r in rows("ladder"))

CONDITIONS = [top_stall_is, waits_for_loads, latency_bound, cache_bound, shared_pipe_bound, about_equal, quicker,
              not_slower, none_at_peak, read_kernel_passed, per_block_flat, per_block_same, costliest,
              atomic_quicker_up_to, two_pass_quicker_at, every_launch_checked]

def tag(words): return "`{% " + words + " %}`"  # a template tag as inline code: tag("endif")
def conditions_table():  # every condition, its definition (its docstring), and the pages that use it
    def pages(c):
        return ", ".join(sorted(t.stem for t in TEMPLATES.rglob("*.md") if re.search(
            r"\{%[-+]?\s*(?:el)?if\b[^%]*\b" + c.__name__ + r"\(", t.read_text())))
    body = [[f"`{c.__name__}`", " ".join(c.__doc__.split()).replace("MEMORY_BOUND_PCT %", f"{MEMORY_BOUND_PCT}%")
             .replace("BUSY_PCT %", f"{BUSY_PCT}%"), pages(c)] for c in CONDITIONS]
    return md_table(["condition", "holds when", "pages"], body, ["---"] * 3)
