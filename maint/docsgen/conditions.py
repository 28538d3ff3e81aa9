"""Conditions: the causes a page may state, each a function of the results, listed in CONDITIONS; a template
states a cause only inside {% if condition(...) %} ... {% endif %}, and maint/docsgen/synthetic_gpu.py makes each false."""
import re

from scripts.stages import gemm_stage
from .base import default_of, helper, f, md_table, optional, rows, select, TEMPLATES
from .compare import ncu_value, not_slower, per_block_ns, quicker
from .small_n import atomic_quicker_up_to, per_block


# A template states a cause or a comparison only inside {% if condition(...) %} ... {% endif %}, with one of these as
# the condition, so a rendering from another GPU's results leaves the sentence out where it does not hold there.
# method.md lists them with their values (conditions_table()); maint/docsgen/synthetic_gpu.py makes each one false.

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


@helper
def stall_meaning(stage, variant):
    """The top stall of a profiled kernel, named and explained: '`barrier` (waiting at a block barrier)'."""
    reason = select("ncu", stage=stage, variant=variant)["stall_1"]
    return f"`{reason}` ({STALL_MEANING.get(reason, 'see the glossary')})"


@helper
def top_stall_is(stage, variant, reason):
    """The profiled kernel's most frequent stall reason is `reason`."""
    return select("ncu", stage=stage, variant=variant)["stall_1"] == reason


@helper
def waits_for_loads(stage, variant):
    """The kernel's top stall is long_scoreboard: its warps mostly wait for global-memory loads."""
    return top_stall_is(stage, variant, "long_scoreboard")


@helper
def latency_bound(stage, variant):
    """The warps mostly wait for global loads (top stall long_scoreboard) while DRAM runs below
    MEMORY_BOUND_PCT % of its peak: too few bytes in flight, not too little bandwidth."""
    return waits_for_loads(stage, variant) and ncu_value(stage, variant, "dram_pct") < MEMORY_BOUND_PCT


@helper
def cache_bound(stage, variant):
    """The busiest memory unit is at BUSY_PCT % of its peak or more while DRAM is below a quarter of that: a cache,
    not DRAM, sets the pace."""
    return ncu_value(stage, variant, "mem_pct") >= BUSY_PCT and ncu_value(stage, variant, "dram_pct") < BUSY_PCT / 4


@helper
def shared_pipe_bound(stage, variant):
    """The top stall is mio_throttle or short_scoreboard (waiting on the unit that serves shared memory) and the
    busiest memory unit is at BUSY_PCT % of its peak or more."""
    r = select("ncu", stage=stage, variant=variant)
    return r["stall_1"] in ("mio_throttle", "short_scoreboard") and ncu_value(stage, variant, "mem_pct") >= BUSY_PCT


@helper
def about_equal(a, b, within=0.05):
    """Two counts within 5% of each other."""
    return abs(a - b) <= within * max(abs(a), abs(b))


@helper
def none_at_peak():
    """No measured reduce kernel (the ladder, the size sweep, the read-only kernel) reaches 100% of the theoretical
    peak."""
    data = rows("ladder") + rows("sweep")
    return all(f(r["pct_peak"]) < 100 for r in data) and all(f(r["read_pct_peak"]) < 100 for r in rows("ladder"))


@helper
def read_kernel_passed():
    """Some stage's median time in the ladder is below the read-only kernel's, timed in the same process (% of read
    above 100)."""
    return any(f(r["pct_read"]) > 100 for r in rows("ladder"))


@helper
def two_pass_quicker_at(blocks):
    """In the tree regime at each block size given, two-pass quicker than atomic."""
    return all(quicker(select("combine_tree", combine="two-pass", block=b), select("combine_tree", combine="atomic", block=b))
               for b in blocks)


@helper
def every_row_passed():
    """Every row of the ladder table passed its checks."""
    return all(r["check"] == "PASS" for r in rows("ladder"))


@helper
def every_launch_checked():
    """Every row of the ladder table checked all of its launches."""
    return all(r["launches_checked"] == r["launches"] for r in rows("ladder"))


@helper
def per_block_flat(combine, blocks, within=0.10):
    """A combine's time per block (tree regime) stays within 10% over the block sizes given."""
    vals = [per_block(combine, b) for b in blocks]
    return max(vals) <= (1 + within) * min(vals)


@helper
def per_block_same(stages, block, within=0.05):
    """The stages' time per block in the tree-regime probe at one block size lies within 5%."""
    vals = [per_block_ns(s, block) for s in stages]
    return max(vals) <= (1 + within) * min(vals)


@helper
def costliest(combine, view="combine_tree"):
    """At every block size of the tree-regime combine runs, `combine`'s runs are all slower than every other
    combine's."""
    data = rows(view)
    return all(quicker(o, r) for r in data if r["combine"] == combine
               for o in data if o["block"] == r["block"] and o["combine"] != combine)


@helper
def handoff_by_n():
    """07's handoff sweep: {n: {"atomic": row, "last-block": row, "handoff": row}} (the stage's two combines and the
    patched build's atomic, which is the handoff)."""
    out = {}
    for r in optional("handoff_sweep"):
        out.setdefault(int(r["n"]), {})["handoff" if r["variant"].startswith("handoff") else r["combine"]] = r
    return out


CONDITIONS = [top_stall_is, waits_for_loads, latency_bound, cache_bound, shared_pipe_bound, about_equal, quicker, not_slower,
              none_at_peak, read_kernel_passed, per_block_flat, per_block_same, costliest, atomic_quicker_up_to,
              two_pass_quicker_at, every_row_passed, every_launch_checked]


@helper
def tag(words):
    """A template tag as inline code, for the page that explains them: tag("endif") gives `{% endif %}`."""
    return "`{% " + words + " %}`"


@helper
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


@helper
def runs_at_defaults():
    """The ladder's and the GEMM's results were taken at the warm-up and repetition counts the binaries default to."""
    reduce, gemm = rows("ladder")[0], rows("gemm")[0]
    return all(r[key] == default_of(stage, f"--{key}")
               for r, stage in ((reduce, reduce["stage"]), (gemm, gemm_stage())) for key in ("reps", "warmup"))
