"""The reader's commands but try: run (the ladder, the CPU and the GEMM rung, and the tables they print, which the docs
show too), diff (the code one stage changes in another) and test (CTest, the skipped tests and why, and a note where
the measured results no longer describe the code)."""
import difflib
import json
import re
import statistics
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree

from .stages import (CPU, ROOT, StageError, UsageProblem, all_pass, all_regimes, combine_stage, combines, describe,
                     fmt_num, gemm_stages, ladder_stages, meta_from, reduce_stages, regime_args,
                     relative_error, resolve_stage, row_label, run_binary, save, say, stage_file, table)

def run_args(a, only=("reps", "warmup", "seed", "input", "flush", "device")):
    """./ladder's timing and input options, passed to the stage programs as they are: each program checks them."""
    return [x for name in only if getattr(a, name, None) is not None for x in (f"--{name}", str(getattr(a, name)))]

def size_args(a):
    return ["-n", a.size] if getattr(a, "size", None) else []

def gemm_args(a):
    return [*(["--size", a.gemm_size] if getattr(a, "gemm_size", None) else []),
            *(["--reps", a.gemm_reps] if getattr(a, "gemm_reps", None) else []),
            *run_args(a, ("seed", "input", "device", "flush"))]

def check_options(a):
    """Every stage option ./ladder was given, checked by a program that takes it before anything runs: a refused
    value is the program's own line, after the ./ladder option that carried it."""
    tried = resolve_stage(a.stage) if a.command == "try" else None  # its own --help names them
    for flag, name in (("-n", "size"), ("--reps", "reps"), ("--warmup", "warmup"), ("--gemm-size", "gemm_size"),
                       ("--gemm-reps", "gemm_reps")):  # what the tried stage would ignore is refused
        if tried and getattr(a, name) and name.startswith("gemm") != (tried in gemm_stages()):
            raise UsageProblem(f"try {tried} {flag}: {flag} is for the " + ("GEMM rung" if "gemm" in name else
                               "reduce stages (the GEMM takes --gemm-size and --gemm-reps)"))
    describe(tried or reduce_stages()[0], (*size_args(a), *run_args(a)))
    describe(CPU, (*size_args(a), *run_args(a, ("seed", "input", "device"))))
    for option, flag in (("gemm_size", "--size"), ("gemm_reps", "--reps")):
        if getattr(a, option, None) and gemm_stages():
            describe(gemm_stages()[0], (flag, getattr(a, option)), f"--{option.replace('_', '-')}")

def run_combines(stage):
    """A stage with several combine strategies runs its default (the first) beside the fastest deterministic one."""
    return list(dict.fromkeys([combines(stage)[0], "last-block"]))

def ladder_rows(a):
    rows = []
    for i, stage in enumerate(reduce_stages(), 1):
        say(f"[{i}/{len(ladder_stages())}] {stage}")
        combine = ["--combine", ",".join(run_combines(stage))] if len(combines(stage)) > 1 else []
        rows += run_binary(stage, [*size_args(a), *regime_args(stage), *combine, *run_args(a)])[0]
    return rows

def cpu_rows(a):
    say(f"[cpu] {CPU}: the CPU's float loop, on every hardware thread, and the copy of the input to the GPU")
    return run_binary(CPU, [*size_args(a), *run_args(a, ("seed", "input", "device"))])[0]

def gemm_rows(a):
    rows = []
    for stage in gemm_stages():
        say(f"[{ladder_stages().index(stage) + 1}/{len(ladder_stages())}] {stage}")
        rows += run_binary(stage, ["--pad", "both", *gemm_args(a)])[0]
    return rows

def cmd_run(a):
    started = time.time()
    rows = ladder_rows(a)
    grows = [] if a.no_gemm else gemm_rows(a)
    cpu = cpu_rows(a)
    print_ladder(rows)
    print_cpu(cpu, rows)
    if grows:
        print_gemm(grows)
    print(f"\n  {len(reduce_stages()) + (1 if grows else 0)} stages in {time.time() - started:.1f} s")
    if a.save:
        save(a.save, "ladder", rows, meta_from(rows[0]))
        save(a.save, "cpu", cpu)
        if grows:
            save(a.save, f"gemm_{grows[0]['m']}", grows)
    return 0 if all_pass(rows, grows) else 1  # the ladder's verdict: the CPU rows are a baseline, shown with theirs

