#!/usr/bin/env python3
"""The ladder runner (called by ./ladder): runs the stage binaries and compares them.

  run      every stage in order on the same input, then one comparison table (and the GEMM rung)
  sweep    GB/s against n for stages 02..07 and CUB
  probe    GB/s against the block size (64..1024) for every reduce stage
  measure  everything the docs are built from, written to docs/results/ (or --save)
  profile  Nsight Compute counters (bank conflicts, shared-memory traffic, DRAM bytes) per stage
  try      a stage with a constant (NAME=v1,v2) or an option (--opt=v1,v2) changed, beside the original
  diff     the code a stage adds to the previous one, as its docs page shows it
  mutants  every planted bug of tests/mutants.py, run as its test runs it, with what the stage printed

Only the Python standard library is used here.
"""
import argparse
import csv
import datetime
import difflib
import io
import json
import os
import pathlib
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def stages_in_order():
    """The ladder as the top-level CMakeLists.txt lists it (the syllabus lives in one place)."""
    text = (ROOT / "CMakeLists.txt").read_text()
    return [line.split("(")[1].rstrip(")").strip() for line in text.splitlines()
            if line.startswith("add_subdirectory(0")]


STAGES = stages_in_order()
REDUCE = [s for s in STAGES if (ROOT / s / "reduce.cu").exists()]
GEMM = next((s for s in STAGES if (ROOT / s / "gemm.cu").exists()), None)


class NoGpu(Exception):
    pass


class StageError(Exception):
    pass


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def binary(build: pathlib.Path, stage: str) -> str:
    path = build / "bin" / stage
    if not path.exists():
        raise StageError(f"{path} does not exist: build first (./ladder build)")
    return str(path)


def run_binary(build, stage, args, fmt="json", exe=None):
    """Runs one stage binary (or exe, a variant of it) with --format fmt; returns its rows and exit status."""
    cmd = [exe or binary(build, stage), *args, "--format", fmt]
    started = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode == 77:
        raise NoGpu(proc.stderr.strip())
    if proc.returncode not in (0, 1):
        raise StageError(f"{' '.join(cmd[1:])}\n{stage} exited {proc.returncode}: {proc.stderr.strip()}")
    if fmt == "json":
        rows = json.loads(proc.stdout)
    else:
        rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    if proc.returncode == 1 and rows and all(row_passes(r) for r in rows) and "--determinism" not in args:
        # exit 1 means a check failed: if no row says which, the failure is one the rows do not carry
        raise StageError(f"{' '.join(cmd[1:])}\n{stage} exited 1 (a check failed) but every row passes: "
                         f"run it with --format table to see its notes")
    say(f"      {stage} {' '.join(args)}  ({time.time() - started:.1f} s)")
    return rows, proc.returncode


def common_args(a):
    args = ["--reps", str(a.reps), "--warmup", str(a.warmup), "--seed", str(a.seed), "--input", a.input,
            "--device", str(a.device)]
    return args + ["--flush", a.flush]


REGIMES = ("stream", "tree")
# 07 runs its default combine (atomic) and the fastest deterministic one (last-block) side by side.
RUN_COMBINES = {"07_multiblock": "atomic,last-block"}


def regime_args(stage, regimes=REGIMES):
    """01 has no grid-stride loop: it runs only the tree regime and takes no --regime."""
    return [] if stage == REDUCE[0] else ["--regime", ",".join(regimes)]


def fmt_num(v, spec):
    return "-" if v is None or v == "" else format(float(v), spec)


def table(headers, rows):
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    out = ["  " + "  ".join(f"{h:>{w}}" if i else f"{h:<{w}}" for i, (h, w) in enumerate(zip(headers, widths)))]
    for r in rows:
        out.append("  " + "  ".join(f"{str(c):>{w}}" if i else f"{str(c):<{w}}" for i, (c, w) in enumerate(zip(r, widths))))
    return "\n".join(out)


