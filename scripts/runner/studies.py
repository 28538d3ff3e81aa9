"""The measurement studies the docs are built from: measure (everything, into docs/results/), profile (Nsight
Compute counters, SASS, racecheck), mutants (every planted bug), sweep (GB/s against n) and probe (GB/s against the
block size)."""
import contextlib
import csv
import datetime
import io
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

from .reader import build_patch_variant, cmd_try, cpu_rows, experiments, gemm_rows, ladder_rows, patch_target, print_cpu, print_ladder
from .results import all_pass, common_args, fmt_num, git_commit, meta_from, run_binary, save, say, table
from . import values
from .stages import (GEMM, UsageProblem, REDUCE, REGIMES, ROOT, NoGpu, StageError, binary, combine_stage, constants, has_stream,
                     regime_args, stage_file)


# ---- sweep and probe ---------------------------------------------------------------------------------

# The earlier rungs are swept up to here: their GB/s has long reached its plateau, and every size above costs
# seconds of input making; the rungs with several loads in flight (a kLoadsInFlight constant in their file: the ones
# that reach the bandwidth limit) and CUB run the whole --sweep.
EARLY_SWEEP_MAX = 2 ** 30


def sweep_rows(a):
    rows = []
    stages = [s for s in REDUCE if has_stream(s)]
    for i, stage in enumerate(stages, 1):
        sizes = values.expand(a.sweep)
        if constants(stage).get("kLoadsInFlight") is None:  # the stages without float4 loads in flight stop early
            sizes = [n for n in sizes if n <= EARLY_SWEEP_MAX] or sizes[:1]
        combine = ["--combine", "all"] if stage == combine_stage() else []
        say(f"[{i}/{len(stages)}] {stage}: {len(sizes)} sizes from {sizes[0]} to {sizes[-1]}")
        r, _ = run_binary(a.build, stage, ["-n", ",".join(map(str, sizes)), *combine, *common_args(a)])
        rows.extend(r)
    return rows


def sweep_label(r):
    return r["stage"] if r["combine"] == "relaunch" else f"{r['stage']} ({r['combine']})"


def print_sweep(rows):
    sizes = sorted({int(r["n"]) for r in rows})
    labels = list(dict.fromkeys(sweep_label(r) for r in rows))
    by = {(sweep_label(r), int(r["n"])): r for r in rows}
    ref = next((l for l in labels if l.startswith(combine_stage())), labels[-1])  # the default combine
    out = []
    for n in sizes:
        last = by.get((ref, n)) or by[(labels[-1], n)]
        out.append([str(n), *[fmt_num(by[(s, n)]["gbps"], ".0f") if (s, n) in by else "-" for s in labels],
                    fmt_num(last["cub_gbps"], ".0f"), fmt_num(last["read_gbps"], ".0f"),
                    fmt_num(last["x_cub"], ".2f")])
    print(f"\nGB/s against n (stream regime; CUB and the read-only kernel from the {ref} run, x CUB its "
          f"time against CUB's)\n")
    print(table(["n", *labels, "CUB", "read-only", "x CUB"], out))


def cmd_sweep(a):
    rows = sweep_rows(a)
    print_sweep(rows)
    if a.save:
        save(a.save, "sweep", rows, {**meta_from(rows[0]), "commit": git_commit()})
    return 0 if all_pass(rows) else 1