def ladder_lines(rows):
    """The comparison, one line per stage (and per combine where a stage runs several), both regimes side by side:
    (headers, body, references). x prev compares a regime's time with the previous stage's in the same regime; 01
    runs only the tree regime, so 02's stream column is compared with 01's only regime, marked '*'."""
    lines = {}
    for r in rows:
        lines.setdefault((r["stage"], r["combine"]), {})[r["regime"]] = r
    body, prev_stage, prev, current = [], None, {}, {}
    for (stage, _), by in lines.items():
        if stage != prev_stage:
            prev, current, prev_stage = current, {}, stage
        cells = [row_label(next(iter(by.values()))), "PASS" if all_pass(by.values()) else "FAIL"]
        for regime in all_regimes():
            if (r := by.get(regime)) is None:
                cells += ["-"] * 5
                continue
            ms = float(r["ms_median"])
            base = prev.get(regime) or (prev.get("tree") if regime == "stream" else None)
            mark = "*" if regime == "stream" and base is not None and base["regime"] == "tree" else ""
            cells += [f"{ms:.3f}", fmt_num(r["gbps"], ".0f"), fmt_num(r["pct_peak"], ".1f"),
                      fmt_num(r.get("pct_read", "nan"), ".1f"),
                      "-" if base is None else f"{float(base['ms_median']) / ms:.2f}{mark}"]
        stream = by.get("stream") or by.get("tree")
        body.append(cells + [fmt_num(stream["x_cub"], ".2f") + ("*" if stream["regime"] == "tree" else "")])
        for regime, r in by.items():
            current.setdefault(regime, r)  # the stage's first combine is what the next stage compares with
    headers = ["stage", "check", "stream ms", "GB/s", "% peak", "% read", "x prev", "tree ms", "GB/s", "% peak",
               "% read", "x prev", "x CUB"]
    # the references (CUB, the read-only kernel, the device-to-device copy): medians of the stages' runs of them
    n, peak = int(rows[0]["n"]), float(rows[0]["peak_gbps"])
    ms = {name: statistics.median(float(r[f"{name}_ms_median"]) for r in rows) for name in ("cub", "read", "copy")}
    return headers, body, {name: {"ms": ms[name], "gbps": moved / (ms[name] * 1e6),
                                  "pct_peak": 100 * moved / (ms[name] * 1e6) / peak,
                                  "pct_read": 100 * ms["read"] / ms[name]}
                           for name, moved in [("cub", 4 * n), ("read", 4 * n), ("copy", 8 * n)]}

REFERENCE_NAMES = {"cub": "CUB DeviceReduce::Sum", "read": "read-only kernel (speed of light)",
                   "copy": "cudaMemcpy device to device (read + write)"}

def print_ladder(rows):
    r0, n = rows[0], int(rows[0]["n"])
    print(f"\ncuda-ladder on {r0['device']} ({r0['sms']} SMs, {float(r0['peak_gbps']):.0f} GB/s theoretical), "
          f"driver {r0['driver']}, runtime {r0['runtime']}")
    print(f"float sum of n = {n} floats ({n * 4 / 1e9:.2f} GB, input '{r0['input']}', seed {r0['seed']}); median "
          f"of {r0['reps']} reps, L2 flush before each: {r0['l2_flush']}")
    print("stream regime: a grid that fills the GPU (from the occupancy API), many elements per thread; "
          "tree regime: one element per thread, grid = n / block\n")
    headers, body, refs = ladder_lines(rows)
    for key, ref in refs.items():
        body.append([REFERENCE_NAMES[key], "-", f"{ref['ms']:.3f}", f"{ref['gbps']:.0f}", f"{ref['pct_peak']:.1f}",
                     f"{ref['pct_read']:.1f}" if key != "copy" else "-", *["-"] * 6, "1.00" if key == "cub" else "-"])
    print(table(headers, body))
    if grids := {r["stage"]: r for r in rows if r["regime"] == "stream"}:
        per_stage = ", ".join(f"{s[:2]} {g['grid']}" for s, g in grids.items())
        print(f"\n  stream grid: {per_stage} blocks of {r0['block']} threads ({r0['sms']} SMs x the blocks per SM the occupancy API gives each kernel)")
    print("  check: PASS = every check the stage's run made passed (each program's table header says which; "
          "docs/method.md, \"What a PASS proves\")")
    print("  % read: GB/s over the read-only kernel's, timed in the same process: how close the stage is to what "
          "this GPU reaches reading the same bytes (the copy counts bytes read and written)")
    print("  x prev: the previous stage's time / this one's, in the same regime (*: against 01, which runs only the "
          "tree regime); x CUB: CUB's time in the same run / the stage's stream time (*: 01's tree time; above 1 is "
          "faster than CUB)")

