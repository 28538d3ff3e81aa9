"""Comparisons: the only place a page's comparative words (faster, slower, the same within noise) come from."""
import statistics

from ..measure import NCU_COUNTERS, NCU_SECTIONS, NCU_SHORT, profile_command as command
from scripts.stages import reduce_stages
from .base import helper, DocsError, f, md_table, rows, select


def _times(r, prefix=""):
    median = f(r[prefix + "ms_median"])
    lo, hi = r.get(prefix + "ms_min"), r.get(prefix + "ms_max")
    return median, (f(lo) if lo else None), (f(hi) if hi else None)


NOISE = "within noise"  # the words for two runs neither of which distinct() tells apart
_said = set()  # every comparative phrase the helpers produced: lint_rendered() accepts these and no other


def said_phrases():
    """Every comparative phrase the helpers have produced so far."""
    return set(_said)


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


@helper
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


@helper
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


@helper
def speedup(name, field, a, b, key="stage", other=None, **match):
    """Row b against row a: speedup("ladder_tree", "ms_median", "02_grid_stride", "03_padding", other="02")."""
    assert field == "ms_median"
    return compare_rows(select(name, **{key: a}, **match), select(name, **{key: b}, **match), other)


@helper
def than_cub(stage, regime="stream"):
    """A ladder row against CUB timed in the same process."""
    r = select(f"ladder_{regime}", stage=stage)
    return compare_rows(r, r, "CUB", a_prefix="cub_")


@helper
def which(pred, yes, no):
    """A word chosen by the data: which(x > y, "above", "below")."""
    return yes if pred else no


@helper
def size_value(text):
    """'2^24' or '16777216' -> 16777216."""
    base, _, exp = str(text).partition("^")
    return int(base) ** int(exp) if exp else int(base)


@helper
def median_of(name, field):
    return statistics.median(f(r[field]) for r in rows(name))


@helper
def ncu_value(stage, variant, metric):
    return f(select("ncu", stage=stage, variant=variant)[NCU_SHORT.get(metric, metric)])


@helper
def ncu_change(stage_a, stage_b, variant, metric):
    """How much metric falls (or rises) from stage a to stage b, in words: '16% fewer' / '3% more'."""
    a, b = ncu_value(stage_a, variant, metric), ncu_value(stage_b, variant, metric)
    pct = 100 * (b - a) / a
    return f"{abs(pct):.0f}% {'fewer' if pct < 0 else 'more'}"


@helper
def stalls(stage, variant, k=3):
    """The top warp stall reasons of a profiled kernel, with warp-cycles stalled per issued instruction."""
    r = select("ncu", stage=stage, variant=variant)
    return ", ".join(f"`{r[f'stall_{i}']}` ({f(r[f'stall_{i}_per_issue']):.1f})" for i in range(1, k + 1)
                     if r.get(f"stall_{i}"))


@helper
def stall_value(stage, variant, reason):
    """Warps stalled for one reason per issued instruction, if it is among the top stalls kept; else 0."""
    r = select("ncu", stage=stage, variant=variant)
    if f"stall_{reason}" not in r:
        raise DocsError(f"ncu.csv has no column stall_{reason}: run ./maint/do profile")
    return f(r[f"stall_{reason}"])


@helper
def largest_step(regime):
    """The stage with the largest × prev in a regime (02 in the stream regime against 01's only regime)."""
    best, best_r = None, 0
    for i in range(1, len(reduce_stages())):
        prev = select(f"ladder_{regime}", stage=reduce_stages()[i - 1])
        r = f(prev["ms_median"]) / f(select(f"ladder_{regime}", stage=reduce_stages()[i])["ms_median"])
        if r > best_r:
            best, best_r = reduce_stages()[i], r
    return best


PROFILE_COLUMNS = [("µs", "ns", lambda v: f"{v / 1e3:.1f}"), ("DRAM % of peak", "dram_pct", lambda v: f"{v:.1f}"),
                   ("achieved occupancy %", "occupancy", lambda v: f"{v:.1f}"), ("registers", "regs", lambda v: f"{v:.0f}"),
                   ("warp instructions", "instructions", lambda v: f"{v:,.0f}"),
                   ("threads on per instruction", "pred_on", lambda v: f"{v:.1f}"),
                   ("shared-load wavefronts", "wavefronts_ld", lambda v: f"{v:,.0f}"),
                   ("bank conflicts (ld + st)", None, None)]


@helper
def profile_table(cases):
    """Nsight Compute's view of the first launch of each case [(stage, variant)], as ./maint/do profile saved it."""
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
    size = select("ncu", stage=stage, variant=variant)["n_or_size"]
    return "```\n" + command(stage, variant, size) + "\n```"


def per_block_ns(stage, block, regime="tree"):
    """Time per block of a probe row: median ms / (n / block), in ns."""
    r = select(f"probe_{regime}", stage=stage, block=block)
    return f(r["ms_median"]) * 1e6 / (int(r["n"]) / int(block))


@helper
def per_block_range(stages, block):
    vals = [per_block_ns(s, block) for s in stages]
    lo, hi = f"{min(vals):.2f}", f"{max(vals):.2f}"
    return f"{lo} ns" if lo == hi else f"{lo}–{hi} ns"


@helper
def combine_tree_table():
    body = []
    for r in rows("combine_tree"):
        blocks = int(r["grid"])
        body.append([r["block"], f"`{r['combine']}`", f"{blocks:,}", r["check"], f"{f(r['ms_median']):.3f}",
                     f"{f(r['gbps']):.0f}", f"{f(r['ms_median']) * 1e6 / blocks:.2f}"])
    return md_table(["block", "combine", "blocks", "check", "ms", "GB/s", "ns per block"], body)


@helper
def multiblock_range(n):
    vals = [f(r["pct_peak"]) for r in rows("multiblock") if r["n"] == str(n)]
    return f"{min(vals):.1f}–{max(vals):.1f}%"


@helper
def than_cub_multiblock(n, combine):
    r = select("multiblock", n=n, combine=combine)
    return compare_rows(r, r, "CUB", a_prefix="cub_")


@helper
def quicker(a, b):
    """Row a is faster than row b as distinct() tells them apart (the glossary's "faster")."""
    return distinct(a, b) == -1


@helper
def not_slower(a, b):
    """Row a is quicker than row b, or the same within noise."""
    return distinct(a, b) <= 0


@helper
def ncu_sections():
    return ", ".join(NCU_SECTIONS[:-1]) + " and " + NCU_SECTIONS[-1]


@helper
def ncu_metrics_table():
    """Every counter ./maint/do profile keeps, as ncu.csv's columns and the tables call it, beside its ncu metric."""
    body = [[label, f"`{metric}`"] for _, metric, label, _ in NCU_COUNTERS]
    body.append(["top stall reasons, warp-cycles stalled per issued instruction ([glossary](glossary.md#stall-reason))",
                 "`smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio`"])
    return md_table(["what the pages say", "`ncu` metric"], body, ["---", "---"])
