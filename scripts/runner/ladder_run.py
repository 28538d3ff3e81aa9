"""./ladder run: every reduce stage in both regimes, the CPU on the same input and the GEMM rung; the tables it
prints, which the docs show too."""
import statistics

from ..cli import say
from .results import (all_pass, fmt_num, gemm_args, relative_error, row_label, run_args, run_binary, size_args,
                      table)
from .stages import (CPU, StageError, all_regimes, combine_stage, combines, gemm_stages, ladder_stages, reduce_stages,
                     regime_args)


def run_combines(stage):
    """A stage with several combine strategies runs its default (the first) beside the fastest deterministic one."""
    return list(dict.fromkeys([combines(stage)[0], "last-block"]))


def ladder_rows(a):
    rows = []
    for i, stage in enumerate(reduce_stages(), 1):
        say(f"[{i}/{len(ladder_stages())}] {stage}")
        combine = ["--combine", ",".join(run_combines(stage))] if len(combines(stage)) > 1 else []
        r, _ = run_binary(a.build, stage, [*size_args(a), *regime_args(stage), *combine, *run_args(a)])
        rows.extend(r)
    return rows


def cpu_rows(a):
    say(f"[cpu] {CPU}: the CPU's float loop, on every hardware thread, and the copy of the input to the GPU")
    r, _ = run_binary(a.build, CPU, [*size_args(a), *run_args(a, ("seed", "input", "device"))])
    return r


def cpu_stage_row(ladder, stage):
    """The stage's row the CPU is compared with: its default combine, in the stream regime where it has one."""
    mine = [r for r in ladder if r["stage"] == stage and r["combine"] == run_combines(stage)[0]]
    return next((r for r in mine if r["regime"] == "stream"), mine[0])


def cpu_lines(cpu, ladder):
    """The CPU beside the ladder: the loop, on every hardware thread, the copies, and the first and last reduce stages alone and
    after the pageable copy (the two medians added: the kernel cannot start before its input is there). Each sum's
    relative error against the oracle beside its check ('*': its float result was not judged, its bound being too
    loose to say anything; the exact check carried the verdict). Returns (headers, body); shared by ./ladder run and
    the docs."""
    if (cpu[0]["n"], cpu[0]["seed"], cpu[0]["input"]) != (ladder[0]["n"], ladder[0]["seed"], ladder[0]["input"]):
        raise StageError(f"the CPU rows (n = {cpu[0]['n']}) and the ladder's (n = {ladder[0]['n']}) are not of the same input")
    by = {r["row"]: r for r in cpu}
    copy = by["copy"]

    def line(name, threads, r, ms, check=None):
        error = "-" if r.get("reference") in (None, "") else f"{relative_error(r):.1e}"
        return [name, threads, (check or r["check"]) + ("*" if r.get("float_check") == "skipped" else ""), error, ms]

    body = [line("CPU float loop, 1 thread", by["loop"]["threads"], by["loop"], float(by["loop"]["ms_median"])),
            line("CPU float loop, every hardware thread", by["all_cores"]["threads"], by["all_cores"],
                 float(by["all_cores"]["ms_median"])),
            line("copy to the GPU (pageable memory)", "-", copy, float(copy["ms_median"])),
            line("copy to the GPU (pinned memory)", "-", by["copy_pinned"], float(by["copy_pinned"]["ms_median"]))]
    for stage in (reduce_stages()[0], combine_stage()):  # the first rung, and the last of the reduction
        r = cpu_stage_row(ladder, stage)
        name = f"{row_label(r)}, {r['regime']} regime"
        body += [line(f"{name}: the kernel", "-", r, float(r["ms_median"])),
                 line(f"{name}: copy + kernel", "-", r, float(r["ms_median"]) + float(copy["ms_median"]),
                      "PASS" if all_pass([r, copy]) else "FAIL")]
    loop_ms, n_bytes = body[0][-1], int(copy["bytes"])
    for cells in body:
        ms = cells.pop()
        cells += [f"{ms:.3f}", f"{n_bytes / (ms * 1e6):.1f}", f"{loop_ms / ms:.1f}"]
    return ["the same input", "threads", "check", "rel. error", "ms", "GB/s", "x loop"], body