def cpu_stage_row(ladder, stage):
    """The stage's row the CPU is compared with: its default combine, in the stream regime where it has one."""
    mine = [r for r in ladder if r["stage"] == stage and r["combine"] == run_combines(stage)[0]]
    return next((r for r in mine if r["regime"] == "stream"), mine[0])

def cpu_lines(cpu, ladder):
    """The CPU beside the ladder: the loop, on every hardware thread, the copies, and the first and last reduce
    stages alone and after the pageable copy (the two medians added: a kernel cannot start before its input is
    there), each sum's relative error beside its check ('*': its float result was not judged, its bound too loose
    to say anything; the exact check carried the verdict). (headers, body), for ./ladder run and the docs."""
    if (cpu[0]["n"], cpu[0]["seed"], cpu[0]["input"]) != (ladder[0]["n"], ladder[0]["seed"], ladder[0]["input"]):
        raise StageError(f"the CPU rows (n = {cpu[0]['n']}) and the ladder's (n = {ladder[0]['n']}) are not of the "
                         "same input")
    by = {r["row"]: r for r in cpu}
    copy, loop_ms = by["copy"], float(by["loop"]["ms_median"])

    def line(name, threads, r, ms=None, check=None):
        ms = float(r["ms_median"]) if ms is None else ms
        error = "-" if r.get("reference") in (None, "") else f"{relative_error(r):.1e}"
        return [name, threads, (check or r["check"]) + ("*" if r.get("float_check") == "skipped" else ""), error,
                f"{ms:.3f}", f"{int(copy['bytes']) / (ms * 1e6):.1f}", f"{loop_ms / ms:.1f}"]

    body = [line(name, "-" if key.startswith("copy") else by[key]["threads"], by[key]) for key, name in
            [("loop", "CPU float loop, 1 thread"), ("all_cores", "CPU float loop, every hardware thread"),
             ("copy", "copy to the GPU (pageable memory)"), ("copy_pinned", "copy to the GPU (pinned memory)")]]
    for stage in (reduce_stages()[0], combine_stage()):  # the first rung, and the last of the reduction
        r = cpu_stage_row(ladder, stage)
        name = f"{row_label(r)}, {r['regime']} regime"
        body += [line(f"{name}: the kernel", "-", r),
                 line(f"{name}: copy + kernel", "-", r, float(r["ms_median"]) + float(copy["ms_median"]),
                      "PASS" if all_pass([r, copy]) else "FAIL")]
    return ["the same input", "threads", "check", "rel. error", "ms", "GB/s", "x loop"], body

def print_cpu(cpu, ladder):
    print(f"\nThe CPU ({cpu[0]['cpu']}) on the same {cpu[0]['n']} floats, and the copy a kernel waits for when its "
          f"input starts on the host; median of {cpu[0]['reps']} reps\n")
    print(table(*cpu_lines(cpu, ladder)))
    print("  copy + kernel: the pageable copy's median and the kernel's added (a kernel cannot start before its input "
          "has arrived); pinned: from page-locked memory (cudaMallocHost); x loop: the float loop's time / the row's")
    print("  rel. error: |sum - oracle| / oracle; check *: the float result was not judged (its bound would exceed "
          "0.1% of the sum, so it says nothing) and the exact check carried the verdict. The CPU rows are the "
          "baseline: a FAIL there is the float loop's, shown, and sets cpu_baseline's exit status, not this command's")

def print_gemm(rows):
    r0 = rows[0]
    print(f"\nGEMM {r0['m']} x {r0['n']} x {r0['k']} (float, row-major); cuBLAS: {r0['cublas_math']}\n")
    out = [[f"tiled {r['tile']}x{int(r['tile']) + (1 if r['pad'] else 0)}" + (" (padded)" if r["pad"] else ""),
            r["check"], fmt_num(r["ms_median"], ".3f"), fmt_num(r["gflops"], ".0f"), fmt_num(r["pct_cublas"], ".1f"),
            fmt_num(r["x_naive"], ".2f")] for r in rows]
    naive, cublas = float(r0["naive_ms_median"]), float(r0["cublas_ms_median"])
    out.append(["naive", r0["naive_check"], f"{naive:.3f}", fmt_num(r0["naive_gflops"], ".0f"),
                f"{100 * cublas / naive:.1f}", "1.00"])
    out.append(["cuBLAS", r0["cublas_check"], f"{cublas:.3f}", fmt_num(r0["cublas_gflops"], ".0f"), "100.0",
                f"{naive / cublas:.2f}"])
    print(table(["kernel", "check", "ms", "GFLOP/s", "% cuBLAS", "x naive"], out))

