"""The tables the pages show: one generic writer, table(), for a result file's rows with chosen, formatted columns,
a writer for each table of another shape, and the sections made of tables (experiments, evidence)."""
import re
import statistics

from ..measure import NCU_COUNTERS, NCU_SHORT, profile_command as ncu_command
from ..model_pages import model_check
from ..tests.check_try_file import CASES, CORRECT, WRONG
from maint import experiments
from scripts.run import cpu_lines, ladder_lines
from scripts.stages import all_regimes, combine_stage, combines, ladder_stages, reduce_stages, row_label, stage_file
from scripts.tries import try_lines, variant_target
from .base import (docs_path, f, link, md_table, measured, meta, not_measured, NOT_MEASURED, NotMeasured, common_constant,
                   pow2, ROOT, rows, select, stage_rows)
from .compare import which
from .numbers import (probe_tied, accuracy_series, accuracy_sizes, accuracy_ulps, caught_by, error_study, fp32_peak,
                      gemm_ffma_per_mac, mutant_results, ns_per_block, quantile, SMALL_N_MAX, spread_ulps,
                      stalls, sweep_07, us)
from .sources import own_report, padded

CELL = re.compile(r"([^*/:]+)(?:([*/])([^:]+))?(?::(.*))?")

def cell(r, spec):
    """A cell of a result row: spec a function of the row, or a column ("check"), as code ("`combine`"), formatted
    ("gbps:.0f"), scaled ("ms_median*1e3:.1f", "ns/1e3:.1f"); an ncu row's counters also by their short names."""
    if callable(spec):
        return spec(r)
    if spec.startswith("`"):
        return f"`{r[spec.strip('`')]}`"
    column, op, scale, fmt = CELL.fullmatch(spec).groups()
    value = r[column if column in r else NCU_SHORT[column]]
    if fmt is None:
        return value
    return format(f(value) * float(scale) if op == "*" else f(value) / float(scale) if op == "/" else f(value), fmt)
def kernel(r): return f"{r['stage']} ({r['variant']})"
def judged(r, text): return text if r["float_check"] != "skipped" else ""

CUB_LEVEL = {"atomic": "`not_guaranteed`", "two-pass": "`run_to_run`", "last-block": "`run_to_run`"}  # CUB's names
# name: (the result file, {header: cell spec (see cell())}, the columns' alignment; None: the first left, the rest right)
TABLES = {
    "multiblock": ("multiblock", {"n": "n", "combine": "`combine`", "check": "check", "µs": "ms_median*1e3:.1f",
                                  "GB/s": "gbps:.0f", "% of peak": "pct_peak:.1f", "CUB µs": "cub_ms_median*1e3:.1f",
                                  "CUB GB/s": "cub_gbps:.0f", "× CUB": "x_cub:.2f"}, None),
    "flush": ("flush", {"--flush": "`l2_flush`", "n": "n", "07 µs": "ms_median*1e3:.1f", "07 GB/s": "gbps:.0f",
                        "07 % of peak": "pct_peak:.1f", "CUB µs": "cub_ms_median*1e3:.1f", "CUB GB/s": "cub_gbps:.0f",
                        "CUB % of peak": "cub_pct_peak:.1f"}, None),
    "combine_tree": ("combine_tree", {
        "block": "block", "combine": "`combine`", "blocks": lambda r: f"{int(r['grid']):,}", "check": "check",
        "ms": "ms_median:.3f", "GB/s": "gbps:.0f", "ns per block": lambda r: f"{ns_per_block(r):.2f}"}, None),
    "determinism": ("determinism", {
        "n": "n", "combine": "`combine`", "runs": "runs", "distinct results": "distinct_results", "smallest": "min_result",
        "largest": "max_result", "spread (ulp)": spread_ulps,
        "largest relative error": lambda r: f"{f(r['max_abs_error']) / abs(f(r['reference'])):.1e}",
        "bitwise identical": lambda r: "yes" if r["bitwise_identical"] == "true" else "no",
        "CUB's level": lambda r: CUB_LEVEL.get(r["combine"], ""), "every result checked": "check"}, None),
    "float_error": ("ladder", {
        "stage": "stage", "regime": "regime", "combine": "combine",
        "first launch (blocks x threads)": lambda r: f"{r['grid']} x {r['threads']}", "abs error": "abs_error",
        "bound": lambda r: judged(r, r["bound"]) or "skipped",
        "error / bound": lambda r: judged(r, f"{f(r['error_bound_ratio']):.2g}"),
        "launches checked": lambda r: f"{r['launches_checked']} of {r['launches']}", "verdict": "check"},
        ["---"] * 4 + ["---:"] * 4 + ["---"]),
    "profile": ("ncu", {
        "kernel (first launch)": kernel, "µs": "ns/1e3:.1f", "DRAM % of peak": "dram_pct:.1f",
        "achieved occupancy %": "occupancy:.1f", "registers": "regs:.0f", "warp instructions": "instructions:,.0f",
        "threads on per instruction": "pred_on:.1f", "shared-load wavefronts": "wavefronts_ld:,.0f",
        "bank conflicts (ld + st)": lambda r: f"{f(r[NCU_SHORT['conflicts_ld']]) + f(r[NCU_SHORT['conflicts_st']]):,.0f}",
        "top stalls (warp-cycles per issue)": lambda r: stalls(r["stage"], r["variant"])}, None),
    "shared": ("ncu", {"kernel (first launch)": kernel, "bank conflicts, loads": "conflicts_ld:,.0f",
                       "bank conflicts, stores": "conflicts_st:,.0f", "shared-load instructions": "shared_ld:,.0f",
                       "instructions": "instructions:,.0f", "µs": "ns/1e3:.1f"}, None),
    "divergence": ("ncu", {"kernel": kernel, "divergent branch targets": "divergent:,.0f",
                           "active threads per instruction": "threads:.1f", "threads on per instruction": "pred_on:.1f",
                           "warp instructions": "instructions:,.0f"}, None),
    "gemm_pipes": ("ncu", {"kernel": "variant", "FMA pipe busy, %": "fma_pct:.1f", "tensor pipe busy, %": "tensor_pct:.1f",
                           "FFMA thread instructions": "ffma:,.0f",
                           "per multiply-add": lambda r: f"{gemm_ffma_per_mac(r['stage'], r['variant']):.2f}"}, None),
}