def print_cpu(cpu, ladder):
    first = cpu[0]
    print(f"\nThe CPU ({first['cpu']}) on the same {first['n']} floats, and the copy a kernel waits for when its input "
          f"starts on the host; median of {first['reps']} reps\n")
    print(table(*cpu_lines(cpu, ladder)))
    print("  copy + kernel: the pageable copy's median and the kernel's added (a kernel cannot start before its input has "
          "arrived); pinned: from page-locked memory (cudaMallocHost); x loop: the float loop's time / the row's")
    print("  rel. error: |sum - oracle| / oracle; check *: the float result was not judged (its bound would exceed 0.1% of "
          "the sum, so it says nothing) and the exact check carried the verdict. The CPU rows are the baseline: a FAIL "
          "there is the float loop's, shown, and sets cpu_baseline's exit status, not this command's")


def gemm_rows(a):
    rows = []
    for stage in gemm_stages():
        say(f"[{ladder_stages().index(stage) + 1}/{len(ladder_stages())}] {stage}")
        rows += run_binary(a.build, stage, ["--pad", "both", *gemm_args(a)])[0]
    return rows


def ladder_lines(rows):
    """The comparison, one line per stage (and per combine where a stage runs several), both regimes side by
    side. Returns (headers, body, cub) with cells as strings; shared by ./ladder run and the docs.

    x prev compares a regime's time with the previous stage's in the same regime; 01 runs only the tree
    regime (one element per thread), so 02's stream column is compared with 01's only regime, marked '*'."""
    lines = {}
    for r in rows:
        lines.setdefault((r["stage"], r["combine"]), {})[r["regime"]] = r
    body, prev_stage, prev, current = [], None, {}, {}
    for (stage, combine), by in lines.items():
        if stage != prev_stage:
            prev, current, prev_stage = current, {}, stage
        label = row_label(next(iter(by.values())))
        cells = [label, "PASS" if all_pass(by.values()) else "FAIL"]  # every row's own verdict, none judged here
        for regime in all_regimes():
            r = by.get(regime)
            if r is None:
                cells += ["-", "-", "-", "-", "-"]
                continue
            ms = float(r["ms_median"])
            base = prev.get(regime) or (prev.get("tree") if regime == "stream" else None)
            mark = "*" if regime == "stream" and base is not None and base["regime"] == "tree" else ""
            cells += [f"{ms:.3f}", fmt_num(r["gbps"], ".0f"), fmt_num(r["pct_peak"], ".1f"),
                      fmt_num(r.get("pct_read", "nan"), ".1f"),
                      "-" if base is None else f"{float(base['ms_median']) / ms:.2f}{mark}"]
        stream = by.get("stream") or by.get("tree")
        cells.append(fmt_num(stream["x_cub"], ".2f") + ("*" if stream["regime"] == "tree" else ""))
        body.append(cells)
        for regime, r in by.items():
            current.setdefault(regime, r)  # the stage's first combine is what the next stage compares with
    headers = ["stage", "check", "stream ms", "GB/s", "% peak", "% read", "x prev", "tree ms", "GB/s", "% peak",
               "% read", "x prev", "x CUB"]
    return headers, body, reference_lines(rows)


def reference_lines(rows):
    """CUB, the read-only kernel and the device-to-device copy, each the median over the stages' runs (each
    stage times them again in its own process): {name: {ms, gbps, pct_peak, pct_read}}."""
    n, peak = int(rows[0]["n"]), float(rows[0]["peak_gbps"])
    read_ms = statistics.median(float(r.get("read_ms_median", "nan")) for r in rows)
    out = {}
    for name, field, bytes_moved in [("cub", "cub_ms_median", 4 * n), ("read", "read_ms_median", 4 * n),
                                     ("copy", "copy_ms_median", 8 * n)]:
        if field not in rows[0]:
            continue  # results from before the reference was timed
        ms = statistics.median(float(r[field]) for r in rows)
        gbps = bytes_moved / (ms * 1e6)
        out[name] = {"ms": ms, "gbps": gbps, "pct_peak": 100 * gbps / peak, "pct_read": 100 * read_ms / ms}
    return out


