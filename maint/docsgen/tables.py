"""The tables the pages show, each built from the result files."""
import re

from ..mutants import MUTANTS
from scripts.stages import row_label
from scripts.run import cpu_lines, cpu_stage_row, ladder_lines
from scripts.stages import (all_regimes, combine_stage, describe, gemm_stage, has_stream, ladder_stages,
                             reduce_stages, regimes)
from scripts.tries import try_lines
from .base import (and_list, DocsError, helper, default_combine, docs_path, f, md_table, meta, NOT_MEASURED, not_measured, NotMeasured,
                   num, optional, pow2, rows, select, stage_rows, state)
from .compare import compare_rows, distinct, NOISE, said, which
from .small_n import time_difference, value_range


@helper
def next_rung(stage):
    """The footer of a stage page: a link to the next rung, or, on the last one, back to the docs."""
    i = ladder_stages().index(stage)
    if i + 1 < len(ladder_stages()):
        return f"**Next rung:** [{ladder_stages()[i + 1]}]({ladder_stages()[i + 1]}.md) (back to the [docs](../index.md))"
    return "This is the last rung: back to the [docs](../index.md) and the [results](../results.md)."


@helper
def previous_rung(stage):
    """The rung before the stage (the one its diff is taken from)."""
    return ladder_stages()[ladder_stages().index(stage) - 1]


@helper
def link(stage):
    prefix = {"stages": "", "root": "docs/stages/"}.get(state.page_dir, "stages/")
    return f"[{stage}]({prefix}{stage}.md)"


@helper
def ladder_table():
    """The table ./ladder run prints: both regimes side by side, 07 at atomic and last-block, and CUB."""
    headers, body, refs = ladder_lines(rows("ladder"))
    out = []
    for cells in body:
        stage = cells[0].split(" ")[0]
        out.append([link(stage) + cells[0][len(stage):], *cells[1:]])
    names = {"cub": "CUB `DeviceReduce::Sum`", "read": "[read-only kernel](" + docs_path("method.md#speed-of-light") + ")",
             "copy": "`cudaMemcpy` device to device (read + write)"}
    for key, ref in refs.items():
        out.append([names[key] + " (median of the runs)", "", f"{ref['ms']:.3f}", f"{ref['gbps']:.0f}",
                    f"{ref['pct_peak']:.1f}", f"{ref['pct_read']:.1f}" if key != "copy" else "", "", "", "", "", "", "",
                    "1.00" if key == "cub" else ""])
    measured = {r["stage"] for r in rows("ladder")}
    out += [[link(s), NOT_MEASURED] + [""] * 11 for s in reduce_stages() if s not in measured]
    headers = ["stage", "check", "stream ms", "GB/s", "% of peak", "% of read", "× prev", "tree ms", "GB/s",
               "% of peak", "% of read", "× prev", "× CUB"]
    return md_table(headers, out)


@helper
def stream_grid_line():
    """The stream grid each stage got, as the occupancy API answered."""
    data = [r for r in rows("ladder") if r["regime"] == "stream"]
    grids = ", ".join(f"{r['stage'][:2]}{'' if default_combine(r) else ' ' + r['combine']}: "
                      f"{r['grid']} ({r['sms']} × {r['blocks_per_sm']})" for r in data)
    return f"{grids} blocks of {data[0]['block']} threads (SMs × blocks per SM)"


@helper
def try_table(name):
    data = rows(name)
    headers, body = try_lines(data, "gflops" in data[0])
    return md_table(headers, body, ["---"] * 2 + ["---:"] * (len(headers) - 2))


# The part of the default check a FAIL line names: "...: exact: launch 2 of 3: ..." -> "exact".
FAILED_CHECK = re.compile(r"^FAIL [^:]*: (exact|probe_a|probe_b|probe|float|timed|canary|rate|launches|cub|read|naive|"
                          r"cublas): ")
CHECK_NAMES = {"exact": "the exact check", "probe": "the precision probe", "probe_a": "the probe of A",
               "probe_b": "the probe of B", "float": "the float bound",
               "timed": "the check of every warm-up and timed launch", "launches": "the count of checked launches",
               "canary": "the canary (the poison around what a launch may write)",
               "rate": "the rate against the theoretical peak"}