def table(name, data=None):
    """A table of TABLES: its result file's rows, or the rows given, or the profiled kernels [(stage, variant), ...]."""
    file, columns, align = TABLES[name]
    data = [select("ncu", stage=d[0], variant=d[1]) if isinstance(d, tuple) else d for d in data or rows(file)]
    return md_table(list(columns), [[cell(r, spec) for spec in columns.values()] for r in data], align)
def ladder_table():  # the table ./ladder run prints: both regimes side by side, 07 at atomic and last-block, and CUB
    _, body, refs = ladder_lines(rows("ladder"))
    out = [[link(c[0].split(" ")[0]) + c[0][len(c[0].split(" ")[0]):], *c[1:]] for c in body]
    names = {"cub": "CUB `DeviceReduce::Sum`", "read": f"[read-only kernel]({docs_path('method.md#speed-of-light')})",
             "copy": "`cudaMemcpy` device to device (read + write)"}
    out += [[names[key] + " (median of the runs)", "", f"{ref['ms']:.3f}", f"{ref['gbps']:.0f}", f"{ref['pct_peak']:.1f}",
             f"{ref['pct_read']:.1f}" if key != "copy" else "", *[""] * 6, "1.00" if key == "cub" else ""]
            for key, ref in refs.items()]
    out += [[link(s), NOT_MEASURED] + [""] * 11 for s in reduce_stages() if s not in {r["stage"] for r in rows("ladder")}]
    return md_table(["stage", "check", "stream ms", "GB/s", "% of peak", "% of read", "× prev", "tree ms", "GB/s",
                     "% of peak", "% of read", "× prev", "× CUB"], out)
def stage_table(stage):
    """This stage in both regimes, with the one before; × prev across regimes (02's stream row against 01) marked *."""
    stages, body = reduce_stages(), []
    for regime in all_regimes():
        for i in range(max(stages.index(stage) - 1, 0), stages.index(stage) + 1):
            r, prev = select(f"ladder_{regime}", stage=stages[i]), select(f"ladder_{regime}", stage=stages[i - 1]) if i else None
            if r["regime"] == regime:  # 01 has no stream regime
                body.append([regime, stages[i] if stages[i] != stage else f"**{stage}**", r["grid"], f"{f(r['ms_median']):.3f}",
                             f"{f(r['gbps']):.0f}", f"{f(r['pct_peak']):.1f}", "" if prev is None else
                             f"{f(prev['ms_median']) / f(r['ms_median']):.2f}{'*' if prev['regime'] != regime else ''}",
                             f"{f(r['x_cub']):.2f}"])
    return md_table(["regime", "stage", "grid", "ms", "GB/s", "% of peak", "× prev", "× CUB"], body, left=2) + (
        f"\n\n\\* against {stages[0]}'s only regime, tree: {stages[0]} has no loop, so no stream regime."
        if any(row[6].endswith("*") for row in body) else "")
