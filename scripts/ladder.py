#!/usr/bin/env python3
"""The ladder runner (called by ./ladder): runs the stage binaries and compares them.

  run      every stage in order on the same input, then one comparison table (and the GEMM rung)
  sweep    GB/s against n for stages 02..07 and CUB
  probe    GB/s against the block size (64..1024) for every reduce stage
  measure  everything the docs are built from, written to docs/results/ (or --save)
  profile  Nsight Compute counters (bank conflicts, shared-memory traffic, DRAM bytes) per stage

Only the Python standard library is used here.
"""
import argparse
import csv
import datetime
import io
import json
import os
import pathlib
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


def run_binary(build, stage, args, fmt="json"):
    """Runs one stage binary with --format fmt; returns its rows (list of dicts) and exit status."""
    cmd = [binary(build, stage), *args, "--format", fmt]
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
    say(f"      {stage} {' '.join(args)}  ({time.time() - started:.1f} s)")
    return rows, proc.returncode


def common_args(a):
    args = ["--reps", str(a.reps), "--warmup", str(a.warmup), "--seed", str(a.seed), "--input", a.input,
            "--device", str(a.device)]
    return args + ["--flush", a.flush]


def reduce_regime_args(stage, regime):
    # 01 has no grid-stride loop: it always runs the tree regime.
    return ["--regime", "tree" if stage == "01_naive" else regime]


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

def ladder_rows(a, regime):
    rows = []
    for i, stage in enumerate(REDUCE, 1):
        say(f"[{i}/{len(STAGES)}] {stage}")
        r, _ = run_binary(a.build, stage, ["-n", a.size, *reduce_regime_args(stage, regime), *common_args(a)])
        rows.extend(r)
    return rows


def gemm_rows(a):
    say(f"[{len(STAGES)}/{len(STAGES)}] {GEMM}")
    r, _ = run_binary(a.build, GEMM, ["--size", a.gemm_size, "--pad", "both", "--reps", str(a.gemm_reps),
                                      "--seed", str(a.seed), "--input", a.input, "--device", str(a.device),
                                      "--flush", a.flush])
    return r


def print_ladder(rows, regime):
    first = rows[0]
    n = int(first["n"])
    print(f"\ncuda-ladder on {first['device']} ({first['sms']} SMs, {float(first['peak_gbps']):.0f} GB/s theoretical), "
          f"driver {first['driver']}, runtime {first['runtime']}")
    print(f"float sum of n = {n} floats ({n * 4 / 1e9:.2f} GB, input '{first['input']}', seed {first['seed']}), "
          f"{regime} regime{' (01 always runs the tree regime)' if regime == 'stream' else ''}; median of "
          f"{first['reps']} reps, L2 flush before each: {first['l2_flush']}\n")
    base = float(rows[0]["ms_median"])
    out, prev = [], None
    for r in rows:
        ms = float(r["ms_median"])
        out.append([r["stage"], r["check"], f"{ms:.4f}", fmt_num(r["gbps"], ".1f"), fmt_num(r["pct_peak"], ".1f"),
                    "-" if prev is None else f"{prev / ms:.2f}", f"{base / ms:.2f}", fmt_num(r["x_cub"], ".2f")])
        prev = ms
    cub_ms = statistics.median(float(r["cub_ms_median"]) for r in rows)
    out.append(["CUB (median of the runs)", "-", f"{cub_ms:.4f}", f"{n * 4 / (cub_ms * 1e6):.1f}",
                f"{100 * n * 4 / (cub_ms * 1e6) / float(first['peak_gbps']):.1f}", "-", f"{base / cub_ms:.2f}", "1.00"])
    print(table(["stage", "check", "ms", "GB/s", "% peak", "x prev", "x 01", "x CUB"], out))
    print("\n  x prev / x 01: speed relative to the previous stage / to 01 (time ratio); x CUB: CUB's time in the same "
          "run / the stage's (above 1 is faster than CUB)")


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


def all_pass(reduce_rows, gemm=()):
    ok = all(r["check"] == "PASS" and r.get("cub_check", "PASS") in ("PASS", "-") for r in reduce_rows)
    return ok and all(r["check"] == "PASS" for r in gemm)