def tool_version(cmd, pick=lambda out: out.strip().splitlines()[-1]):
    try:
        return pick(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    except (OSError, subprocess.CalledProcessError, IndexError):
        return "unknown"


def meta_from(row):
    return {
        "device": row["device"], "compute_capability": row["compute_capability"], "sms": row["sms"],
        "l2_bytes": row["l2_bytes"], "peak_gbps": row["peak_gbps"], "cuda_driver_api": row["driver"],
        "cuda_runtime": row["runtime"],
        "driver": tool_version(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                               lambda out: out.strip().splitlines()[0]),
        "nvcc": tool_version(["nvcc", "--version"]),
    }


def git_commit():
    if os.environ.get("LADDER_COMMIT"):
        return os.environ["LADDER_COMMIT"]
    try:
        return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


SAVE_FORMAT = "csv"


def save(directory, name, rows, meta=None):
    """Writes rows to <directory>/<name>.csv (or .json with --save-format json), and the meta beside them."""
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.{SAVE_FORMAT}"
    if rows and SAVE_FORMAT == "json":
        path.write_text(json.dumps(rows, indent=1) + "\n")
    elif rows:
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
            w.writeheader()
            for r in rows:
                w.writerow({k: ("" if v is None else str(v).lower() if isinstance(v, bool) else v) for k, v in r.items()})
    if meta is not None:
        (directory / f"{name}.meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    say(f"      wrote {path}")


# ---- run ---------------------------------------------------------------------------------------------

def ladder_rows(a):
    rows = []
    for i, stage in enumerate(REDUCE, 1):
        say(f"[{i}/{len(STAGES)}] {stage}")
        combine = ["--combine", RUN_COMBINES[stage]] if stage in RUN_COMBINES else []
        r, _ = run_binary(a.build, stage, ["-n", a.size, *regime_args(stage), *combine, *common_args(a)])
        rows.extend(r)
    return rows


def gemm_rows(a):
    say(f"[{len(STAGES)}/{len(STAGES)}] {GEMM}")
    r, _ = run_binary(a.build, GEMM, ["--size", a.gemm_size, "--pad", "both", "--reps", str(a.gemm_reps),
                                      "--seed", str(a.seed), "--input", a.input, "--device", str(a.device),
                                      "--flush", a.flush])
    return r


def ladder_lines(rows):
    """The comparison, one line per stage (and per combine where a stage runs several), both regimes side by
    side. Returns (headers, body, cub) with cells as strings; shared by ./ladder run and the docs.

    x prev compares a regime's time with the previous stage's in the same regime; 01 runs only the tree
    regime (one element per thread), so 02's stream column is compared with 01's one launch, marked '*'."""
    lines = {}
    for r in rows:
        lines.setdefault((r["stage"], r["combine"]), {})[r["regime"]] = r
    body, prev_stage, prev, current = [], None, {}, {}
    for (stage, combine), by in lines.items():
        if stage != prev_stage:
            prev, current, prev_stage = current, {}, stage
        label = stage if combine == "relaunch" else f"{stage} ({combine})"
        cells = [label, "PASS" if all(x["check"] == "PASS" for x in by.values()) else "FAIL"]
        for regime in REGIMES:
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
    print("  check: PASS = the exact check (the same launch on random integers, whose sum is exact in float, equals "
          "the exact sum) and the float result within its bound")
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


def row_passes(r):
    """A row's every check: the stage's, CUB's and the speed-of-light read's (GEMM rows: the kernels')."""
    return r["check"] == "PASS" and all(r.get(k, "PASS") in ("PASS", "-") for k in
                                        ("cub_check", "read_check", "naive_check", "cublas_check"))


def all_pass(reduce_rows, gemm=()):
    ok = all(row_passes(r) for r in reduce_rows)
    return ok and all(r["check"] == "PASS" for r in gemm)


def cmd_run(a):
    started = time.time()
    rows = ladder_rows(a)
    grows = [] if a.no_gemm or GEMM is None else gemm_rows(a)
    print_ladder(rows)
    if grows:
        print_gemm(grows)
    print(f"\n  {len(REDUCE) + (1 if grows else 0)} stages in {time.time() - started:.1f} s")
    if a.save:
        save(a.save, "ladder", rows, {**meta_from(rows[0]), "commit": git_commit()})
        if grows:
            save(a.save, f"gemm_{a.gemm_size}", grows)
    return 0 if all_pass(rows, grows) else 1


# ---- sweep and probe ---------------------------------------------------------------------------------

def sweep_rows(a):
    rows = []
    stages = REDUCE[1:]
    for i, stage in enumerate(stages, 1):
        say(f"[{i}/{len(stages)}] {stage}: n = {a.sweep}")
        r, _ = run_binary(a.build, stage, ["-n", a.sweep, *common_args(a)])
        rows.extend(r)
    return rows


def print_sweep(rows):
    sizes = sorted({int(r["n"]) for r in rows})
    stages = list(dict.fromkeys(r["stage"] for r in rows))
    by = {(r["stage"], int(r["n"])): r for r in rows}
    out = []
    for n in sizes:
        cub = by[(stages[-1], n)]["cub_gbps"]
        out.append([str(n), *[fmt_num(by[(s, n)]["gbps"], ".0f") for s in stages], fmt_num(cub, ".0f")])
    print("\nGB/s against n (stream regime; CUB from the 07_multiblock run)\n")
    print(table(["n", *stages, "CUB"], out))


def cmd_sweep(a):
    rows = sweep_rows(a)
    print_sweep(rows)
    if a.save:
        save(a.save, "sweep", rows, {**meta_from(rows[0]), "commit": git_commit()})
    return 0 if all_pass(rows) else 1


def probe_rows(a, regime):
    rows = []
    for i, stage in enumerate(REDUCE, 1):
        say(f"[{i}/{len(REDUCE)}] {stage}: blocks 64..1024")
        if regime == "stream" and stage == REDUCE[0]:
            continue  # 01 has no stream regime
        r, _ = run_binary(a.build, stage, ["-n", a.size, "--block", "64,128,256,512,1024",
                                           *regime_args(stage, [regime]), *common_args(a)])
        rows.extend(r)
    return rows


def print_probe(rows, regime):
    blocks = sorted({int(r["block"]) for r in rows})
    out = []
    for stage in dict.fromkeys(r["stage"] for r in rows):
        by = {int(r["block"]): r for r in rows if r["stage"] == stage}
        best = max(blocks, key=lambda b: float(by[b]["gbps"]))
        out.append([stage, *[fmt_num(by[b]["gbps"], ".0f") + ("*" if b == best else " ") for b in blocks]])
    print(f"\nGB/s against threads per block ({regime} regime, n = {rows[0]['n']}; * marks the fastest)\n")
    print(table(["stage", *[str(b) for b in blocks]], out))


def cmd_probe(a):
    rows = probe_rows(a, a.regime)
    print_probe(rows, a.regime)
    if a.save:
        save(a.save, f"probe_{a.regime}", rows, {**meta_from(rows[0]), "commit": git_commit()})
    return 0 if all_pass(rows) else 1


# ---- measure: everything the docs use ------------------------------------------------------------------

def mutant_rows(a):
    """Runs every planted bug (tests/mutants.py) as its test does; records the verdict and the line it printed."""
    sys.path.insert(0, str(ROOT / "tests"))
    from mutants import MUTANTS
    sanitizer = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
    rows = []
    for m in MUTANTS:
        exe = a.build / "tests" / "bin" / f"mutant_{m.name}"
        if not exe.exists():
            raise StageError(f"{exe} does not exist: build the target 'mutants' first")
        cmd = [str(exe), *shlex.split(m.args)]
        if m.expect == "racecheck":
            cmd = [sanitizer, "--tool", "racecheck", "--error-exitcode", "99", "--print-limit", "1", *cmd]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        text = proc.stdout + proc.stderr
        if proc.returncode == 77:
            raise NoGpu(text.strip())
        if m.expect == "racecheck":
            caught = proc.returncode == 99
            line = next((l for l in text.splitlines() if "RACECHECK SUMMARY" in l), "")
        else:
            caught = proc.returncode == 1 and "FAIL" in text
            line = next((l.strip() for l in text.splitlines() if l.strip().startswith("FAIL ")), "")
        say(f"      mutant {m.name}: {'caught' if caught else 'NOT CAUGHT'} (exit {proc.returncode})")
        rows.append({"mutant": m.name, "stage": m.stage, "expect": m.expect, "args": m.args, "exit": proc.returncode,
                     "verdict": "caught" if caught else "NOT CAUGHT", "line": line.replace("=========", "").strip()})
    return rows


def cmd_mutants(a):
    rows = mutant_rows(a)
    print(table(["mutant", "verdict", "exit", "what the stage printed"],
                [[r["mutant"], r["verdict"], str(r["exit"]), r["line"][:110]] for r in rows]))
    if a.save:
        save(a.save, "mutants", rows)
    return 0 if all(r["verdict"] == "caught" for r in rows) else 1


# The "things to try" of the stage pages, measured by ./ladder measure (the pages show these results).
ACCURACY_SIZES = ",".join(f"2^{k}" for k in range(10, 31, 2))


def try_experiments():
    return [("06_float4", "kLoadsInFlight=1,2,4,8"), ("02_grid_stride", "--grid=64,128,256,512,1024,2048,4096,16384")] + \
        [(stage, str(path.relative_to(ROOT))) for stage, path in experiments()]


def cmd_measure(a):
    out = pathlib.Path(a.save or ROOT / "docs" / "results")
    started = time.time()
    ok = True
    meta = None
    say("== the ladder, both regimes (what ./ladder run does after the build: the ladder, then the GEMM rung)")
    t0 = time.time()
    rows = ladder_rows(a)
    ok &= all_pass(gemm_rows(a))
    run_seconds = round(time.time() - t0, 1)
    print_ladder(rows)
    meta = {**meta_from(rows[0]), "commit": git_commit(),
            "date": datetime.date.today().isoformat(), "command": "./ladder measure",
            "ladder_run_s": run_seconds}
    save(out, "ladder", rows, meta)
    ok &= all_pass(rows)
    for stage, spec in try_experiments():
        say(f"== ./ladder try {stage[:2]} {spec}")
        a.args = [stage, spec]
        a.save = str(out)
        ok &= cmd_try(a) == 0
    say("== planted bugs: every mutant must be caught")
    rows = mutant_rows(a)
    save(out, "mutants", rows)
    ok &= all(r["verdict"] == "caught" for r in rows)
    say("== 07_multiblock: every combine strategy at the sizes of the targets")
    rows, _ = run_binary(a.build, "07_multiblock", ["-n", "2^20,2^24,20000000,2^28", "--combine", "all", *common_args(a)])
    save(out, "multiblock", rows)
    ok &= all_pass(rows)
    say("== 07_multiblock in the tree regime: every combine at small blocks (one atomic or ticket per block)")
    rows, _ = run_binary(a.build, "07_multiblock", ["-n", a.size, "--regime", "tree", "--block", "64,128,256,1024",
                                                    "--combine", "all", *common_args(a)])
    save(out, "combine_tree", rows)
    ok &= all_pass(rows)
    say("== the L2 flush: 07_multiblock and CUB timed after each kind of flush")
    frows = []
    for flush in ("clean", "write", "none"):
        r, _ = run_binary(a.build, "07_multiblock", ["-n", "2^22,2^24,2^28", *common_args(a)[:-2], "--flush", flush])
        frows.extend(r)
    save(out, "flush", frows)
    ok &= all_pass(frows)
    say("== 07_multiblock: determinism, 100 runs of each strategy at three sizes")
    drows = []
    for n in ("2^20", "2^24", "2^28"):
        rows, rc = run_binary(a.build, "07_multiblock", ["-n", n, "--combine", "all", "--determinism", "100",
                                                         "--seed", str(a.seed), "--input", a.input])
        drows.extend(rows)
        ok &= rc == 0
    save(out, "determinism", drows)
    say("== accuracy: every stage's float result from 2^10 to 2^30 (--check-only), and the CPU's float sums")
    arows = []
    for stage in REDUCE:
        rows, _ = run_binary(a.build, stage, ["--check-only", "-n", ACCURACY_SIZES, "--seed", str(a.seed),
                                              "--device", str(a.device)])
        arows.extend(rows)
    save(out, "accuracy", arows)
    ok &= all_pass(arows)
    proc = subprocess.run([str(a.build / "tests" / "bin" / "cpu_sums"), "--seed", str(a.seed), "--max-log2", "30"],
                          capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise StageError(f"cpu_sums failed (exit {proc.returncode}): {proc.stderr.strip()}")
    ok &= proc.returncode == 0
    (out / "accuracy_cpu.csv").write_text(proc.stdout)
    say("== size sweep")
    rows = sweep_rows(a)
    print_sweep(rows)
    save(out, "sweep", rows)
    ok &= all_pass(rows)
    for regime in ("stream", "tree"):
        say(f"== block-size probe, {regime} regime")
        rows = probe_rows(a, regime)
        print_probe(rows, regime)
        save(out, f"probe_{regime}", rows)
        ok &= all_pass(rows)
    say("== GEMM sizes")
    grows = []
    for size, tile in [("1024", 16), ("2048", 16), ("4096", 16), ("8192", 16), ("4096", 32)]:
        r, _ = run_binary(a.build, GEMM, ["--size", size, "--tile", str(tile), "--pad", "both",
                                          "--reps", str(a.gemm_reps), "--seed", str(a.seed), "--device", str(a.device)])
        grows.extend(r)
    save(out, "gemm", grows)
    ok &= all(r["check"] == "PASS" and r["naive_check"] == "PASS" and r["cublas_check"] == "PASS" for r in grows)
    if find_ncu():
        say("== Nsight Compute counters and racecheck")
        a.save = str(out)
        cmd_profile(a)
    else:
        say("== ncu not found: Nsight Compute counters not measured")
    meta["elapsed_s"] = round(time.time() - started, 1)
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    say(f"== done in {meta['elapsed_s']} s; results in {out}")
    return 0 if ok else 1


# ---- profile: Nsight Compute counters ------------------------------------------------------------------

# The Nsight Compute sections every case collects (they name their metrics per GPU, so nothing here breaks on
# another chip), plus the shared-memory and instruction counters the pages cite. ./ladder profile keeps the
# columns below; the pages name each by its ncu metric, so a reader can ask ncu for the same one.
NCU_SECTIONS = ["SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats", "InstructionStats", "SourceCounters"]
NCU_METRICS = [
    "dram__bytes_read.sum",
    "smsp__inst_executed_op_shared_ld.sum",
    "smsp__inst_executed_op_shared_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
]
NCU_COLUMNS = {
    "gpu__time_duration.sum": "duration (ns)",
    "dram__bytes_read.sum": "DRAM bytes read",
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": "DRAM throughput, % of peak",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": "memory throughput, % of peak",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": "SM throughput, % of peak",
    "launch__registers_per_thread": "registers per thread",
    "sm__maximum_warps_per_active_cycle_pct": "theoretical occupancy, %",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved occupancy, %",
    "smsp__inst_executed.sum": "warp instructions",
    "smsp__thread_inst_executed_per_inst_executed.ratio": "active threads per instruction",
    "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio": "threads with predicate on per instruction",
    "smsp__sass_branch_targets_threads_divergent.sum": "divergent branch targets",
    "smsp__inst_executed_op_shared_ld.sum": "shared-load instructions",
    "smsp__inst_executed_op_shared_st.sum": "shared-store instructions",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": "shared-load wavefronts",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": "shared-store wavefronts",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": "bank conflicts, loads",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": "bank conflicts, stores",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed": "FMA pipe active, % of peak",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed": "tensor pipe active, % of peak",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": "FFMA thread instructions",
}
STALL = re.compile(r"^smsp__average_warps_issue_stalled_(\w+)_per_issue_active\.ratio$")
TOP_STALLS = 3


def parse_ncu_raw(text):
    """ncu --page raw --csv: a header row, a units row, then one row per profiled kernel -> [{column: value}]."""
    lines = [l for l in text.splitlines() if l.startswith('"')]
    if len(lines) < 3:
        return []
    table_rows = list(csv.reader(io.StringIO("\n".join(lines))))
    header = table_rows[0]
    return [dict(zip(header, r)) for r in table_rows[2:]]


def ncu_number(value):
    try:
        return float(str(value).replace(",", ""))
    except ValueError:
        return ""


def ncu_row(stage, variant, size, kernel):
    """One profiled kernel -> the row ./ladder profile keeps: the columns above and the top stall reasons (warps
    stalled per issued instruction, WarpStateStats; "selected" is issuing, not a stall)."""
    row = {"stage": stage, "variant": variant, "n_or_size": size, "kernel": kernel.get("Kernel Name", ""),
           "grid": kernel.get("Grid Size", ""), "block": kernel.get("Block Size", "")}
    row.update({m: ncu_number(kernel.get(m, "")) for m in NCU_COLUMNS})
    stalls = sorted(((ncu_number(v), STALL.match(k).group(1)) for k, v in kernel.items()
                     if STALL.match(k) and STALL.match(k).group(1) != "selected" and ncu_number(v) != ""), reverse=True)
    for i in range(TOP_STALLS):
        value, name = stalls[i] if i < len(stalls) else ("", "")
        row[f"stall_{i + 1}"], row[f"stall_{i + 1}_per_issue"] = name, value
    row.update({f"stall_{name}": value for value, name in sorted(stalls, key=lambda s: s[1])})
    return row


def find_ncu():
    for candidate in (shutil.which("ncu"), "/usr/local/cuda/bin/ncu"):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


def ncu_command(ncu, cmd, kernel_regex, launch_count=None):
    sections = [x for s in NCU_SECTIONS for x in ("--section", s)]
    count = ["--launch-count", str(launch_count)] if launch_count else []
    return [ncu, "--clock-control", "none", *sections, "--metrics", ",".join(NCU_METRICS), "--page", "raw", "--csv",
            "--kernel-name-base", "demangled", "--kernel-name", f"regex:{kernel_regex}", *count, *cmd]


def run_ncu(ncu, cmd, kernel_regex, launch_count=None):
    full = ncu_command(ncu, cmd, kernel_regex, launch_count)
    proc = subprocess.run(full, capture_output=True, text=True)
    kernels = parse_ncu_raw(proc.stdout)
    if proc.returncode != 0 or not kernels:
        raise StageError(f"ncu failed for {' '.join(cmd)} (exit {proc.returncode}):\n{proc.stdout[-2000:]}\n"
                         f"{proc.stderr[-2000:]}")
    return kernels


# The command the pages print for a reader to repeat one row (the binary's path relative to the repository).
def profile_command(stage, variant, size):
    """Exactly what cmd_profile runs for one row (less --csv --page raw), broken over lines for a page."""
    sections = " ".join(f"--section {s}" for s in NCU_SECTIONS)
    head = f"ncu --clock-control none {sections} \\\n    --metrics {','.join(NCU_METRICS)} \\\n    "
    if stage == GEMM:
        return (head + "--kernel-name-base demangled --kernel-name regex:gemm \\\n    "
                f"build/bin/{GEMM} --size {size} --pad both --reps 1 --warmup 0")
    return (head + f"--kernel-name regex:reduce_kernel --launch-count 1 \\\n    build/bin/{stage} --check-only --input int "
            f"-n {size}" + (f" --regime {variant}" if stage != REDUCE[0] else ""))


GEMM_KERNELS = [("tiled", lambda k: "gemm_kernel<" in k and ", 0>" in k), ("tiled padded", lambda k: "gemm_kernel<" in k and ", 1>" in k),
                ("naive", lambda k: "gemm_naive_kernel" in k),
                ("cuBLAS", lambda k: "gemm_kernel<" not in k and "gemm_naive_kernel" not in k)]


def ncu_check(a, ncu, stage):
    """The test profile_metrics: one stage's first launch through the very sections and metrics of cmd_profile;
    every kept column must be a number and the stall reasons present."""
    probe = subprocess.run([binary(a.build, stage), "--check-only", "-n", "1"], capture_output=True, text=True)
    if probe.returncode == 77:
        print(probe.stderr.strip())  # "...: no usable GPU: ..." marks the test skipped
        return 0
    kernel = run_ncu(ncu, [binary(a.build, stage), "--check-only", "--input", "int", "-n", a.profile_size,
                           *regime_args(stage, ["tree"])], "reduce_kernel", launch_count=1)[0]
    row = ncu_row(stage, "tree", a.profile_size, kernel)
    missing = [m for m in NCU_COLUMNS if row[m] == ""] + ([] if row["stall_1"] else ["stall reasons"])
    if missing:
        say(f"ladder: profile row of {stage} lacks {', '.join(missing)}")
        return 1
    print(f"profile row of {stage}: {len(NCU_COLUMNS)} columns, top stall {row['stall_1']} {row['stall_1_per_issue']}")
    return 0


def cmd_profile(a):
    ncu = find_ncu()
    if not ncu:
        say("ladder: ncu (Nsight Compute) not found: install Nsight Compute or put its directory on PATH")
        return 2
    if a.ncu_check:
        return ncu_check(a, ncu, a.ncu_check)
    # Reduce: one --check-only run on the int input per stage and regime; the first launch is the one that reads
    # the input (later launches add partial sums). GEMM: one timed run with one repetition, every kernel of it.
    rows = []
    for regime in REGIMES:
        for stage in REDUCE:
            if stage == REDUCE[0] and regime == "stream":
                continue
            say(f"      ncu: {stage} ({regime} regime, n = {a.profile_size})")
            cmd = [binary(a.build, stage), "--check-only", "--input", "int", "-n", a.profile_size,
                   *regime_args(stage, [regime])]
            kernel = run_ncu(ncu, cmd, "reduce_kernel", launch_count=1)[0]
            rows.append(ncu_row(stage, regime, a.profile_size, kernel))
    for stage, patch in experiments():  # the experiments' builds, as ./ladder try left them
        exe = a.build / "try" / "bin" / patch_target(stage, patch)
        if not exe.exists():
            say(f"      ncu: {patch.stem} of {stage} not built (./ladder try {stage[:2]} {patch.relative_to(ROOT)}): skipped")
            continue
        for regime in (["tree"] if stage == REDUCE[0] else list(REGIMES)):
            say(f"      ncu: {stage} with {patch.name} ({regime} regime)")
            cmd = [str(exe), "--check-only", "--input", "int", "-n", a.profile_size, *regime_args(stage, [regime])]
            kernel = run_ncu(ncu, cmd, "reduce_kernel", launch_count=1)[0]
            rows.append(ncu_row(stage, f"{regime}, {patch.stem}", a.profile_size, kernel))
    say(f"      ncu: {GEMM} (tiled, padded, naive and cuBLAS, {a.profile_gemm}^3)")
    cmd = [binary(a.build, GEMM), "--size", a.profile_gemm, "--pad", "both", "--reps", "1", "--warmup", "0"]
    kernels = run_ncu(ncu, cmd, "gemm")
    for variant, match in GEMM_KERNELS:
        found = [k for k in kernels if match(k.get("Kernel Name", ""))]
        if not found:
            raise StageError(f"ncu: no {variant} kernel among {sorted({k.get('Kernel Name') for k in kernels})}")
        rows.append(ncu_row(GEMM, variant, a.profile_gemm, found[-1]))  # the last: after any check runs
    out = []
    for r in rows:
        out.append([f"{r['stage']} ({r['variant']})", fmt_num(r["gpu__time_duration.sum"], ".0f"),
                    fmt_num(r["gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"], ".1f"),
                    fmt_num(r["sm__warps_active.avg.pct_of_peak_sustained_active"], ".1f"),
                    fmt_num(r["launch__registers_per_thread"], ".0f"), fmt_num(r["smsp__inst_executed.sum"], ".3g"),
                    fmt_num(r["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"], ".0f"),
                    fmt_num(r["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"], ".0f"),
                    f"{r['stall_1']} {fmt_num(r['stall_1_per_issue'], '.1f')}"])
    print(f"\nNsight Compute, first kernel of each reduce run (n = {a.profile_size}); GEMM {a.profile_gemm}^3\n")
    print(table(["run", "ns", "DRAM %", "occupancy %", "regs", "warp instr", "conflicts ld", "conflicts st",
                 "top stall (warps per issue)"], out))
    if a.save:
        version = subprocess.run([ncu, "--version"], capture_output=True, text=True).stdout.strip()
        save(a.save, "ncu", rows, {"ncu": version, "sections": NCU_SECTIONS, "metrics": NCU_METRICS})
        save_sass(a)
    racecheck(a)
    return 0


SASS_LINE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")


def kernel_sass(exe, wanted, headers=False):
    """The instructions of every kernel of exe whose "Function :" line passes wanted (cuobjdump -sass, without
    the encodings); with headers, each kernel's "Function : <mangled name>" line before its code."""
    cuobjdump = shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump"
    proc = subprocess.run([cuobjdump, "-sass", exe], capture_output=True, text=True)
    lines, inside = [], False
    for line in proc.stdout.splitlines():
        if "Function :" in line:
            inside = wanted(line)
            if inside and headers:
                lines.append(line.strip())
            continue
        m = SASS_LINE.match(line)
        if inside and m:
            lines.append(f"/*{m.group(1)}*/ {m.group(2)}")
    return lines


def save_sass(a):
    """The machine code the pages quote: each reduce stage's kernel, and every instantiation of the tiled GEMM."""
    files = [(stage, kernel_sass(binary(a.build, stage), lambda l: "reduce_kernel" in l)) for stage in REDUCE]
    files.append((GEMM, kernel_sass(binary(a.build, GEMM), lambda l: "gemm_kernel" in l and "naive" not in l,
                                    headers=True)))
    for name, lines in files:
        if lines:
            (pathlib.Path(a.save) / f"sass_{name}.txt").write_text("\n".join(lines) + "\n")


def racecheck(a):
    """What compute-sanitizer --tool racecheck says of 04_warp_unroll and of the pre-Volta volatile last warp."""
    sanitizer = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
    runs = [("04_warp_unroll (__syncwarp between steps)",
             [binary(a.build, "04_warp_unroll"), "--check-only", "-n", "4097", "--regime", "tree"]),
            ("volatile last warp, no __syncwarp (tests/racy_warp_unroll.cu)", [str(a.build / "tests" / "bin" / "racy_warp_unroll")])]
    report = []
    for title, cmd in runs:
        say(f"      racecheck: {title}")
        proc = subprocess.run([sanitizer, "--tool", "racecheck", "--print-limit", "3", *cmd], capture_output=True,
                              text=True)
        lines = [l for l in proc.stdout.splitlines() if l.startswith("=========")]
        report.append(f"$ compute-sanitizer --tool racecheck {' '.join(pathlib.Path(c).name if i == 0 else c for i, c in enumerate(cmd))}")
        report.extend(lines[:12] + (["========= ..."] if len(lines) > 14 else []) + lines[-2:] if len(lines) > 14 else lines)
        report.append("")
    text = "\n".join(report)
    print("\n" + text)
    if a.save:
        (pathlib.Path(a.save) / "racecheck.txt").write_text(text)


# ---- diff: the code a stage adds, as its page shows it -------------------------------------------------

def stage_file(stage):
    return ROOT / stage / ("gemm.cu" if (ROOT / stage / "gemm.cu").exists() else "reduce.cu")


def header_length(lines):
    """Lines of the header comment: everything before the first #include."""
    return next(i for i, l in enumerate(lines) if l.startswith("#include"))


HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def stage_diff(before, after, context=2):
    """The unified diff of two stage files below their header comments, with the files' own line numbers.

    The header comment is left out (it describes the stage, it is not the technique); `diff -u` of the two
    files shows it too."""
    a_lines, b_lines = stage_file(before).read_text().splitlines(), stage_file(after).read_text().splitlines()
    a0, b0 = header_length(a_lines), header_length(b_lines)
    out = []
    for line in difflib.unified_diff(a_lines[a0:], b_lines[b0:], f"{before}/{stage_file(before).name}",
                                     f"{after}/{stage_file(after).name}", n=context, lineterm=""):
        m = HUNK.match(line)
        if m:
            line = f"@@ -{int(m.group(1)) + a0}{m.group(2) or ''} +{int(m.group(3)) + b0}{m.group(4) or ''} @@"
        out.append(line)
    return "\n".join(out)


def resolve_stage(name):
    """'06' or '06_float4' -> '06_float4'."""
    found = [s for s in STAGES if s == name or s.split("_")[0] == name.zfill(2)]
    if len(found) != 1:
        raise StageError(f"no stage '{name}': the stages are {', '.join(STAGES)}")
    return found[0]


def cmd_diff(a):
    if len(a.args) != 2:
        raise UsageProblem("diff takes two stages, e.g. ./ladder diff 04 05")
    before, after = resolve_stage(a.args[0]), resolve_stage(a.args[1])
    print(stage_diff(before, after))
    return 0


# ---- try: a variant of a stage beside the original ---------------------------------------------------

def constant_variant(text, name, value):
    """The stage source with `constexpr <type> NAME = ...;` set to value; StageError if there is no such line."""
    pattern = re.compile(r"^(constexpr\s+[\w:]+\s+" + re.escape(name) + r"\s*=\s*)([^;]+)(;.*)$", re.M)
    found = pattern.findall(text)
    if len(found) != 1:
        raise StageError(f"the stage file has {len(found)} lines 'constexpr <type> {name} = ...;', not one")
    return pattern.sub(lambda m: m.group(1) + value + m.group(3), text), found[0][1].strip()


HUNK_HEAD = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def apply_patch(text, patch, where):
    """Applies a unified diff (one file, as `diff -u` writes it) to text. Each hunk must hold exactly the lines its
    @@ header counts, and every context and removed line must match the file where the hunk says; otherwise
    StageError names the first thing that does not."""
    lines = text.splitlines(keepends=True)
    body = patch.splitlines(keepends=True)
    out, pos, hunks, i = [], 0, 0, 0
    while i < len(body):
        m = HUNK_HEAD.match(body[i])
        if not m:
            i += 1
            continue
        hunks += 1
        old_count = int(m.group(2)) if m.group(2) is not None else 1
        new_count = int(m.group(4)) if m.group(4) is not None else 1
        start = int(m.group(1)) - 1 if old_count else int(m.group(1))
        if start < pos:
            raise StageError(f"{where}: hunk {hunks} overlaps the one before it")
        out.extend(lines[pos:start])
        pos = start
        i += 1
        old_seen = new_seen = 0
        while old_seen < old_count or new_seen < new_count:
            if i >= len(body) or body[i].startswith("@@"):
                raise StageError(f"{where}: hunk {hunks} holds fewer lines than its header counts "
                                 f"({old_seen} of {old_count} old, {new_seen} of {new_count} new)")
            line = body[i]
            tag, content = (line[:1], line[1:]) if line.strip("\r\n") else (" ", "\n")  # an emptied context line
            if tag in (" ", "-"):
                have = lines[pos] if pos < len(lines) else ""
                if have.rstrip("\r\n") != content.rstrip("\r\n"):
                    raise StageError(f"{where}: hunk {hunks} expects line {pos + 1} to be {content.rstrip()!r}, "
                                     f"but the stage file has {have.rstrip()!r}: the patch no longer applies")
                if tag == " ":
                    out.append(lines[pos])
                    new_seen += 1
                pos += 1
                old_seen += 1
            elif tag == "+":
                out.append(content if content.endswith("\n") else content + "\n")
                new_seen += 1
            elif not line.startswith("\\"):
                raise StageError(f"{where}: hunk {hunks}: a line that is not context, + or -: {line.rstrip()!r}")
            i += 1
            if i < len(body) and body[i].startswith("\\") and tag == "+" and out:
                out[-1] = out[-1].rstrip("\n")  # "\ No newline at end of file" after an added line
                i += 1
    if hunks == 0:
        raise StageError(f"{where}: no hunk (@@ ... @@) in the patch")
    out.extend(lines[pos:])
    return "".join(out)


def parse_try(spec):
    """'NAME=v1,v2' or '--option=v1,v2' -> (name, [values]); 'path/to/name.patch' -> ('name.patch', [path])."""
    if spec.endswith(".patch"):
        path = pathlib.Path(spec)
        path = path if path.is_absolute() else ROOT / path
        if not path.is_file():
            raise UsageProblem(f"'{spec}': no such patch (experiments live in docs/experiments/<stage>/)")
        return path.name, [str(path)]
    if "=" not in spec:
        raise UsageProblem(f"'{spec}' is not NAME=v1,v2,... (a constant of the stage file) or --option=v1,v2,...")
    name, values = spec.split("=", 1)
    values = [v.strip() for v in values.split(",") if v.strip()]
    if not name or not values:
        raise UsageProblem(f"'{spec}' names no values")
    return name, values


def build_copies(a, stage, copies):
    """Writes each (target, source text) copy of a stage file under <build>/try/<target>/, lists it in
    <build>/try/variants.cmake (which the top CMakeLists.txt includes; earlier copies whose files still exist stay
    listed) and builds the targets; returns their executables."""
    src = stage_file(stage)
    listing = a.build / "try" / "variants.cmake"
    entries = [l for l in (listing.read_text().splitlines() if listing.exists() else [])
               if l.startswith("ladder_add_variant(") and (ROOT / l.rstrip(")").split()[-1]).exists()]
    for target, text in copies:
        path = a.build / "try" / target / src.name
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        entry = f"ladder_add_variant({target} {path.as_posix()})"
        if entry not in entries:
            entries.append(entry)
    listing.write_text("\n".join(["# Generated by ./ladder try: copies of stage files, changed.", *entries]) + "\n")
    targets = [target for target, _ in copies]
    subprocess.run(["cmake", "-S", str(ROOT), "-B", str(a.build)], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", str(a.build), "--target", *targets], check=True, stdout=sys.stderr)
    return [a.build / "try" / "bin" / t for t in targets]


def build_variants(a, stage, name, values):
    """Builds a copy of the stage for each value of the constant name; returns their paths and the file's value."""
    text = stage_file(stage).read_text()
    original = None
    copies = []
    for v in values:
        if not re.fullmatch(r"[\w.+-]+", v):
            raise UsageProblem(f"{name}={v}: a value is a number or a name")
        variant, original = constant_variant(text, name, v)
        copies.append((f"try_{stage[:2]}_{name}_{re.sub(r'[^A-Za-z0-9]', '_', v)}", variant))
    say(f"ladder: building {len(copies)} variant(s) of {stage} with {name} = {', '.join(values)} "
        f"(the file says {original})")
    return build_copies(a, stage, copies), original


def patch_target(stage, patch):
    return f"try_{stage[:2]}_{re.sub(r'[^A-Za-z0-9]', '_', pathlib.Path(patch).stem)}"


def shown(path):
    """A path as a page or message shows it: relative to the repository when it is inside it."""
    path = pathlib.Path(path)
    return str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


def build_patch_variant(a, stage, patch_path):
    """Applies an experiment's patch to a copy of the stage file under <build>/try/ and builds it."""
    variant = apply_patch(stage_file(stage).read_text(), pathlib.Path(patch_path).read_text(), patch_path)
    say(f"ladder: building {stage} with {shown(patch_path)}")
    return build_copies(a, stage, [(patch_target(stage, patch_path), variant)])[0]


def try_base_args(a, stage):
    """The arguments every run of ./ladder try passes to the stage (and to its variants)."""
    if stage == GEMM:
        return ["--size", a.gemm_size, "--reps", str(a.gemm_reps), "--seed", str(a.seed), "--device", str(a.device),
                "--flush", a.flush]
    return ["-n", a.size, *regime_args(stage), *common_args(a)]


def cmd_try(a):
    if len(a.args) != 2:
        raise UsageProblem("try takes a stage and one NAME=v1,v2,..., --option=v1,v2,... or path/to/experiment.patch, "
                           "e.g. ./ladder try 06 kLoadsInFlight=1,2,4,8")
    stage = resolve_stage(a.args[0])
    name, values = parse_try(a.args[1])
    if name.endswith(".patch"):
        return try_patch(a, stage, values[0])
    is_gemm = stage == GEMM
    base = try_base_args(a, stage)
    runs = [("as in the file", binary(a.build, stage), [])]
    if name.startswith("--"):
        runs += [(f"{name} {v}", binary(a.build, stage), [name, v]) for v in values]
    else:
        paths, original = build_variants(a, stage, name, values)
        runs[0] = (f"{name} = {original} (the file)", runs[0][1], [])
        runs += [(f"{name} = {v}", str(p), []) for v, p in zip(values, paths)]
    rows = []
    for label, exe, extra in runs:
        say(f"      {stage}: {label}")
        r, _ = run_binary(a.build, stage, [*base, *extra], exe=exe)
        for row in r:
            row["variant"] = label
        rows.extend(r)
    print_try(stage, name, rows, is_gemm)
    if a.save:
        save(a.save, f"try_{stage}_{name.lstrip('-')}", rows, {**meta_from(rows[0]), "commit": git_commit()})
    return 0 if all(r["check"] == "PASS" for r in rows) else 1


def try_patch(a, stage, patch_path):
    """The stage as in the file beside the stage with an experiment's patch applied, in both regimes."""
    exe = build_patch_variant(a, stage, patch_path)
    name = pathlib.Path(patch_path).stem
    is_gemm = stage == GEMM
    base = try_base_args(a, stage)
    rows = []
    for label, path in [("as in the file", binary(a.build, stage)), (f"{name} (the patch)", str(exe))]:
        say(f"      {stage}: {label}")
        r, _ = run_binary(a.build, stage, base, exe=path)
        for row in r:
            row["variant"] = label
        rows.extend(r)
    print_try(stage, name, rows, is_gemm)
    if a.save:
        save(a.save, f"try_{stage}_{name}", rows, {**meta_from(rows[0]), "commit": git_commit(),
                                                    "patch": shown(patch_path)})
    return 0 if all(r["check"] == "PASS" for r in rows) else 1


def experiments():
    """Every experiment kept as a patch: docs/experiments/<stage>/<name>.patch -> [(stage, path)]."""
    base = ROOT / "docs" / "experiments"
    return [(p.parent.name, p) for p in sorted(base.glob("*/*.patch"))] if base.exists() else []


def try_lines(rows, is_gemm):
    """One line per variant (and regime): (headers, body). Shared by ./ladder try and the docs."""
    if is_gemm:
        base = {r["pad"]: float(r["ms_median"]) for r in rows if r["variant"] == rows[0]["variant"]}
        body = [[r["variant"], f"tiled {r['tile']}" + (" padded" if r["pad"] == "true" else ""), r["check"],
                 f"{float(r['ms_median']):.3f}", fmt_num(r["gflops"], ".0f"), fmt_num(r["pct_cublas"], ".1f"),
                 f"{base[r['pad']] / float(r['ms_median']):.2f}"] for r in rows]
        return ["variant", "kernel", "check", "ms", "GFLOP/s", "% cuBLAS", "x file"], body
    base = {r["regime"]: float(r["ms_median"]) for r in rows if r["variant"] == rows[0]["variant"]}
    body = [[r["variant"], r["regime"], r["grid"], r["check"], f"{float(r['ms_median']):.4f}", fmt_num(r["gbps"], ".0f"),
             fmt_num(r["pct_peak"], ".1f"), f"{base[r['regime']] / float(r['ms_median']):.2f}", fmt_num(r["x_cub"], ".2f")]
            for r in rows]
    return ["variant", "regime", "grid", "check", "ms", "GB/s", "% peak", "x file", "x CUB"], body


def print_try(stage, name, rows, is_gemm):
    headers, body = try_lines(rows, is_gemm)
    first = rows[0]
    print(f"\n{stage} with {name} changed, on {first['device']}; median of {first['reps']} reps, L2 flush: "
          f"{first['l2_flush']}\n")
    print(table(headers, body))
    print("\n  x file: the unchanged stage's time / the variant's, in the same regime (above 1: the variant is faster)")


class UsageProblem(Exception):
    pass


SKIP_REASON = re.compile(r"^(?:SKIPPED: (.*)|.*?: (no usable GPU)\b.*)$", re.M)


def cmd_skipped(a):
    """After ./ladder test: the tests CTest skipped (its summary, saved in <build>/ctest.out), grouped by the reason
    their output gives (LastTest.log); printed on stderr."""
    build = pathlib.Path(a.build)
    summary, log = build / "ctest.out", build / "Testing" / "Temporary" / "LastTest.log"
    if not summary.exists() or not log.exists():
        return 0
    skipped = re.findall(r"^\s*\d+ - (\S+) \(Skipped\)", summary.read_text(errors="replace"), re.M)
    outputs = {}
    for block in re.split(r"\n(?=\d+/\d+ Testing: )", log.read_text(errors="replace")):
        head = re.match(r"\d+/\d+ Testing: (\S+)", block)
        if head:
            outputs[head.group(1)] = block.split("Output:", 1)[-1]
    reasons = {}
    for test in skipped:
        m = SKIP_REASON.search(outputs.get(test, ""))
        reason = (m.group(1) or "no usable GPU (no driver, no device, or compute capability below 7.5)") if m \
            else "see its output in " + str(log)
        reasons.setdefault(reason, []).append(test)
    if reasons:
        say(f"ladder: {len(skipped)} tests skipped:")
        for reason, tests in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
            say(f"  {len(tests):3d} because {reason}: {', '.join(tests[:3])}{', ...' if len(tests) > 3 else ''}")
    return 0


def whole(lo, hi):
    """An argparse type: a whole number from lo to hi, refused in the stages' own words otherwise."""
    def parse(text):
        if not text.isdigit():
            raise argparse.ArgumentTypeError(f"'{text}' is not a whole number: give one from {lo} to {hi}")
        if not lo <= int(text) <= hi:
            raise argparse.ArgumentTypeError(f"{text} is out of range: give a whole number from {lo} to {hi}")
        return int(text)
    return parse


class OneLineParser(argparse.ArgumentParser):
    """argparse, with its errors in the project's one-line form instead of a usage block."""

    def error(self, message):
        command = next((x for x in sys.argv[1:2] if not x.startswith("-")), "")
        say(f"ladder: error: {message} (see ./ladder {command + ' ' if command else ''}--help)")
        sys.exit(2)


def check_args(a):
    """What ./ladder checks before it builds anything: the options parsed already; the stage names and specs."""
    if a.command == "try":
        if len(a.args) != 2:
            raise UsageProblem("try takes a stage and one NAME=v1,v2,..., --option=v1,v2,... or path/to/experiment.patch, "
                               "e.g. ./ladder try 06 kLoadsInFlight=1,2,4,8")
        resolve_stage(a.args[0])
        parse_try(a.args[1])
    if a.command == "diff":
        if len(a.args) != 2:
            raise UsageProblem("diff takes two stages, e.g. ./ladder diff 04 05")
        resolve_stage(a.args[0]), resolve_stage(a.args[1])
    if a.ncu_check:
        resolve_stage(a.ncu_check)
    return 0


def main():
    p = OneLineParser(prog="./ladder", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["run", "sweep", "probe", "measure", "profile", "try", "diff", "mutants",
                                        "skipped"])
    p.add_argument("--build", type=pathlib.Path, default=ROOT / "build", help="build directory (default: build)")
    p.add_argument("-n", "--size", default="2^28", help="floats to sum (default 2^28)")
    p.add_argument("--regime", choices=["stream", "tree"], default="stream", help="probe: the regime")
    p.add_argument("--reps", type=whole(1, 100000), default=50)
    p.add_argument("--warmup", type=whole(0, 10000), default=5)
    p.add_argument("--seed", type=whole(0, 2 ** 64 - 1), default=1)
    p.add_argument("--input", choices=["float", "int"], default="float")
    p.add_argument("--flush", choices=["clean", "write", "none"], default="clean",
                   help="L2 flush before each repetition (see docs/method.md)")
    p.add_argument("--device", type=whole(0, 1023), default=0)
    p.add_argument("--gemm-size", default="4096")
    p.add_argument("--gemm-reps", type=whole(1, 100000), default=20)
    p.add_argument("--no-gemm", action="store_true", help="run: skip the GEMM rung")
    p.add_argument("--sweep", default="2^10..2^30", help="sweep: sizes (default 2^10..2^30)")
    p.add_argument("--profile-size", default="2^24")
    p.add_argument("--profile-gemm", default="2048")
    p.add_argument("--ncu-check", metavar="STAGE", help="profile: check that one stage's profile row is complete "
                   "(the test profile_metrics), save nothing")
    p.add_argument("--save", help="directory for the result files (default: <build>/results; measure: docs/results)")
    p.add_argument("--save-format", choices=["csv", "json"], default="csv", help="format of the result files")
    p.add_argument("--check-args", action="store_true", help=argparse.SUPPRESS)  # ./ladder: validate, before building
    argv = sys.argv[1:]
    positional = []
    if argv and argv[0] in ("try", "diff"):  # their arguments may look like options (--grid=64,128)
        rest, i = argv[:1], 1
        runner = p._option_string_actions  # the runner's own options pass through; the rest are positional
        while i < len(argv):
            key = argv[i].split("=", 1)[0]
            if key in runner and (runner[key].nargs == 0 or "=" in argv[i]):
                rest.append(argv[i])
                i += 1
            elif key in runner and i + 1 < len(argv):
                rest += argv[i:i + 2]
                i += 2
            elif len(positional) < 2:
                positional.append(argv[i])
                i += 1
            else:
                rest.append(argv[i])
                i += 1
        argv = rest
    a = p.parse_args(argv)
    a.args = positional
    global SAVE_FORMAT
    SAVE_FORMAT = a.save_format
    if a.command != "measure" and not a.save:
        a.save = str(a.build / "results")
    if a.command == "measure" and a.save_format != "csv":
        p.error("measure writes CSV: the docs are built from it")
    commands = {"run": cmd_run, "sweep": cmd_sweep, "probe": cmd_probe, "measure": cmd_measure, "profile": cmd_profile,
                "try": cmd_try, "diff": cmd_diff, "mutants": cmd_mutants, "skipped": cmd_skipped}
    try:
        if a.check_args:
            return check_args(a)
        return commands[a.command](a)
    except NoGpu as e:
        say(str(e))
        return 77
    except StageError as e:
        say(f"ladder: error: {e}")
        return 2
    except UsageProblem as e:
        say(f"ladder: {e}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