def try_table(name): return md_table(*try_lines(rows(name), "gflops" in rows(name)[0]), left=2)
def mutant_table():
    body = [[f"`{m.name}`", link(m.stage), m.bug, "none (not run: compiled for sm_90 and read)" if m.expect == "sass"
             else f"`{m.args}`" if m.args else "none (the default run)", caught_by(r, m), r["verdict"],
             "`" + r["line"].replace("|", "\\|") + "`"] for m, r in mutant_results()]
    return md_table(["mutant", "stage", "planted bug", "arguments", "caught by", "verdict", "what the stage printed"],
                    body, left=7)
def sweep_table():
    """GB/s against n of every stage with a stream regime (07 with each combine), CUB and the read-only kernel (07's
    default-combine run); "-" where a stage did not run; three digits at least, so the smallest sizes tell apart."""
    data = rows("sweep_all")
    labels, sizes = list(dict.fromkeys(row_label(r) for r in data)), sorted({int(r["n"]) for r in data})
    by = {(row_label(r), int(r["n"])): r for r in data}
    ref = next((l for l in labels if l.startswith(combine_stage())), None)
    if ref is None:
        raise NotMeasured(f"{combine_stage()} is not in the size sweep")
    def gbps(v): return f"{f(v):.0f}" if f(v) >= 100 else f"{f(v):.3g}"
    body = [[pow2(n), *[gbps(by[(s, n)]["gbps"]) if (s, n) in by else "-" for s in labels],
             gbps(by[(ref, n)]["cub_gbps"]), gbps(by[(ref, n)]["read_gbps"])] for n in sizes]
    return md_table(["n", *labels, "CUB", "read-only kernel"], body)
def probe_table(regime):
    data = rows(f"probe_{regime}")
    blocks, body = sorted({int(r["block"]) for r in data}), []
    for label in dict.fromkeys(row_label(r) for r in data):
        by = {int(r["block"]): f(r["gbps"]) for r in data if row_label(r) == label}
        tied = [int(b) for b in probe_tied([r for r in data if row_label(r) == label])]
        body.append([label, *[f"**{by[b]:.0f}**" if b in tied else f"{by[b]:.0f}" for b in blocks]])
    return md_table(["stage", *[str(b) for b in blocks]], body)
def small_n_table():
    by = {c: sweep_07(c) for c in combines(combine_stage())}
    body = [[pow2(n), a["grid"] if a["grid"] != "1" else f"1 × {a['threads']} threads",
             *[f"{us(by[c][n]):.2f}" for c in by], f"{us(a, 'cub_ms_median'):.2f}", f"{us(a, 'read_ms_median'):.2f}",
             *[f"{f(by[c][n]['x_cub']):.2f}" for c in by], f"{f(a['pct_read']):.0f}"]
            for n, a in sorted(by["atomic"].items()) if n <= SMALL_N_MAX]
    return md_table(["n", "grid", *[f"{c} µs" for c in by], "CUB µs", "read-only µs", *[f"{c} × CUB" for c in by],
                     "atomic % of read"], body)
def cpu_table(): return md_table(*cpu_lines(rows("cpu"), rows("ladder")))  # as ./ladder run prints it
def accuracy_table(ulps=False):
    series = accuracy_ulps() if ulps else accuracy_series()
    return md_table(["n", *series], [[pow2(n), *[format(s[n], ".2f" if ulps else ".1e") if n in s else ""
                                                 for s in series.values()]] for n in accuracy_sizes()])
def bound_table():
    """The bound each stage's launch gets from its own shape, relative to the exact sum, against the loop's n u."""
    by = {(r["stage"], int(r["n"])): r for r in reversed(rows("accuracy"))}
    body = [[pow2(n), *[f"{f(by[s, n]['bound']) / f(by[s, n]['reference']):.1e}" if (s, n) in by else NOT_MEASURED
                        for s in reduce_stages()], f"{n * 2.0 ** -24:.1e}"] for n in accuracy_sizes()]
    return md_table(["n", *reduce_stages(), "CPU float loop, n u"], body)

ERROR_BINS = [0.01, 0.03, 0.1, 0.3, 0.5, 1.0]  # the edges of the error study's columns