def cmd_run(a):
    started = time.time()
    rows = ladder_rows(a, a.regime)
    grows = [] if a.no_gemm or GEMM is None else gemm_rows(a)
    print_ladder(rows, a.regime)
    if grows:
        print_gemm(grows)
    print(f"\n  {len(rows) + (1 if grows else 0)} stages in {time.time() - started:.1f} s")
    if a.save:
        save(a.save, f"ladder_{a.regime}", rows, {**meta_from(rows[0]), "commit": git_commit()})
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
        r, _ = run_binary(a.build, stage, ["-n", a.size, "--block", "64,128,256,512,1024",
                                           *reduce_regime_args(stage, regime), *common_args(a)])
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

def cmd_measure(a):
    out = pathlib.Path(a.save or ROOT / "docs" / "results")
    started = time.time()
    ok = True
    meta = None
    for regime in ("stream", "tree"):
        say(f"== the ladder, {regime} regime")
        t0 = time.time()
        rows = ladder_rows(a, regime)
        if regime == "stream":  # what ./ladder run does after the build: the ladder, then the GEMM rung
            ok &= all_pass(gemm_rows(a))
            run_seconds = round(time.time() - t0, 1)
        print_ladder(rows, regime)
        meta = {**meta_from(rows[0]), "commit": git_commit(),
                "date": datetime.date.today().isoformat(), "command": "./ladder measure",
                "ladder_run_s": run_seconds}
        save(out, f"ladder_{regime}", rows, meta)
        ok &= all_pass(rows)
    say("== 07_multiblock: every combine strategy at the sizes of the targets")
    rows, _ = run_binary(a.build, "07_multiblock", ["-n", "2^20,2^24,20000000,2^28", "--combine", "all", *common_args(a)])
    save(out, "multiblock", rows)
    ok &= all_pass(rows)
    say("== the L2 flush: 07_multiblock and CUB timed after each kind of flush")
    frows = []
    for flush in ("clean", "write", "none"):
        r, _ = run_binary(a.build, "07_multiblock", ["-n", "2^24,2^28", *common_args(a)[:-2], "--flush", flush])
        frows.extend(r)
    save(out, "flush", frows)
    ok &= all_pass(frows)
    say("== 07_multiblock: determinism, 20 runs of each strategy")
    rows, rc = run_binary(a.build, "07_multiblock", ["-n", "2^24", "--combine", "all", "--determinism", "20",
                                                     "--seed", str(a.seed), "--input", a.input])
    save(out, "determinism", rows)
    ok &= rc == 0
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

METRICS = [
    "gpu__time_duration.sum",
    "dram__bytes_read.sum",
    "smsp__inst_executed.sum",
    "smsp__inst_executed_op_shared_ld.sum",
    "smsp__inst_executed_op_shared_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
]


def parse_ncu_csv(text):
    """Rows of ncu --csv (one per kernel launch and metric) -> {(process, launch id): {metric: value}}."""
    lines = [l for l in text.splitlines() if l.startswith('"')]
    if not lines:
        return {}
    reader = csv.DictReader(io.StringIO("\n".join(lines)))
    kernels = {}
    for row in reader:
        key = (row.get("Process Name", ""), int(row.get("Process ID", 0)), int(row["ID"]))
        entry = kernels.setdefault(key, {"kernel": row.get("Kernel Name", ""), "grid": row.get("Grid Size", ""),
                                         "block": row.get("Block Size", "")})
        value = row["Metric Value"].replace(",", "")
        try:
            entry[row["Metric Name"]] = float(value)
        except ValueError:
            entry[row["Metric Name"]] = value
    return kernels


def find_ncu():
    for candidate in (shutil.which("ncu"), "/usr/local/cuda/bin/ncu"):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