def caught_by(r, m):
    """Which check caught a mutant: racecheck, or the part of the default check its FAIL line names."""
    if m.expect == "racecheck":
        return "racecheck"
    if m.expect == "sass":
        return "the machine code (`scripts/sass.py`)"
    if "reported a first launch" in r["line"]:
        return "the launch shape (from the captured graph)"
    part = FAILED_CHECK.match(r["line"])
    return f"default check: {CHECK_NAMES.get(part.group(1), part.group(1))}" if part else "default check"


def mutant_results():
    """The planted bugs of maint/mutants.py with their measured rows; a mutant without one (added since the last
    ./maint/do measure) is noted as not measured yet, and results of a mutant the table no longer has are left out."""
    measured = {r["mutant"]: r for r in rows("mutants")}
    for m in MUTANTS:
        if m.name not in measured:
            not_measured.add(f"planted bug {m.name}: no row in docs/results/mutants.csv")
    return [(m, measured[m.name]) for m in MUTANTS if m.name in measured]


@helper
def mutant_table():
    body = []
    for m, r in mutant_results():
        args = f"`{m.args}`" if m.args else "none (the default run)"
        args = "none (not run: compiled for sm_90 and read)" if m.expect == "sass" else args
        body.append([f"`{m.name}`", link(m.stage), m.bug, args, caught_by(r, m), r["verdict"],
                     "`" + r["line"].replace("|", "\\|") + "`"])
    return md_table(["mutant", "stage", "planted bug", "arguments", "caught by", "verdict", "what the stage printed"],
                    body, ["---"] * 7)


@helper
def mutant_caught_by(name):
    """The check that caught a planted bug, from mutants.csv ('the exact check'); the docs fail where it got through."""
    for m, r in mutant_results():
        if m.name == name and r["verdict"] == "caught":
            return caught_by(r, m).removeprefix("default check: ")
    raise DocsError(f"a page says which check caught {name}, which mutants.csv does not record as caught")


@helper
def mutant_verdict(name):
    """'caught by racecheck' / 'caught by the default check' / 'not caught', from mutants.csv."""
    r = select("mutants", mutant=name)
    how = {"racecheck": "racecheck", "sass": "the machine-code check"}.get(r["expect"], "the default check")
    return f"caught by {how}" if r["verdict"] == "caught" else f"not caught ({r['verdict']})"


@helper
def probe_best_line(regime):
    """Each stage's quickest block size in the probe: '01 512, 02 1024, ...'."""
    stages = dict.fromkeys(r["stage"] for r in rows(f"probe_{regime}"))
    return ", ".join(f"{s[:2]} {probe_rank(s, regime)}" for s in stages)


@helper
def repeats_bits(combine):
    """Every determinism run of a combine gave bitwise the same result, at every size."""
    return all(r["bitwise_identical"] == "true" for r in rows("determinism") if r["combine"] == combine)


@helper
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
        words += (f"; the last {len(sass)} are orderings and scopes one GPU hides, and `scripts/sass.py` refuses "
                  f"the machine code of {sum(r['verdict'] == 'caught' for r in sass)} of them")
    missed = [f"`{r['mutant']}`" for r in every if r["verdict"] != "caught"]
    return words + (f". Not caught: {', '.join(missed)}." if missed else ".")