def error_study_table():
    """The distribution of error / bound per stage: quantiles, the centring test, and how many fall in each bin."""
    study, edges = error_study(), [0.0] + ERROR_BINS
    heads = [f"{lo:g} to {hi:g}" for lo, hi in zip(edges, edges[1:])] + [f"over {ERROR_BINS[-1]:g}"]
    body = []
    for stage, vals in [*study["by_stage"].items(), ("all", study["ratios"])]:
        z = study["sigmas"].get(stage)
        limit = f"{common_constant('kCentringLambda') / len(z) ** 0.5:.2g}" if z else ""
        body.append([stage, "0"] + [NOT_MEASURED] * (5 + len(heads)) if not vals else [
            stage, str(len(vals)), *[f"{quantile(vals, q):.3g}" for q in (0.5, 0.9, 0.99, 1.0)],
            "" if stage == "all" else f"{statistics.fmean(z):.3g} (limit {limit})" if z else NOT_MEASURED,
            *[str(sum(lo < v <= hi or (lo == 0 and v == 0) for v in vals)) for lo, hi in zip(edges, edges[1:])],
            str(sum(v > ERROR_BINS[-1] for v in vals))])
    return md_table(["stage", "configurations", "median", "90th pct", "99th pct", "max", "mean error / σ", *heads], body)
def gemm_table(stage, tile="16", sizes=None):
    """Each size of the GEMM stage at one tile: the tiled kernels, then the naive kernel and cuBLAS."""
    data = [r for r in stage_rows("gemm", stage) if r["tile"] == tile and (sizes is None or r["m"] in sizes)]
    body = []
    for size in dict.fromkeys(r["m"] for r in data):
        group = [r for r in data if r["m"] == size]
        body += [[f"{size}³", f"tiled {padded(tile)} (padded)" if r["pad"] == "true" else f"tiled {tile}×{tile}", r["check"],
                  f"{f(r['ms_median']):.3f}", f"{f(r['gflops']):.0f}", f"{f(r['pct_cublas']):.1f}", f"{f(r['x_naive']):.2f}"]
                 for r in group]
        r = group[0]
        body.append([f"{size}³", "naive", r["naive_check"], f"{f(r['naive_ms_median']):.3f}", f"{f(r['naive_gflops']):.0f}",
                     f"{100 * f(r['cublas_ms_median']) / f(r['naive_ms_median']):.1f}", "1.00"])
        body.append([f"{size}³", "cuBLAS SGEMM", r["cublas_check"], f"{f(r['cublas_ms_median']):.3f}",
                     f"{f(r['cublas_gflops']):.0f}", "100.0", f"{f(r['naive_ms_median']) / f(r['cublas_ms_median']):.2f}"])
    return md_table(["M = N = K", "kernel", "check", "ms", "GFLOP/s", "% of cuBLAS", "× naive"], body)
def roofline_table():
    """Every reduce stage (stream, 07 atomic) at 0.25 FLOP per byte and every GEMM kernel at 4096³, against the roof."""
    g, ai, bw = select("gemm", m="4096", tile="16", pad="false"), 2 * 4096 ** 3 / (4 * 3 * 4096 ** 2), f(meta()["peak_gbps"])
    points = [(r["stage"] + (" (tree)" if r["regime"] == "tree" else ""), 0.25, 0.25 * f(r["gbps"])) for r in rows("ladder_stream")]
    points += [(f"{name}, 4096³", ai, f(g[column])) for name, column in
               (("tiled 16×16", "gflops"), ("naive", "naive_gflops"), ("cuBLAS", "cublas_gflops"))]
    body = [[name, f"{ai:.2f}", f"{gf:,.0f}", f"{min(fp32_peak(), ai * bw):,.0f}", f"{100 * gf / min(fp32_peak(), ai * bw):.1f}",
             which(ai * bw < fp32_peak(), "bandwidth", "FP32 peak")] for name, ai, gf in points]
    return md_table(["kernel", "FLOP/B", "GFLOP/s", "roof GFLOP/s", "% of roof", "roof set by"], body)
def gemm_profile_table(stage):  # the tiled kernel, the naive one and cuBLAS in the profiler, then their pipes and FFMAs
    return "\n\n".join(table(t, [(stage, v) for v in ("tiled", "naive", "cuBLAS")]) for t in ("profile", "gemm_pipes"))
def ncu_metrics_table():  # every counter ./maint/do profile keeps, as the pages call it, beside its ncu metric
    return md_table(["what the pages say", "`ncu` metric"], [[label, f"`{metric}`"] for _, metric, label, _ in NCU_COUNTERS] + [
        ["top stall reasons, warp-cycles stalled per issued instruction ([glossary](glossary.md#stall-reason))",
         "`smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio`"]], left=2)