# ---- diff: the code a stage adds, as its page shows it ---------------------------------------------------------------

HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")

def stage_diff(before, after, context=2):
    """The unified diff of two stage files of one kind (the same file name; UsageProblem otherwise, or for one stage
    twice) below their header comments (everything before the first #include), with the files' own line numbers;
    `diff -u` of the two files shows the header comments too."""
    if before == after:
        raise UsageProblem(f"diff {before[:2]} {after[:2]}: a stage against itself shows nothing")
    a_file, b_file = stage_file(before), stage_file(after)
    if a_file.name != b_file.name:
        raise UsageProblem(f"diff {before[:2]} {after[:2]}: {before}/{a_file.name} and {after}/{b_file.name} are "
                           "stages of two kinds; ./ladder diff compares two stage files of one kind")
    texts = [a_file.read_text().splitlines(), b_file.read_text().splitlines()]
    a0, b0 = (next(i for i, line in enumerate(t) if line.startswith("#include")) for t in texts)
    out = []
    for line in difflib.unified_diff(texts[0][a0:], texts[1][b0:], f"{before}/{a_file.name}", f"{after}/{b_file.name}",
                                     n=context, lineterm=""):
        m = HUNK.match(line)
        out.append(f"@@ -{int(m[1]) + a0}{m[2] or ''} +{int(m[3]) + b0}{m[4] or ''} @@" if m else line)
    return "\n".join(out)

# ---- test: CTest, the skipped tests and why, and whether the measured results still describe the code --------------

SKIP_REASON = re.compile(r"^(?:SKIPPED: (.*)|\S*?:? ?(no usable GPU)\b.*)$", re.M)
NO_GPU = "no usable GPU (no driver, no device, or compute capability below 7.5)"

def cmd_test(a):
    """ctest in the build directory (as a reader would run it there), the skipped tests grouped by the reason their
    output gives, and the note on the measured results; all on stdout, so `./ladder test > t.txt` keeps them."""
    junit = a.build / "Testing" / "ladder-junit.xml"
    junit.unlink(missing_ok=True)
    sys.stdout.flush()
    status = subprocess.run(["ctest", "--output-on-failure", "--no-tests=error", "--parallel", str(a.parallel),
                             "--output-junit", str(junit), *a.ctest_args], cwd=a.build).returncode
    if junit.exists():
        reasons = {}
        for case in ElementTree.parse(junit).getroot().iter("testcase"):
            if case.find("skipped") is not None:
                m = SKIP_REASON.search(case.findtext("system-out") or "")
                reason = (m[1] or NO_GPU) if m else "it printed no reason (a test of the project must say why)"
                reasons.setdefault(reason, []).append(case.get("name"))
        if reasons:
            print(f"ladder: {sum(map(len, reasons.values()))} tests skipped:")
        for reason, tests in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
            print(f"  {len(tests):3d} because {reason}: {', '.join(tests[:3])}{', ...' if len(tests) > 3 else ''}")
    if note := stale_evidence():
        print(f"ladder: note: {note}")
    return 1 if status else 0  # ctest's 8: a test failed, or none matched

def stale_evidence():
    """The sentence naming the stage, harness and CPU sources changed (git diff) since the commits the measured results
    (docs/results/) were measured at, and the command that measures again; None where none, or git cannot say."""
    try:
        parts = json.loads((ROOT / "docs" / "results" / "meta.json").read_text())["parts"]
    except (OSError, ValueError, KeyError):
        return None
    changed = set()
    for commit in {p["commit"] for p in parts.values()}:
        done = subprocess.run(["git", "-C", str(ROOT), "diff", "--name-only", "--diff-filter=d", commit, "--",
                               "[0-9][0-9]_*", "common", "cpu_baseline"], capture_output=True, text=True)
        if done.returncode != 0:
            return None
        changed.update(f for f in done.stdout.split() if f.endswith((".cu", ".cpp", ".hpp")))
    if not (names := sorted(changed)):
        return None
    return (f"the results the docs show were measured before {', '.join(names[:3])}{' and more' if len(names) > 3 else ''}"
            f" changed, so they describe the code as it was; ./maint/do measure on a GPU measures them again (this "
            f"does not change any test's verdict)")