@helper
def stage_table(stage):
    """This stage in both regimes, with the stage before it for comparison. × prev across regimes (02's stream row
    against 01's only regime, tree) is marked *, as in ./ladder run's table."""
    i = reduce_stages().index(stage)
    body, crossed = [], False
    for regime in all_regimes():
        for st in ([reduce_stages()[i - 1]] if i else []) + [stage]:
            r = select(f"ladder_{regime}", stage=st)
            if r["regime"] != regime:
                continue  # 01 has no stream regime
            prev = select(f"ladder_{regime}", stage=reduce_stages()[reduce_stages().index(st) - 1]) if reduce_stages().index(st) else None
            mark = "*" if prev is not None and prev["regime"] != regime else ""
            crossed = crossed or bool(mark)
            body.append([regime, st if st != stage else f"**{st}**", r["grid"], f"{f(r['ms_median']):.3f}",
                         f"{f(r['gbps']):.0f}", f"{f(r['pct_peak']):.1f}",
                         "" if prev is None else f"{f(prev['ms_median']) / f(r['ms_median']):.2f}{mark}",
                         f"{f(r['x_cub']):.2f}"])
    table = md_table(["regime", "stage", "grid", "ms", "GB/s", "% of peak", "× prev", "× CUB"], body,
                     ["---", "---", "---:", "---:", "---:", "---:", "---:", "---:"])
    if crossed:
        table += (f"\n\n\\* against {reduce_stages()[0]}'s only regime, tree: {reduce_stages()[0]} has no loop, so no "
                  f"stream regime.")
    return table


@helper
def multiblock_table():
    body = []
    for r in rows("multiblock"):
        body.append([r["n"], f"`{r['combine']}`", r["check"], f"{f(r['ms_median']) * 1e3:.1f}", f"{f(r['gbps']):.0f}",
                     f"{f(r['pct_peak']):.1f}", f"{f(r['cub_ms_median']) * 1e3:.1f}", f"{f(r['cub_gbps']):.0f}",
                     f"{f(r['x_cub']):.2f}"])
    return md_table(["n", "combine", "check", "µs", "GB/s", "% of peak", "CUB µs", "CUB GB/s", "× CUB"], body)


# How the combines map onto the determinism levels CUB names (https://nvidia.github.io/cccl/unstable/cub/determinism.html).
CUB_LEVEL = {"atomic": "`not_guaranteed`", "two-pass": "`run_to_run`", "last-block": "`run_to_run`"}


@helper
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


@helper
def sweep_reach():
    """How far the sweep goes for each stage: 'up to 2^30 for 02_grid_stride and 03_padding, up to 2^32 for ...'."""
    top = {}
    for r in rows("sweep"):
        top[r["stage"]] = max(top.get(r["stage"], 0), int(r["n"]))
    by_top = {}
    for stage, n in top.items():
        by_top.setdefault(n, []).append(stage)
    return ", ".join(f"up to {pow2(n)} for {and_list(by_top[n])}" for n in sorted(by_top))


@helper
def sweep_table(step=2):
    """GB/s against n: every stage with a stream regime (07 with each combine), CUB and the read-only kernel from
    07's default-combine run; "-" where a stage was not run at that size."""
    data = rows("sweep_all")
    labels = list(dict.fromkeys(row_label(r) for r in data))
    sizes = sorted({int(r["n"]) for r in data})
    by = {(row_label(r), int(r["n"])): r for r in data}
    ref = next((l for l in labels if l.startswith(combine_stage())), None)
    if ref is None:
        raise NotMeasured(f"{combine_stage()} is not in the size sweep")
    body = []
    for i, n in enumerate(sizes):
        if i % step and n != sizes[-1]:
            continue
        cells = [gbps_cell(by[(s, n)]["gbps"]) if (s, n) in by else "-" for s in labels]
        body.append([pow2(n), *cells,
                     gbps_cell(by[(ref, n)]["cub_gbps"]), gbps_cell(by[(ref, n)]["read_gbps"])])
    return md_table(["n", *labels, "CUB", "read-only kernel"], body)


@helper
def probe_table(regime):
    data = rows(f"probe_{regime}")
    blocks = sorted({int(r["block"]) for r in data})
    body = []
    for label in dict.fromkeys(row_label(r) for r in data):
        by = {int(r["block"]): f(r["gbps"]) for r in data if row_label(r) == label}
        best = max(by, key=by.get)
        body.append([label, *[f"**{by[b]:.0f}**" if b == best else f"{by[b]:.0f}" for b in blocks]])
    return md_table(["stage", *[str(b) for b in blocks]], body)