def own_cases_table():  # the planted copies of 05 that the test try_file hands to ./ladder try, and what they must say
    return md_table(["copy of 05", "the report must hold", "exit status"],
                    [[f"`{name}`", ", ".join(f"`{w}`" for w in wanted), " or ".join(str(s) for s in allowed)]
                     for name, _, allowed, wanted in CASES], left=3)
def own_corpus_table():  # the corpus (check_try_file.py): what ./ladder try said of each file on the GPU of these results
    out = []
    for name, stage, *_ in [*CORRECT, *WRONG]:
        try:
            lines = own_report(name).splitlines()[1:-1]
        except NotMeasured:  # a file added since ./maint/do measure --part own: noted, the others shown
            continue
        first = next((after.strip() for line, after in zip(lines, lines[1:]) if line.startswith("  FAIL ")), "")
        out.append([f"`{name}.cu`", stage[:2], "correct" if name in dict(c[:2] for c in CORRECT) else "wrong",
                    next(line for line in lines if line.startswith("ladder try:")) + (f" ({first})" if first else ""),
                    lines[-1].strip("()")])
    return md_table(["file", "stage", "written", "what ./ladder try said", "exit status"], out, left=4)
def stage_list():  # each stage, the one change its file's first line names (code names as code), and its page
    firsts = [stage_file(s).read_text().splitlines()[0].removeprefix("//").strip().removeprefix(f"{s}:").strip().rstrip(".")
              for s in ladder_stages()]
    return md_table(["stage", "the one change", "page"], [[f"`{s}`", re.sub(r"\b(__\w+|k[A-Z]\w*)\b", r"`\1`", first), link(s)]
                                                          for s, first in zip(ladder_stages(), firsts)], left=3)
def profile_command(stage, variant):
    return "```\n" + ncu_command(stage, variant, select("ncu", stage=stage, variant=variant)["n_or_size"]) + "\n```"

def experiments_section(stage):
    """Every docs/experiments/<stage>/*.patch: the patch, its command, its rows and, where profiled, the profiler's."""
    out = []
    for patch in [p for s, p in experiments() if s == stage]:
        name, (intro, _, diff_text) = patch.stem, patch.read_text().partition("--- ")
        out += [f"### {name}\n\n{' '.join(intro.split())}\n\n```diff\n--- {diff_text.rstrip()}\n```\n",
                f"`./ladder try {stage[:2]} {patch.relative_to(ROOT)}`, on the GPU measured here:\n"]
        if not measured(f"try_{stage}_{name}"):  # a patch kept before it was measured
            not_measured.add(f"{stage}: the experiment {name}")
            out.append(NOT_MEASURED + " (`./maint/do measure` on a GPU)\n")
            continue
        out.append(try_table(f"try_{stage}_{name}") + "\n")
        profiled = [r["variant"] for r in rows("ncu") if r["stage"] == stage and r["variant"].endswith(f", {name}")]
        if profiled:
            cases = [(stage, c) for v in profiled for c in (v.split(",")[0], v)]
            command = profile_command(stage, profiled[0].split(",")[0]).replace(
                f"build/bin/{stage}", f"build/try/bin/{variant_target(stage, name)}")
            out += ["<details>\n<summary><b>The profiler's rows</b>: first launch, the file beside the patch (open it)"
                    "</summary>\n\n`./maint/do profile` profiles every experiment that `./ladder try` has built:\n",
                    table("profile", cases) + "\n", command + "\n", table("divergence", cases) + "\n", "</details>\n"]
    return "\n".join(out)

def evidence(stage, cases, command=None, extra=""):
    """A stage page's folded evidence: model_check, the profiler's rows of cases, the command of one, and extra."""
    try:
        profile = [table("profile", cases), "", profile_command(*(command or cases[0]))]
    except NotMeasured:  # a stage not profiled yet: the section is there, and says so
        not_measured.add(f"{stage}: no rows in docs/results/ncu.csv")
        profile = [NOT_MEASURED + " (`./maint/do profile` on a GPU)"]
    return "\n".join(['<a id="evidence"></a>', "<details>", "<summary><b>Evidence</b>: the host run of this stage's code "
                      "against Nsight Compute's counters, the profiler's rows and the command that repeats them</summary>",
                      "", "### The host run against the counters", "", model_check(stage, rows("ncu"), rows("ncu_source")),
                      "", "### The profiler's rows", "", "The first launch of each, as `./maint/do profile` saved it:", "",
                      *profile, "", *([extra.strip(), ""] if extra else []), "</details>"])