def cmd_profile(a):
    ncu = find_ncu()
    if not ncu:
        say("ncu (Nsight Compute) not found")
        return 2
    # One check-only run per case; ncu profiles every kernel launch, the first launch of each run is the one
    # that reads the input (the later ones add up partial sums).
    cases = []
    for regime in ("stream", "tree"):
        for stage in REDUCE:
            if stage == "01_naive" and regime == "stream":
                continue
            cases.append((stage, regime, [binary(a.build, stage), "--check-only", "-n", a.profile_size,
                                          *reduce_regime_args(stage, regime)]))
    for pad in ("off", "on"):
        cases.append((GEMM, f"pad {pad}", [binary(a.build, GEMM), "--check-only", "--size", a.profile_gemm,
                                           "--pad", pad]))
    rows = []
    for stage, variant, cmd in cases:
        say(f"      ncu: {stage} ({variant})")
        proc = subprocess.run([ncu, "--clock-control", "none", "--csv", "--metrics", ",".join(METRICS),
                               "--kernel-name", "regex:reduce_kernel|gemm_kernel", *cmd],
                              capture_output=True, text=True)
        kernels = parse_ncu_csv(proc.stdout)
        if proc.returncode != 0 or not kernels:
            raise StageError(f"ncu failed for {' '.join(cmd)} (exit {proc.returncode}):\n{proc.stdout[-2000:]}\n"
                             f"{proc.stderr[-2000:]}")
        first = kernels[min(kernels)]
        rows.append({"stage": stage, "variant": variant, "n_or_size": a.profile_gemm if stage == GEMM else a.profile_size,
                     "kernel": first["kernel"], "grid": first["grid"], "block": first["block"],
                     "launches": len(kernels), **{m: first.get(m, "") for m in METRICS}})
    out = []
    for r in rows:
        out.append([f"{r['stage']} ({r['variant']})", fmt_num(r["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"], ".0f"),
                    fmt_num(r["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"], ".0f"),
                    fmt_num(r["smsp__inst_executed_op_shared_ld.sum"], ".0f"),
                    fmt_num(r["dram__bytes_read.sum"], ".3g"), fmt_num(r["gpu__time_duration.sum"], ".0f")])
    print(f"\nNsight Compute, first kernel of each run (reduce: n = {a.profile_size}; GEMM: {a.profile_gemm}^3)\n")
    print(table(["run", "conflicts ld", "conflicts st", "shared ld instr", "DRAM bytes read", "ns"], out))
    if a.save:
        save(a.save, "ncu", rows, {"ncu": subprocess.run([ncu, "--version"], capture_output=True, text=True).stdout.strip()})
    racecheck(a)
    return 0


def racecheck(a):
    """What compute-sanitizer --tool racecheck says of 04_warp_unroll and of the pre-Volta volatile last warp."""
    sanitizer = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
    runs = [("04_warp_unroll (__syncwarp between steps)",
             [binary(a.build, "04_warp_unroll"), "--check-only", "-n", "4097", "--regime", "tree"]),
            ("volatile last warp, no __syncwarp (tests/racy_warp_unroll.cu)", [str(a.build / "bin" / "racy_warp_unroll")])]
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


def main():
    p = argparse.ArgumentParser(prog="ladder", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["run", "sweep", "probe", "measure", "profile"])
    p.add_argument("--build", type=pathlib.Path, default=ROOT / "build", help="build directory (default: build)")
    p.add_argument("-n", "--size", default="2^28", help="floats to sum (default 2^28)")
    p.add_argument("--regime", choices=["stream", "tree"], default="stream")
    p.add_argument("--reps", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--input", choices=["float", "int"], default="float")
    p.add_argument("--flush", choices=["clean", "write", "none"], default="clean",
                   help="L2 flush before each repetition (see docs/method.md)")
    p.add_argument("--device", type=int, default=0)
    p.add_argument("--gemm-size", default="4096")
    p.add_argument("--gemm-reps", type=int, default=20)
    p.add_argument("--no-gemm", action="store_true", help="run: skip the GEMM rung")
    p.add_argument("--sweep", default="2^10..2^30", help="sweep: sizes (default 2^10..2^30)")
    p.add_argument("--profile-size", default="2^24")
    p.add_argument("--profile-gemm", default="2048")
    p.add_argument("--save", help="directory for the result files (default: <build>/results; measure: docs/results)")
    p.add_argument("--save-format", choices=["csv", "json"], default="csv", help="format of the result files")
    a = p.parse_args()
    global SAVE_FORMAT
    SAVE_FORMAT = a.save_format
    if a.command != "measure" and not a.save:
        a.save = str(a.build / "results")
    if a.command == "measure" and a.save_format != "csv":
        p.error("measure writes CSV: the docs are built from it")
    commands = {"run": cmd_run, "sweep": cmd_sweep, "probe": cmd_probe, "measure": cmd_measure, "profile": cmd_profile}
    try:
        return commands[a.command](a)
    except NoGpu as e:
        say(str(e))
        return 77
    except StageError as e:
        say(f"error: {e}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