@helper
def best_read():
    """The ladder row closest to (or furthest past) the read-only kernel: (its label, its % of read)."""
    r = max(rows("ladder"), key=lambda r: f(r["pct_read"]))
    label = row_label(r)
    return label, f"{f(r['pct_read']):.1f}"


@helper
def read_check_line():
    """The read-only kernel's own check in the ladder results, where the results record it."""
    data = rows("ladder")
    if "read_check" not in data[0]:
        return ("Its verdict in the results on these pages: not measured yet (they predate the `read_check` "
                "column; `./maint/do measure` records it).")
    by_process = {}  # each stage's process checks the read-only kernel once; its rows repeat that verdict
    for r in data:
        by_process.setdefault(r["stage"], r["read_check"])
    passed = sum(v == "PASS" for v in by_process.values())
    return (f"In the ladder results it passed in {passed} of the {len(by_process)} stages' processes (`read_check` in "
            f"`ladder.csv`).")


def flush_rows(n):
    return [select("flush", l2_flush=k, n=n) for k in ("clean", "write", "none")]


@helper
def flush_lines():
    """What the flush table shows, size by size, in generated words."""
    l2 = int(meta()["l2_bytes"])
    out = []
    for n in sorted({int(r["n"]) for r in rows("flush")}):
        clean, write, none = flush_rows(n)
        fits = which(4 * n <= l2, "fits in the L2", "does not fit in the L2")
        out.append(f"- n = {n} ({4 * n / 1e6:.0f} MB, {fits}): with no flush 07 is "
                   f"{compare_rows(clean, none, 'after a clean flush')}; after `write` 07 takes "
                   f"{time_difference(clean, write)} against `clean`, and CUB {time_difference(clean, write, prefix='cub_')}.")
    return "\n".join(out)


@helper
def flush_conclusion():
    """Skipping the flush, size by size, said once per outcome: quicker, slower or the same within noise."""
    groups = {-1: [], 0: [], 1: []}
    for n in sorted({int(r["n"]) for r in rows("flush")}):
        clean, _, none = flush_rows(n)
        groups[distinct(none, clean)].append(pow2(n))
    words = {-1: "makes 07 faster", 1: "makes 07 slower", 0: f"leaves 07 the same {NOISE}"}
    parts = [said(f"{words[k]} at n = {', '.join(v)}") for k, v in groups.items() if v]
    return "; it ".join(parts)


@helper
def flush_before_hold():
    """The same flush study as measured before the stream hold (flush_before_hold.csv, the results of commit
    21ec217): at each size, 07's time with no flush and after a clean flush, and the same now, in µs."""
    old = {(r["l2_flush"], r["n"]): f(r["ms_median"]) * 1e3 for r in rows("flush_before_hold")}
    now = {(r["l2_flush"], r["n"]): f(r["ms_median"]) * 1e3 for r in rows("flush")}
    body = [[pow2(n), f"{old[('none', n)]:.1f}", f"{old[('clean', n)]:.1f}", f"{now[('none', n)]:.1f}",
             f"{now[('clean', n)]:.1f}"]
            for n in sorted({k[1] for k in now}, key=int) if ("none", n) in old]
    return md_table(["n", "before: no flush µs", "before: clean µs", "now: no flush µs", "now: clean µs"], body)


@helper
def flush_compare(file, n):
    """07 with no flush against after a clean flush, at size n, in one of the two flush studies."""
    pick = {r["l2_flush"]: r for r in rows(file) if r["n"] == str(n)}
    return compare_rows(pick["clean"], pick["none"], "after a clean flush")


@helper
def hold_changed_hot(n):
    """Whether the stream hold changed the verdict on skipping the flush at size n: before it, no flush was not
    quicker than a clean flush, and now it is."""
    old = {(r["l2_flush"], r["n"]): f(r["ms_median"]) for r in rows("flush_before_hold")}
    clean, _, none = flush_rows(n)
    return old[("none", str(n))] >= old[("clean", str(n))] and distinct(none, clean) == -1