def probe_rows(a, regime):
    rows = []
    stages = [s for s in REDUCE if regime == "tree" or has_stream(s)]  # 01 has no stream regime
    for i, stage in enumerate(stages, 1):
        say(f"[{i}/{len(stages)}] {stage}: blocks 64..1024")
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
        if m.expect == "sass":  # its machine code, read on the CPU (tests/check_sass.py): the mutated copy is checked
            exe = a.build / "tests" / "mutants" / m.name / stage_file(m.stage).name
            cmd = [sys.executable, str(ROOT / "tests" / "check_sass.py"), "--tools", str(a.build / "tools"),
                   "--expect-violation", str(exe)]
        else:
            exe = a.build / "tests" / "bin" / f"mutant_{m.name}"
            cmd = [str(exe), *shlex.split(m.args)]
        if not exe.exists():
            raise StageError(f"{exe} does not exist: build the target 'mutants' first")
        if m.expect == "racecheck":  # as its test runs it: the harness's shared-memory fill is not traced
            cmd = [sanitizer, "--tool", "racecheck", "--error-exitcode", "99", "--print-limit", "1", *cmd,
                   "--no-shared-poison"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        text = proc.stdout + proc.stderr
        if proc.returncode == 77:  # no GPU, or (sass) no disassembler
            raise (StageError if m.expect == "sass" else NoGpu)(text.strip())
        if m.expect == "sass":
            caught = proc.returncode == 0
            line = re.sub(r"^\S*/", "", next((l for l in text.splitlines() if ".cu:" in l), ""))
        elif m.expect == "racecheck":
            caught = proc.returncode == 99
            line = next((l for l in text.splitlines() if "RACECHECK SUMMARY" in l), "")
        else:
            caught = proc.returncode == 1 and "FAIL" in text
            line = next((l.strip() for l in text.splitlines() if l.strip().startswith("FAIL ") or ": FAIL: " in l), "")
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
ERROR_STUDY = 1430  # configurations per reduce stage: over 10,000 in all


def try_experiments():
    return [("06_float4", "kLoadsInFlight=1,2,4,8"), ("02_grid_stride", "--grid=64,128,256,512,1024,2048,4096,16384")] + \
        [(stage, str(path.relative_to(ROOT))) for stage, path in experiments()]


def measure_ladder(a, out):
    """The ladder, both regimes, then the GEMM rung (what ./ladder run does after the build); returns its meta."""
    say("== the ladder, both regimes (what ./ladder run does after the build: the ladder, then the GEMM rung)")
    t0 = time.time()
    rows = ladder_rows(a)
    ok = all_pass(gemm_rows(a))
    cpu = cpu_rows(a)
    run_seconds = round(time.time() - t0, 1)
    print_ladder(rows)
    print_cpu(cpu, rows)
    save(out, "cpu", cpu)  # the baseline: its verdicts are shown, not the measurement's
    meta = {**meta_from(rows[0]), "commit": git_commit(), "date": datetime.date.today().isoformat(),
            "command": "./ladder measure", "ladder_run_s": run_seconds}
    save(out, "ladder", rows, meta)
    return meta, ok and all_pass(rows)


OWN_CASES = ("race", "correct")  # tests/check_try_file.py's copies of 05 that docs/own.md shows ./ladder try on


def measure_own(a, out):
    """./ladder try 05 mine.cu on two of tests/check_try_file.py's copies of 05 (a planted race, and the file as it
    is), each report saved as own_<case>.txt with this machine's paths left out, for docs/own.md."""
    sys.path.insert(0, str(ROOT / "tests"))
    from check_try_file import CASES, ORIGINAL, STAGE
    ok = True
    for name in OWN_CASES:
        edit = next(c[1] for c in CASES if c[0] == name)
        with tempfile.TemporaryDirectory() as tmp:
            mine = pathlib.Path(tmp).resolve() / "mine.cu"
            mine.write_text(edit(ORIGINAL))
            say(f"== ./ladder try {STAGE[:2]} mine.cu, mine.cu: tests/check_try_file.py's case {name}")
            a.stage, a.change, a.save = STAGE, str(mine), None
            report = io.StringIO()
            with contextlib.redirect_stdout(report):
                status = cmd_try(a)
            text = report.getvalue().replace(str(mine.parent) + "/", "").replace(str(a.build), "build")
            text = text.replace(str(ROOT), ".")
        print(text)
        (out / f"own_{name}.txt").write_text(f"$ ./ladder try {STAGE[:2]} mine.cu\n{text.strip()}\n(exit {status})\n")
        expected = (0,) if name == "correct" else next(c[2] for c in CASES if c[0] == name)  # on a GPU: all of it
        if status not in expected:  # the page would show a report that no longer says what it must
            say(f"      ./ladder try on the case {name} exited {status}, not {' or '.join(map(str, expected))}")
            ok = False
    return ok


def measure_tries_and_mutants(a, out):
    """The experiments (their verdicts are results the pages show, not the measurement's) and the planted bugs,
    every one of which must be caught."""
    for stage, spec in try_experiments():
        say(f"== ./ladder try {stage[:2]} {spec}")
        a.stage, a.change = stage, spec
        a.save = str(out)
        if cmd_try(a) != 0:
            say(f"      {stage} with {spec}: a check failed (the page shows which)")
    say("== planted bugs: every mutant must be caught")
    rows = mutant_rows(a)
    save(out, "mutants", rows)
    return all(r["verdict"] == "caught" for r in rows)


def measure_combines(a, out):
    """The combine stage: every combine at the targets' sizes, in the tree regime, after each flush, determinism."""
    multiblock = combine_stage()
    say(f"== {multiblock}: every combine strategy at the sizes of the targets")
    rows, _ = run_binary(a.build, multiblock, ["-n", "2^20,2^24,20000000,2^28", "--combine", "all", *common_args(a)])
    save(out, "multiblock", rows)
    ok = all_pass(rows)
    say(f"== {multiblock} in the tree regime: every combine at small blocks (one atomic or ticket per block)")
    rows, _ = run_binary(a.build, multiblock, ["-n", a.size, "--regime", "tree", "--block", "64,128,256,1024",
                                                "--combine", "all", *common_args(a)])
    save(out, "combine_tree", rows)
    ok &= all_pass(rows)
    say(f"== the L2 flush: {multiblock} and CUB timed after each kind of flush")
    frows = []
    for flush in ("clean", "write", "none"):
        r, _ = run_binary(a.build, multiblock, ["-n", "2^22,2^24,2^28", *common_args(a)[:-2], "--flush", flush])
        frows.extend(r)
    save(out, "flush", frows)
    ok &= all_pass(frows)
    say(f"== {multiblock}: determinism, 100 runs of each strategy at three sizes")
    drows = []
    for n in ("2^20", "2^24", "2^28"):
        rows, rc = run_binary(a.build, multiblock, ["-n", n, "--combine", "all", "--determinism", "100",
                                                    "--seed", str(a.seed), "--input", a.input])
        drows.extend(rows)
        ok &= rc == 0
    save(out, "determinism", drows)
    return ok


HANDOFF_SIZES = "2^10..2^24"  # where one launch's fixed costs show, up to where the bandwidth sets the time


def measure_handoff(a, out):
    """07's handoff experiment (the atomic combine without its memset) against the stage's atomic and last-block and
    the read-only kernel timed in the same processes, from 2^10 to 2^24, stream regime: handoff_sweep.csv."""
    stage = combine_stage()
    patch = ROOT / "docs" / "experiments" / stage / "handoff.patch"
    if not patch.exists():
        return True
    say(f"== {stage}: the handoff experiment against atomic, last-block and the read-only kernel, n = {HANDOFF_SIZES}")
    rows = []
    for label, exe, combine in [("the stage", binary(a.build, stage), "atomic,last-block"),
                                ("handoff (the patch)", build_patch_variant(a, stage, patch), "atomic")]:
        r, _ = run_binary(a.build, stage, ["-n", HANDOFF_SIZES, "--combine", combine, *common_args(a)], exe=str(exe))
        for row in r:
            row["variant"] = label
        rows.extend(r)
    save(out, "handoff_sweep", rows)
    return all_pass(rows)


def measure_accuracy(a, out):
    """Every stage's float result from 2^10 to 2^30, the CPU's float sums, and the error study of the bound."""
    say("== accuracy: every stage's float result from 2^10 to 2^30 (--check-only), and the CPU's float sums")
    arows = []
    for stage in REDUCE:
        rows, _ = run_binary(a.build, stage, ["--check-only", "-n", ACCURACY_SIZES, "--seed", str(a.seed),
                                              "--device", str(a.device)])
        arows.extend(rows)
    save(out, "accuracy", arows)
    ok = all_pass(arows)
    proc = subprocess.run([str(a.build / "tests" / "bin" / "cpu_sums"), "--seed", str(a.seed), "--max-log2", "30"],
                          capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise StageError(f"cpu_sums failed (exit {proc.returncode}): {proc.stderr.strip()}")
    ok &= proc.returncode == 0
    (out / "accuracy_cpu.csv").write_text(proc.stdout)
    say(f"== the float bound: {ERROR_STUDY} random configurations of every reduce stage (--error-study)")
    erows = []
    for stage in REDUCE:
        rows, rc = run_binary(a.build, stage, ["--error-study", str(ERROR_STUDY), "--seed", str(a.seed),
                                               "--device", str(a.device)])
        erows.extend(rows)
        ok &= rc == 0  # the study's one verdict: every configuration within its bound (a skipped one is shown)
    save(out, "error_bound", erows)
    return ok


def measure_sizes(a, out):
    """The size sweep, the block-size probes and the GEMM sizes."""
    say("== size sweep")
    rows = sweep_rows(a)
    print_sweep(rows)
    save(out, "sweep", rows)
    ok = all_pass(rows)
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
    return ok and all_pass(grows)


def measure_profile(a, out):
    if not find_ncu():
        say("== ncu not found: Nsight Compute counters not measured")
        return True
    say("== Nsight Compute counters and racecheck")
    a.save = str(out)
    cmd_profile(a)
    return True


# The parts of ./ladder measure, in the order it runs them; --part runs some of them alone (each writes its own
# files; meta.json records the commit and date of each part, so a page can say when each was measured).
PARTS = {"ladder": None, "tries": measure_tries_and_mutants, "own": measure_own, "combines": measure_combines,
         "handoff": measure_handoff,
         "accuracy": measure_accuracy, "sizes": measure_sizes, "profile": measure_profile}


def cmd_measure(a):
    out = pathlib.Path(a.save or ROOT / "docs" / "results")
    parts = list(PARTS) if a.part is None else a.part.split(",")
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        raise UsageProblem(f"--part {unknown[0]}: the parts are {', '.join(PARTS)} (or a list of them)")
    started = time.time()
    meta_path = out / "meta.json"
    meta = json.loads(meta_path.read_text()) if set(parts) != set(PARTS) and meta_path.exists() else {}
    if meta and "parts" not in meta:  # results from before the parts were recorded: every part from that run
        meta["parts"] = {p: {"commit": meta["commit"], "date": meta["date"]} for p in PARTS}
    ok = True
    for part in parts:
        t0 = time.time()
        if part == "ladder":
            ladder_meta, part_ok = measure_ladder(a, out)
            meta.update(ladder_meta)
        else:
            part_ok = PARTS[part](a, out)
        ok &= part_ok
        meta.setdefault("parts", {})[part] = {"commit": git_commit(), "date": datetime.date.today().isoformat(),
                                               "elapsed_s": round(time.time() - t0, 1)}
    meta["elapsed_s"] = round(sum(p.get("elapsed_s", 0) for p in meta["parts"].values()), 1)  # of the parts run
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    say(f"== done in {round(time.time() - started, 1)} s; results in {out}")
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


def ncu_command(ncu, cmd, kernel_regex, launch_count=None, report=None):
    """The profile of cmd: printed as the raw page, or with report saved there (-o) for the pages to be read from."""
    sections = [x for s in NCU_SECTIONS for x in ("--section", s)]
    count = ["--launch-count", str(launch_count)] if launch_count else []
    output = ["-o", str(report)] if report else ["--page", "raw", "--csv"]
    return [ncu, "--clock-control", "none", *sections, "--metrics", ",".join(NCU_METRICS), *output,
            "--kernel-name-base", "demangled", "--kernel-name", f"regex:{kernel_regex}", *count, *cmd]


def run_ncu(ncu, cmd, kernel_regex, launch_count=None, source=None):
    """The raw page of every profiled kernel: [{column: value}]. With source (a list, and launch_count 1), the same
    profile's shared-memory instructions from the source page are appended to it (source_rows())."""
    with tempfile.TemporaryDirectory() as tmp:
        report = pathlib.Path(tmp) / "profile.ncu-rep"
        proc = subprocess.run(ncu_command(ncu, cmd, kernel_regex, launch_count, report), capture_output=True, text=True)
        raw = subprocess.run([ncu, "-i", str(report), "--page", "raw", "--csv", "--kernel-name-base", "demangled"],
                             capture_output=True, text=True) if report.exists() else proc
        kernels = parse_ncu_raw(raw.stdout)
        if proc.returncode != 0 or not kernels:
            raise StageError(f"ncu failed for {' '.join(cmd)} (exit {proc.returncode}):\n{proc.stdout[-2000:]}\n"
                             f"{proc.stderr[-2000:]}")
        if source is not None:
            page = subprocess.run([ncu, "-i", str(report), "--page", "source", "--csv", "--print-source", "cuda,sass"],
                                  capture_output=True, text=True, check=True)
            source.extend(source_rows(page.stdout))
    return kernels


def source_rows(text):
    """ncu --page source --print-source cuda,sass --csv of one profiled kernel: each source line followed by its
    SASS instructions -> one row per shared-memory instruction: its file, line (number and text), SASS and
    per-instruction counters."""
    rows, path, header, line, code = [], "", None, "", ""
    for r in csv.reader(io.StringIO(text)):
        if not r:
            continue
        if r[0] == "File Path":
            path = r[1]
        elif r[0] == "Line No":
            header = r
        elif header and len(r) == len(header):
            row = dict(zip(header[2:], r[2:]))
            if r[0].strip():
                line, code = r[0], r[1].strip()
            elif row.get("Address Space") == "Shared":
                rows.append({"file": pathlib.Path(path).name, "line": line, "source": code, "sass": row["Source"].strip(),
                             "op": row["Access Operation"], "instructions": row["Instructions Executed"],
                             "wavefronts": row["L1 Wavefronts Shared"], "ideal": row["L1 Wavefronts Shared Ideal"]})
    return rows


# The command the pages print for a reader to repeat one row (the binary's path relative to the repository).
def profile_command(stage, variant, size):
    """Exactly what cmd_profile runs for one row (less --csv --page raw), broken over lines for a page."""
    sections = " ".join(f"--section {s}" for s in NCU_SECTIONS)
    head = f"ncu --clock-control none {sections} \\\n    --metrics {','.join(NCU_METRICS)} \\\n    "
    if stage == GEMM:
        return (head + "--kernel-name-base demangled --kernel-name regex:gemm \\\n    "
                f"build/bin/{GEMM} --size {size} --pad both --reps 1 --warmup 0")
    return (head + f"--kernel-name regex:reduce_kernel --launch-count 1 \\\n    build/bin/{stage} --check-only --input exact "
            f"-n {size}" + (f" --regime {variant}" if has_stream(stage) else ""))


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
    kernel = run_ncu(ncu, [binary(a.build, stage), "--check-only", "--input", "exact", "-n", a.profile_size,
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
    rows, source = [], []
    for regime in REGIMES:
        for stage in REDUCE:
            if not has_stream(stage) and regime == "stream":
                continue
            say(f"      ncu: {stage} ({regime} regime, n = {a.profile_size})")
            cmd = [binary(a.build, stage), "--check-only", "--input", "exact", "-n", a.profile_size,
                   *regime_args(stage, [regime])]
            found = []
            kernel = run_ncu(ncu, cmd, "reduce_kernel", launch_count=1, source=found)[0]
            rows.append(ncu_row(stage, regime, a.profile_size, kernel))
            source += [{"stage": stage, "variant": regime, **r} for r in found]
    for stage, patch in experiments():  # the experiments' builds, as ./ladder try left them
        exe = a.build / "try" / "bin" / patch_target(stage, patch)
        if not exe.exists():
            say(f"      ncu: {patch.stem} of {stage} not built (./ladder try {stage[:2]} {patch.relative_to(ROOT)}): skipped")
            continue
        for regime in (list(REGIMES) if has_stream(stage) else ["tree"]):
            say(f"      ncu: {stage} with {patch.name} ({regime} regime)")
            cmd = [str(exe), "--check-only", "--input", "exact", "-n", a.profile_size, *regime_args(stage, [regime])]
            kernel = run_ncu(ncu, cmd, "reduce_kernel", launch_count=1)[0]
            rows.append(ncu_row(stage, f"{regime}, {patch.stem}", a.profile_size, kernel))
    say(f"      ncu: {GEMM} (tiled, padded, naive and cuBLAS, {a.profile_gemm}^3)")
    cmd = [binary(a.build, GEMM), "--size", a.profile_gemm, "--pad", "both", "--reps", "1", "--warmup", "0"]
    kernels = run_ncu(ncu, cmd, "gemm")
    for variant, pad in (("tiled", 0), ("tiled padded", 1)):  # the source page shows one kernel's one launch
        found = []
        run_ncu(ncu, cmd, f"gemm_kernel<[^,]*16, [^>]*{pad}>", launch_count=1, source=found)  # <(int)16, (int)0>
        source += [{"stage": GEMM, "variant": variant, **r} for r in found]
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
        # per shared-memory SASS instruction: what tests/check_thread_models.py holds the host runs to
        save(a.save, "ncu_source", source, {"ncu": version, "sections": NCU_SECTIONS, "commit": git_commit(),
                                            "date": datetime.date.today().isoformat(), "command": "./ladder profile"})
        save_sass(a)
    racecheck(a)
    return 0


SASS_LINE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")


def kernel_sass(exe, wanted, headers=False, cuobjdump=None, env=None):
    """The instructions of every kernel of exe (a program or a cubin) whose "Function :" line passes wanted
    (cuobjdump -sass, without the encodings); with headers, each kernel's "Function : <mangled name>" line before
    its code."""
    cuobjdump = cuobjdump or shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump"
    proc = subprocess.run([cuobjdump, "-sass", str(exe)], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise StageError(f"cuobjdump -sass {exe} failed: {proc.stderr.strip()}")
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


def saved_kernels(stage):
    """Which kernels of a stage's program docs/results/sass_<stage>.txt keeps, and whether with their names: a reduce
    stage's reduce_kernel(s); every instantiation of the tiled GEMM, each under its "Function :" line."""
    if stage == GEMM:
        return (lambda l: "gemm_kernel" in l and "naive" not in l), True
    return (lambda l: "reduce_kernel" in l), False


def save_sass(a):
    """The machine code the pages quote: each reduce stage's kernel, and every instantiation of the tiled GEMM."""
    files = [(stage, kernel_sass(binary(a.build, stage), *saved_kernels(stage))) for stage in [*REDUCE, GEMM]]
    for name, lines in files:
        if lines:
            (pathlib.Path(a.save) / f"sass_{name}.txt").write_text("\n".join(lines) + "\n")


def sanitizer_report(a, tool, runs, name):
    """Each run under compute-sanitizer --tool TOOL, as the pages quote it: a "$ command" line, then the tool's
    own lines (shortened where long), ending with its summary; written to <save>/<name>."""
    sanitizer = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
    report = []
    for title, cmd in runs:
        say(f"      {tool}: {title}")
        proc = subprocess.run([sanitizer, "--tool", tool, "--print-limit", "3", *cmd], capture_output=True, text=True)
        lines = [l for l in proc.stdout.splitlines() if l.startswith("=========")]
        shown = " ".join(pathlib.Path(c).name if i == 0 else c for i, c in enumerate(cmd))
        report.append(f"$ compute-sanitizer --tool {tool} {shown}")
        report.extend(lines[:12] + ["========= ..."] + lines[-2:] if len(lines) > 14 else lines)
        report.append("")
    text = "\n".join(report)
    print("\n" + text)
    if a.save:
        (pathlib.Path(a.save) / name).write_text(text)


def racecheck(a):
    """What racecheck says of 04_warp_unroll and of the pre-Volta volatile last warp; what memcheck says of 06's
    head, body and tail at an unaligned pointer."""
    sanitizer_report(a, "racecheck", [
        ("04_warp_unroll (__syncwarp between steps)",
         [binary(a.build, "04_warp_unroll"), "--check-only", "-n", "4097", "--regime", "tree"]),
        ("volatile last warp, no __syncwarp (tests/racy_warp_unroll.cu)",
         [str(a.build / "tests" / "bin" / "racy_warp_unroll")])], "racecheck.txt")
    sanitizer_report(a, "memcheck", [
        ("06_float4, n = 1000003 at offset 1 (head 3, tail 0)",
         [binary(a.build, "06_float4"), "--check-only", "-n", "1000003", "--offset", "1"]),
        ("06_float4, n = 4099 at offset 2, both regimes",
         [binary(a.build, "06_float4"), "--check-only", "-n", "4099", "--offset", "2", "--regime", "stream,tree"])],
        "memcheck.txt")