REFERENCE_NAMES = {"cub": "CUB DeviceReduce::Sum", "read": "read-only kernel (speed of light)",
                   "copy": "cudaMemcpy device to device (read + write)"}


def print_ladder(rows):
    first = rows[0]
    n = int(first["n"])
    print(f"\ncuda-ladder on {first['device']} ({first['sms']} SMs, {float(first['peak_gbps']):.0f} GB/s theoretical), "
          f"driver {first['driver']}, runtime {first['runtime']}")
    print(f"float sum of n = {n} floats ({n * 4 / 1e9:.2f} GB, input '{first['input']}', seed {first['seed']}); median "
          f"of {first['reps']} reps, L2 flush before each: {first['l2_flush']}")
    print("stream regime: a grid that fills the GPU (from the occupancy API), many elements per thread; "
          "tree regime: one element per thread, grid = n / block\n")
    headers, body, refs = ladder_lines(rows)
    for key, ref in refs.items():
        body.append([REFERENCE_NAMES[key], "-", f"{ref['ms']:.3f}", f"{ref['gbps']:.0f}", f"{ref['pct_peak']:.1f}",
                     f"{ref['pct_read']:.1f}" if key != "copy" else "-", "-", "-", "-", "-", "-", "-",
                     "1.00" if key == "cub" else "-"])
    print(table(headers, body))
    grids = {r["stage"]: r for r in rows if r["regime"] == "stream"}
    if grids:
        r = next(iter(grids.values()))
        per_stage = ", ".join(f"{s[:2]} {g['grid']}" for s, g in grids.items())
        print(f"\n  stream grid: {per_stage} blocks of {r['block']} threads ({r['sms']} SMs x the blocks per SM "
              f"the occupancy API gives each kernel)")
    print("  check: PASS = every check of the run passed: the exact check (dyadic values whose sum is exact in float, "
          "three launches), the precision probe, the float result within the bound of the launch's own summation "
          "shape, and every warm-up and timed launch, CUB's and the read-only kernel's too, none of them faster than "
          "the theoretical peak allows (docs/method.md, \"What a PASS proves\"); the memory-model bugs one GPU hides "
          "are the machine-code test's (scripts/sass.py)")
    print("  % read: GB/s over the read-only kernel's, timed in the same process: how close the stage is to what "
          "this GPU reaches reading the same bytes (the copy counts bytes read and written)")
    print("  x prev: the previous stage's time / this one's, in the same regime (*: against 01, which runs only the "
          "tree regime); x CUB: CUB's time in the same run / the stage's stream time (*: 01's tree time; above 1 is "
          "faster than CUB)")


def print_gemm(rows):
    r0 = rows[0]
    print(f"\nGEMM {r0['m']} x {r0['n']} x {r0['k']} (float, row-major); cuBLAS: {r0['cublas_math']}\n")
    out = []
    for r in rows:
        name = f"tiled {r['tile']}x{int(r['tile']) + (1 if r['pad'] else 0)}" + (" (padded)" if r["pad"] else "")
        out.append([name, r["check"], fmt_num(r["ms_median"], ".3f"), fmt_num(r["gflops"], ".0f"),
                    fmt_num(r["pct_cublas"], ".1f"), fmt_num(r["x_naive"], ".2f")])
    out.append(["naive", r0["naive_check"], fmt_num(r0["naive_ms_median"], ".3f"), fmt_num(r0["naive_gflops"], ".0f"),
                f"{100 * float(r0['cublas_ms_median']) / float(r0['naive_ms_median']):.1f}", "1.00"])
    out.append(["cuBLAS", r0["cublas_check"], fmt_num(r0["cublas_ms_median"], ".3f"), fmt_num(r0["cublas_gflops"], ".0f"),
                "100.0", f"{float(r0['naive_ms_median']) / float(r0['cublas_ms_median']):.2f}"])
    print(table(["kernel", "check", "ms", "GFLOP/s", "% cuBLAS", "x naive"], out))