@helper
def flush_table():
    body = []
    for r in rows("flush"):
        body.append([f"`{r['l2_flush']}`", r["n"], f"{f(r['ms_median']) * 1e3:.1f}", f"{f(r['gbps']):.0f}",
                     f"{f(r['pct_peak']):.1f}", f"{f(r['cub_ms_median']) * 1e3:.1f}", f"{f(r['cub_gbps']):.0f}",
                     f"{f(r['cub_pct_peak']):.1f}"])
    return md_table(["--flush", "n", "07 µs", "07 GB/s", "07 % of peak", "CUB µs", "CUB GB/s", "CUB % of peak"], body)


@helper
def probe_rank(stage, regime, which="best"):
    """The fastest ("best") or slowest ("worst") block size of a stage in the probe."""
    data = stage_rows(f"probe_{regime}", stage)
    pick = max if which == "best" else min
    return pick(data, key=lambda r: f(r["gbps"]))["block"]


@helper
def probe_gbps(stage, regime, block, fmt=".0f"):
    return num(f"probe_{regime}", "gbps", fmt, stage=stage, block=block)


@helper
def sweep_best_n(stage, fmt=".1f"):
    """The sweep sizes at which a stage reached its best % of the peak, as the page prints it (ties all named)."""
    data = stage_rows("sweep", stage)
    best = max(format(f(r["pct_peak"]), fmt) for r in data)
    return " and ".join(pow2(r["n"]) for r in data if format(f(r["pct_peak"]), fmt) == best)


@helper
def tree_gbps(stages, block):
    """The tree-regime probe's GB/s of the stages at block threads per block."""
    return ", ".join(probe_gbps(s, "tree", block) for s in stages)


@helper
def sweep_max_range(stages):
    """The range of the stages' largest % of peak in the size sweep."""
    return value_range([sweep_max(s, ".0f") for s in stages])


@helper
def profiled_cases(gemm_variants):
    """The profiled runs a results table shows: every reduce stage in each regime it has, then the GEMM variants."""
    return [(s, "stream") for s in reduce_stages() if has_stream(s)] + [(s, "tree") for s in reduce_stages()] + \
        [(gemm_stage(), v) for v in gemm_variants]


@helper
def stage_links():
    return ", ".join(link(s) for s in ladder_stages())


@helper
def sweep_max(stage, fmt=".1f"):
    return format(max(f(r["pct_peak"]) for r in stage_rows("sweep", stage)), fmt)


@helper
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


# ---- the CPU beside the ladder (cpu_baseline) ----------------------------------------------------------------

@helper
def cpu_table():
    """The table ./ladder run prints under the ladder: the CPU's sums, the copy, 01 and 07 alone and after it."""
    headers, body = cpu_lines(optional("cpu"), rows("ladder"))
    return md_table(headers, body)


@helper
def cpu(row):
    """cpu_baseline's row: 'loop' (one thread), 'all_cores' or 'copy'."""
    return next(r for r in optional("cpu") if r["row"] == row)


@helper
def kernel(stage):
    """The stage's ladder row the CPU rows are compared with (its default combine, stream regime where it has one)."""
    return cpu_stage_row(rows("ladder"), stage)


@helper
def after_copy(stage):
    """kernel(stage) with the copy's time added: its median, fastest and slowest repetition each plus the copy's."""
    k, c = kernel(stage), cpu("copy")
    return {**k, **{key: str(f(k[key]) + f(c[key])) for key in ("ms_median", "ms_min", "ms_max")}}


@helper
def ms(r):
    return f"{f(r['ms_median']):.3f} ms"


@helper
def flag_list(stage, without=None):
    """The options `stage --help` lists (the long spelling of each), in its order, as code; with `without`, only
    those that stage does not list."""
    def listed(program):
        return [o["flags"][-1] for o in describe(program)["options"] if o["group"]]
    other = set(listed(without)) if without else set()
    return [f"`{flag}`" for flag in listed(stage) if flag not in other]


@helper
def stages_with(regime, only=False):
    """The numbers ('02') of the reduce stages that run a regime (only=True: that regime alone), as their stage files
    declare them."""
    return [s[:2] for s in reduce_stages() if regime in regimes(s) and (not only or regimes(s) == [regime])]
