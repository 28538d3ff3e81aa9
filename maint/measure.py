"""The maintainers' measurements on a GPU: everything the docs are built from, in parts (measure), the studies behind its
tables (the size sweep, the block-size probe, the planted bugs' runs), and the profile: Nsight Compute's counters, the
machine code the pages quote, and what compute-sanitizer says of the unrolled warp and of 06's unaligned loads."""
import concurrent.futures
import csv
import datetime
import io
import itertools
import json
import math
import os
import pathlib
import random
import re
import shutil
import statistics
import struct
import subprocess
import tempfile
import time

from maint import experiments, gemm_stage, has_stream
from scripts import sanitize
from scripts.run import cpu_rows, gemm_rows, ladder_rows, print_cpu, print_ladder, run_args, size_args
from scripts.stages import (ROOT, StageError, UsageProblem, all_pass, all_regimes, binary, combine_stage, constants,
                            describe, fmt_num, git_commit, ladder_stages, meta_from, reduce_stages, regime_args, role,
                            run_binary, save, say, table)
from scripts.tries import build_copies, cmd_try, own_copy, variant_target

from . import mutants
from .docsgen.base import common_constant, option
from .tests.check_try_file import corpus, expectations

ACCURACY_SIZES = ",".join(f"2^{k}" for k in range(10, 31, 2))
STUDY_SEEDS, STUDY_SIZES, STUDY_LOG2 = 8, 8, (10, 24)  # the error study: seeds, sizes per run from 2^10 below 2^24
EARLY_SWEEP_MAX = 2 ** 30  # the rungs without loads in flight plateau long before; CUB and the rest run the whole sweep
OWN_CASES = ("race", "correct")  # the copies of 05 (maint/tests/check_try_file.py) docs/own.md shows ./ladder try on
TRIES = [("06_float4", "kLoadsInFlight=1,2,4,8"), ("02_grid_stride", "--grid=64,128,256,512,1024,2048,4096,16384")]

def runs(out, name, calls, by_status=False):
    """Each (stage, arguments) run, its rows in <name>.csv; whether all passed (by_status: every run exited 0)."""
    done = [run_binary(stage, args) for stage, args in calls]
    rows, ok = [row for r, _ in done for row in r], all(status == 0 for _, status in done)
    save(out, name, rows)
    return ok if by_status else all_pass(rows)

def measure_ladder(a, out):
    say("== the ladder, both regimes, then the GEMM rung (what ./ladder run does after the build)")
    t0 = time.time()
    rows, ok = ladder_rows(a), all_pass(gemm_rows(a))
    cpu, seconds = cpu_rows(a), round(time.time() - t0, 1)
    print_ladder(rows)
    print_cpu(cpu, rows)
    save(out, "cpu", cpu)  # the baseline: its verdicts are shown, not the measurement's
    meta = {**meta_from(rows[0]), "date": datetime.date.today().isoformat(), "command": "./maint/do measure",
            "ladder_run_s": seconds}
    save(out, "ladder", rows, meta)
    return ok and all_pass(rows)

def measure_own(a, out):
    """./ladder try STAGE FILE on two planted copies of 05 (race, correct; as mine.cu, which docs/own.md shows) and on
    every file of the corpus (as <case>.cu), each report saved as own_<case>.txt (paths left out); whether each ended
    as check_try_file.py expects. The corpus runs three at once, its copies built beforehand in one build."""
    own = [(c, "mine") for c in expectations(True) if c[0] in OWN_CASES]
    files = [(c, c[0]) for c in corpus(True)]
    tmp = pathlib.Path(tempfile.mkdtemp()).resolve()
    for (name, stage, text, *_), file in own + files:
        (tmp / name).mkdir()
        (tmp / name / f"{file}.cu").write_text(text)
    for stage in dict.fromkeys(c[1] for c, _ in files):
        build_copies(a.build, stage, [own_copy(stage, tmp / c[0] / f"{c[0]}.cu") for c, _ in files if c[1] == stage])

    def one(case, file):
        name, stage, _, allowed, wanted = case
        done = subprocess.run([str(ROOT / "ladder"), "try", stage[:2], f"{file}.cu", "--build", str(a.build)],
                              cwd=tmp / name, env={**os.environ, "LADDER_CWD": str(tmp / name)}, capture_output=True,
                              text=True)
        report = done.stdout.replace(f"{tmp / name}/", "").replace(str(a.build), "build").replace(str(ROOT), ".")
        (out / f"own_{name}.txt").write_text(f"$ ./ladder try {stage[:2]} {file}.cu\n{report.strip()}\n"
                                             f"(exit {done.returncode})\n")
        missing = [w for w in wanted if w not in report]
        say(f"      {name} ({stage}): exit {done.returncode}" + (f", missing {missing}" if missing else ""))
        return done.returncode in allowed and not missing

    ok = all([one(*c) for c in own])
    with concurrent.futures.ThreadPoolExecutor(3) as pool:  # 3: the GPU's memory holds three runs past 2^32
        ok &= all(list(pool.map(lambda c: one(*c), files)))
    shutil.rmtree(tmp)
    return ok

def measure_tries(a, out):
    """The experiments: their verdicts are results the pages show, not the measurement's."""
    for stage, spec in TRIES + [(stage, str(path.relative_to(ROOT))) for stage, path in experiments()]:
        say(f"== ./ladder try {stage[:2]} {spec}")
        a.stage, a.change, a.save = stage, spec, str(out)
        if cmd_try(a) != 0:
            say(f"      {stage} with {spec}: a check failed (the page shows which)")
    return True

def measure_mutants(a, out):
    say("== planted bugs: every mutant must be caught")
    rows = mutants.rows(a.build)
    save(out, "mutants", rows)
    return all(r["verdict"] == "caught" for r in rows)

def measure_combines(a, out):
    s, timing = combine_stage(), run_args(a, ("reps", "warmup", "seed", "input", "device"))
    say(f"== {s}: every combine at the targets' sizes, in the tree regime, after each flush, and 100 runs each")
    ok = runs(out, "multiblock", [(s, ["-n", "2^20,2^24,20000000,2^28", "--combine", "all", *run_args(a)])])
    ok &= runs(out, "combine_tree", [(s, [*size_args(a), "--regime", "tree", "--block", "64,128,256,1024", "--combine",
                                          "all", *run_args(a)])])
    ok &= runs(out, "flush", [(s, ["-n", "2^22,2^24,2^28", *timing, "--flush", f]) for f in ("clean", "write", "none")])
    return ok & runs(out, "determinism", [(s, ["-n", n, "--combine", "all", "--warmup", "1", "--reps", "98",
                                               *run_args(a, ("seed", "input"))]) for n in ("2^20", "2^24", "2^28")],
                     by_status=True)  # 100 launches of the measured input each: the checked, a warm-up, 98 timed

def measure_accuracy(a, out):
    say("== accuracy: every stage's float result (--check-only), and the CPU's float sums")
    seed = run_args(a, ("seed", "device"))
    ok = runs(out, "accuracy", [(s, ["--check-only", "-n", ACCURACY_SIZES, *seed]) for s in reduce_stages()])
    proc = subprocess.run([str(a.build / "maint" / "bin" / "cpu_sums"), *run_args(a, ("seed",)), "--max-log2", "30"],
                          capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise StageError(f"cpu_sums failed (exit {proc.returncode}): {proc.stderr.strip()}")
    (out / "accuracy_cpu.csv").write_text(proc.stdout)
    return ok and proc.returncode == 0

def measure_study(a, out):
    say("== the error study: the float bound against the errors of random configurations of every reduce stage")
    study = [r for s in reduce_stages() for r in study_rows(a, s)]
    save(out, "error_bound", study)
    if leaning := [s for s in reduce_stages() if leans(study_sigmas(study, s))]:
        say(f"      {', '.join(leaning)}: the errors lean one way: their mean over sigma is beyond lambda / sqrt(E)")
    return not leaning and all(r["check"] != "FAIL" for r in study)

def leans(z):  # check_centred's test of E errors over their sigmas: their mean beyond lambda / sqrt(E)
    return bool(z) and abs(statistics.fmean(z)) > common_constant("kCentringLambda") / len(z) ** 0.5

def study_sigmas(rows, stage):
    """A stage's judged errors over sigma (lambda x error/bound, signed), a distinct result once (runs share inputs)."""
    lam = common_constant("kSumLambda")
    return list({(r["seed"], r["offset"], r["n"], r["abs_error"], float(r["error_sigmas"]) < 0): math.copysign(
        lam * float(r["error_bound_ratio"]), float(r["error_sigmas"]))
        for r in rows if r["stage"] == stage and r["error_sigmas"] not in (None, "")}.values())

def study_rows(a, stage):
    """The error study's rows of a stage: per seed and 16-byte alignment (offsets 0 to 3), a few sizes log-uniform
    in STUDY_LOG2 at every block, regime and combine, half the runs on a random --grid; then 2^26 and 2^28.
    Each runs once on the float input (--check-only); its error is also given over its sigma, signed."""
    lam = common_constant("kSumLambda")
    seed = describe(stage, tuple(run_args(a, ("seed",))))["values"]["seed"]
    rng, blocks = random.Random(f"{stage} {seed}"), ",".join(option(stage, "--block")["values"])
    calls = [["-n", "2^26,2^28", "--seed", str(seed)]]
    for s, offset in itertools.product(range(seed, seed + STUDY_SEEDS), range(4)):
        sizes = sorted({int(2 ** rng.uniform(*STUDY_LOG2)) for _ in range(STUDY_SIZES)})
        grid = ["--grid", str(rng.randint(1, 512))] if has_stream(stage) and rng.random() < 0.5 else []
        calls.append(["-n", ",".join(map(str, sizes)), "--block", blocks, "--offset", str(offset),
                      "--seed", str(s), *grid])
    rows = []
    for args in calls:
        for r in run_binary(stage, [*args, "--check-only", "--input", "float", "--combine", "all", *regime_args(stage),
                                    *run_args(a, ("device",))])[0]:
            ratio = r["error_bound_ratio"]  # null where not judged or not finite; the result printed as a float
            below = struct.unpack("f", struct.pack("f", r["result"]))[0] < r["reference"] if ratio else False
            grid = args[args.index("--grid") + 1] if "--grid" in args and r["regime"] == "stream" else 0
            rows.append({**{k: r[k] for k in ("stage", "seed", "n", "offset", "block", "regime")}, "grid_option": grid,
                         **{k: r[k] for k in ("grid", "threads", "combine", "abs_error", "bound")},
                         "error_bound_ratio": ratio, "error_sigmas": None if ratio is None else
                         float(f"{lam * ratio:.3g}") * (-1 if below else 1),
                         "check": r["float_check"] if r["check"] == "PASS" else "FAIL"})
    return rows

def measure_sizes(a, out):
    rows, stages = [], [s for s in reduce_stages() if has_stream(s)]  # the size sweep
    for i, stage in enumerate(stages, 1):
        sizes = describe(stage, ("-n", a.sweep))["values"]["sizes"]
        if constants(stage).get("kLoadsInFlight") is None:  # the stages without float4 loads in flight stop early
            sizes = [n for n in sizes if n <= EARLY_SWEEP_MAX] or sizes[:1]
        say(f"[{i}/{len(stages)}] {stage}: {len(sizes)} sizes from {sizes[0]} to {sizes[-1]}")
        rows += run_binary(stage, ["-n", ",".join(map(str, sizes)), *(["--combine", "all"] if stage == combine_stage()
                                                                       else []), *run_args(a)])[0]
    found = {"sweep": rows}
    for regime in ("stream", "tree"):  # the block-size probe
        stages = [s for s in reduce_stages() if regime == "tree" or has_stream(s)]
        say(f"== block-size probe, {regime} regime: {', '.join(stages)}")
        found[f"probe_{regime}"] = [r for s in stages for r in run_binary(s, [*size_args(a), "--block", ",".join(
            option(s, "--block")["values"]), *regime_args(s, [regime]), *run_args(a)])[0]]
    for name, rows in found.items():  # saved once every run is done
        save(out, name, rows)
    ok = all(all_pass(rows) for rows in found.values())
    say("== GEMM sizes")
    reps = ["--reps", a.gemm_reps] if a.gemm_reps else []
    return ok & runs(out, "gemm", [(gemm_stage(), ["--size", size, "--tile", tile, "--pad", "both", *reps,
                                                   *run_args(a, ("seed", "device"))])
                                   for size, tile in [("1024", "16"), ("2048", "16"), ("4096", "16"), ("8192", "16"),
                                                      ("4096", "32")]])

def measure_profile(a, out):
    if not find_ncu():
        say("== ncu not found: Nsight Compute counters not measured")
        return True
    a.save = str(out)
    return cmd_profile(a) == 0

# The parts, in the order they run; --part runs some alone (each writes its own files; meta.json records each part's
# commit and date, so a page can say when each was measured).
PARTS = {"ladder": measure_ladder, "tries": measure_tries, "mutants": measure_mutants, "own": measure_own,
         "combines": measure_combines, "accuracy": measure_accuracy, "study": measure_study, "sizes": measure_sizes,
         "profile": measure_profile}

def cmd_measure(a):
    out = pathlib.Path(a.save or ROOT / "docs" / "results")
    parts = list(PARTS) if a.part is None else a.part.split(",")
    if unknown := [p for p in parts if p not in PARTS]:
        raise UsageProblem(f"--part {unknown[0]}: the parts are {', '.join(PARTS)} (or a list of them)")
    out.mkdir(parents=True, exist_ok=True)  # a part that writes its files itself (own) finds the directory made
    meta_path, started, ok = out / "meta.json", time.time(), True
    listed = subprocess.run([binary(reduce_stages()[0]), "--list-devices"], capture_output=True, text=True).stdout
    gpu = m[1] if (m := re.search(rf"^{a.device or 0}: ([^,]+),", listed, re.M)) else ""  # the GPU the parts run on
    meta = json.loads(meta_path.read_text()) if set(parts) != set(PARTS) and meta_path.exists() else {}
    for part in parts:
        t0 = time.time()
        ok &= PARTS[part](a, out)
        if part == "ladder":  # the GPU, driver, toolkit and commit of the run head meta.json, as in ladder.meta.json
            meta.update(json.loads((out / "ladder.meta.json").read_text()))
        meta.setdefault("parts", {})[part] = {"commit": git_commit(), "date": datetime.date.today().isoformat(),
                                               "device": gpu, "elapsed_s": round(time.time() - t0, 1)}
        meta["elapsed_s"] = round(sum(p.get("elapsed_s", 0) for p in meta["parts"].values()), 1)
        meta_path.write_text(json.dumps(meta, indent=2) + "\n")  # after each part: a run stopped early keeps its parts
    say(f"== done in {round(time.time() - started, 1)} s; results in {out}")
    return 0 if ok else 1

# ---- profile: Nsight Compute's counters ------------------------------------------------------------------------------
# The sections every profile collects (they name their metrics per GPU, so nothing here breaks on another chip), and
# every counter ncu.csv keeps: its short name (what the pages ask for), its ncu metric (the pages name it, so a reader
# can ask ncu for the same one), what a table calls it, and whether it is asked for by name (the rest come with the
# sections).
NCU_SECTIONS = ["SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats", "InstructionStats", "SourceCounters"]
NCU_COUNTERS = [
    ("ns", "gpu__time_duration.sum", "duration (ns)", False),
    ("dram", "dram__bytes_read.sum", "DRAM bytes read", True),
    ("dram_pct", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "DRAM throughput, % of peak", False),
    ("mem_pct", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "memory throughput, % of peak",
     False),
    ("sm_pct", "sm__throughput.avg.pct_of_peak_sustained_elapsed", "SM throughput, % of peak", False),
    ("regs", "launch__registers_per_thread", "registers per thread", False),
    ("theoretical_occupancy", "sm__maximum_warps_per_active_cycle_pct", "theoretical occupancy, %", False),
    ("occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active", "achieved occupancy, %", False),
    ("instructions", "smsp__inst_executed.sum", "warp instructions", False),
    ("threads", "smsp__thread_inst_executed_per_inst_executed.ratio", "active threads per instruction", False),
    ("pred_on", "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio",
     "threads with predicate on per instruction", False),
    ("divergent", "smsp__sass_branch_targets_threads_divergent.sum", "divergent branch targets", False),
    ("shared_ld", "smsp__inst_executed_op_shared_ld.sum", "shared-load instructions", True),
    ("shared_st", "smsp__inst_executed_op_shared_st.sum", "shared-store instructions", True),
    ("wavefronts_ld", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "shared-load wavefronts", True),
    ("wavefronts_st", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "shared-store wavefronts", True),
    ("conflicts_ld", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "bank conflicts, loads", True),
    ("conflicts_st", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "bank conflicts, stores", True),
    ("fma_pct", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed", "FMA pipe active, % of peak", False),
    ("tensor_pct", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed", "tensor pipe active, % of peak",
     False),
    ("ffma", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "FFMA thread instructions", True),
]
NCU_METRICS = [metric for _, metric, _, asked in NCU_COUNTERS if asked]
NCU_COLUMNS = {metric: label for _, metric, label, _ in NCU_COUNTERS}
NCU_SHORT = {short: metric for short, metric, _, _ in NCU_COUNTERS}
STALL = re.compile(r"^smsp__average_warps_issue_stalled_(\w+)_per_issue_active\.ratio$")
# The units ncu.csv keeps, which the pages divide by (ncu scales a unit to its value unless --print-units base).
BASE_UNITS = {"gpu__time_duration.sum": ("ns", "nsecond"), "dram__bytes_read.sum": ("byte",)}
GEMM_KERNELS = [("tiled", lambda k: "gemm_kernel<" in k and ", 0>" in k),
                ("tiled padded", lambda k: "gemm_kernel<" in k and ", 1>" in k),
                ("naive", lambda k: "gemm_naive_kernel" in k),
                ("cuBLAS", lambda k: "gemm_kernel<" not in k and "gemm_naive_kernel" not in k)]

def parse_ncu_raw(text):
    """ncu --page raw --csv: a header row, a units row, one row per kernel -> [{column: value}]. A metric of BASE_UNITS
    in another unit is refused: a microsecond read as a nanosecond is a silent wrong number."""
    lines = [l for l in text.splitlines() if l.startswith('"')]
    if len(lines) < 3:
        return []
    header, units, *rows = csv.reader(io.StringIO("\n".join(lines)))
    units = dict(zip(header, units))
    if wrong := {m: units[m] for m, unit in BASE_UNITS.items() if m in units and units[m] not in unit}:
        raise StageError(f"ncu printed {wrong}, not in {BASE_UNITS} (the export needs --print-units base)")
    return [dict(zip(header, r)) for r in rows]

def ncu_number(value):
    try:
        return float(str(value).replace(",", ""))
    except ValueError:
        return ""

def ncu_row(stage, variant, size, kernel):
    """One profiled kernel -> the kept columns and the top three stall reasons (warps stalled per issued instruction;
    "selected" is issuing, not a stall)."""
    row = {"stage": stage, "variant": variant, "n_or_size": size, "kernel": kernel.get("Kernel Name", ""),
           "grid": kernel.get("Grid Size", ""), "block": kernel.get("Block Size", ""),
           **{m: ncu_number(kernel.get(m, "")) for m in NCU_COLUMNS}}
    stalls = sorted(((ncu_number(v), STALL.match(k)[1]) for k, v in kernel.items()
                     if STALL.match(k) and STALL.match(k)[1] != "selected" and ncu_number(v) != ""), reverse=True)
    for i, (value, name) in enumerate((stalls + [("", "")] * 3)[:3], 1):
        row[f"stall_{i}"], row[f"stall_{i}_per_issue"] = name, value
    return {**row, **{f"stall_{name}": value for value, name in sorted(stalls, key=lambda s: s[1])}}

def find_ncu():
    return next((c for c in (shutil.which("ncu"), "/usr/local/cuda/bin/ncu") if c and pathlib.Path(c).exists()), None)

def run_ncu(ncu, cmd, kernel_regex, launch_count=None, source=None):
    """The raw page of every profiled kernel; with source (a list, launch_count 1), that profile's shared-memory
    instructions from its source page are appended to it."""
    with tempfile.TemporaryDirectory() as tmp:
        report = pathlib.Path(tmp) / "profile.ncu-rep"
        proc = subprocess.run([ncu, "--clock-control", "none", *[x for s in NCU_SECTIONS for x in ("--section", s)],
                               "--metrics", ",".join(NCU_METRICS), "-o", str(report), "--kernel-name-base",
                               "demangled", "--kernel-name", f"regex:{kernel_regex}",
                               *(["--launch-count", str(launch_count)] if launch_count else []), *cmd],
                              capture_output=True, text=True)
        page = lambda *args: subprocess.run([ncu, "-i", str(report), *args], capture_output=True, text=True)  # noqa
        raw = page("--page", "raw", "--csv", "--print-units", "base", "--kernel-name-base", "demangled") \
            if report.exists() else proc
        if proc.returncode != 0 or not (kernels := parse_ncu_raw(raw.stdout)):
            raise StageError(f"ncu failed for {' '.join(cmd)} (exit {proc.returncode}):\n{proc.stdout[-2000:]}\n"
                             f"{proc.stderr[-2000:]}")
        if source is not None:
            source.extend(source_rows(page("--page", "source", "--csv", "--print-source", "cuda,sass").stdout))
    return kernels

def source_rows(text):
    """ncu's source page of one kernel (each source line, then its SASS instructions) -> one row per shared-memory
    instruction: its file, line (number and text), SASS and counters."""
    rows, path, header, line, code = [], "", None, "", ""
    for r in csv.reader(io.StringIO(text)):
        if r and r[0] == "File Path":
            path = r[1]
        elif r and r[0] == "Line No":
            header = r
        elif r and header and len(r) == len(header):
            row = dict(zip(header[2:], r[2:]))
            if r[0].strip():
                line, code = r[0], r[1].strip()
            elif row.get("Address Space") == "Shared":
                rows.append({"file": pathlib.Path(path).name, "line": line, "source": code, "sass": row["Source"].strip(),
                             "op": row["Access Operation"], "instructions": row["Instructions Executed"],
                             "wavefronts": row["L1 Wavefronts Shared"], "ideal": row["L1 Wavefronts Shared Ideal"]})
    return rows

def profile_command(stage, variant, size):
    """Exactly what cmd_profile runs for one row (less the report's options), over lines for a page."""
    head = (f"ncu --clock-control none {' '.join(f'--section {s}' for s in NCU_SECTIONS)} \\\n    --metrics "
            f"{','.join(NCU_METRICS)} \\\n    ")
    if role(stage) == "gemm":
        return (head + "--kernel-name-base demangled --kernel-name regex:gemm \\\n    "
                f"build/bin/{gemm_stage()} --size {size} --pad both --reps 1 --warmup 0")
    return (head + f"--kernel-name regex:reduce_kernel --launch-count 1 \\\n    build/bin/{stage} --check-only --input "
            f"exact -n {size}" + (f" --regime {variant}" if has_stream(stage) else ""))

def reduce_command(exe, stage, regime, size):
    return [exe, "--check-only", "--input", "exact", "-n", size, *regime_args(stage, [regime])]

def ncu_check(a, ncu, stage):
    """One stage's first launch through the very sections and metrics of the profile: every kept column a number,
    the stall reasons there."""
    if subprocess.run([binary(stage), "--list-devices"], capture_output=True).returncode == 77:
        print("SKIPPED: no usable GPU")
        return 77
    row = ncu_row(stage, "tree", a.profile_size, run_ncu(ncu, reduce_command(binary(stage), stage, "tree",
                                                                              a.profile_size), "reduce_kernel", 1)[0])
    if missing := [m for m in NCU_COLUMNS if row[m] == ""] + ([] if row["stall_1"] else ["stall reasons"]):
        say(f"maint: profile row of {stage} lacks {', '.join(missing)}")
        return 1
    print(f"profile row of {stage}: {len(NCU_COLUMNS)} columns, top stall {row['stall_1']} {row['stall_1_per_issue']}")
    return 0

def profile_reduce(a, ncu):
    """One --check-only run on the exact input per reduce stage and regime (its first launch reads the input), and the
    experiments' builds as ./ladder try left them: (rows, source rows)."""
    rows, source = [], []
    for regime in all_regimes():
        for stage in [s for s in reduce_stages() if regime in ("tree", *(["stream"] if has_stream(s) else []))]:
            say(f"      ncu: {stage} ({regime} regime, n = {a.profile_size})")
            found = []
            kernel = run_ncu(ncu, reduce_command(binary(stage), stage, regime, a.profile_size), "reduce_kernel", 1, found)
            rows.append(ncu_row(stage, regime, a.profile_size, kernel[0]))
            source += [{"stage": stage, "variant": regime, **r} for r in found]
    for stage, patch in [(s, p) for s, p in experiments() if s in reduce_stages()]:  # the GEMM's are only timed
        exe = a.build / "try" / "bin" / variant_target(stage, patch.stem)
        if not exe.exists():
            say(f"      ncu: {patch.stem} of {stage} not built (./ladder try {stage[:2]} {patch.relative_to(ROOT)})")
            continue
        for regime in (all_regimes() if has_stream(stage) else ["tree"]):
            say(f"      ncu: {stage} with {patch.name} ({regime} regime)")
            kernel = run_ncu(ncu, reduce_command(str(exe), stage, regime, a.profile_size), "reduce_kernel", 1)
            rows.append(ncu_row(stage, f"{regime}, {patch.stem}", a.profile_size, kernel[0]))
    return rows, source

def profile_gemm(a, ncu):
    """One timed run of the GEMM with one repetition, every kernel of it, and the tiled kernels' source pages."""
    stage = gemm_stage()
    say(f"      ncu: {stage} (tiled, padded, naive and cuBLAS, {a.profile_gemm}^3)")
    cmd = [binary(stage), "--size", a.profile_gemm, "--pad", "both", "--reps", "1", "--warmup", "0"]
    kernels, source = run_ncu(ncu, cmd, "gemm"), []
    for variant, pad in (("tiled", 0), ("tiled padded", 1)):  # the source page shows one kernel's one launch
        found = []
        run_ncu(ncu, cmd, f"gemm_kernel<[^,]*16, [^>]*{pad}>", 1, found)  # <(int)16, (int)0>
        source += [{"stage": stage, "variant": variant, **r} for r in found]
    rows = []
    for variant, match in GEMM_KERNELS:
        if not (found := [k for k in kernels if match(k.get("Kernel Name", ""))]):
            raise StageError(f"ncu: no {variant} kernel among {sorted({k.get('Kernel Name') for k in kernels})}")
        rows.append(ncu_row(stage, variant, a.profile_gemm, found[-1]))  # the last: after any check runs
    return rows, source

def cmd_profile(a):
    if not (ncu := find_ncu()):
        say("maint: ncu (Nsight Compute) not found: install Nsight Compute or put its directory on PATH")
        return 2
    if a.ncu_check:
        return ncu_check(a, ncu, a.ncu_check)
    rows, source = (r + g for r, g in zip(profile_reduce(a, ncu), profile_gemm(a, ncu)))
    print(f"\nNsight Compute, first kernel of each reduce run (n = {a.profile_size}); GEMM {a.profile_gemm}^3\n")
    print(table(["run", "ns", "DRAM %", "occupancy %", "regs", "warp instr", "conflicts ld", "conflicts st",
                 "top stall (warps per issue)"],
                [[f"{r['stage']} ({r['variant']})", *[fmt_num(r[NCU_SHORT[k]], spec) for k, spec in [
                    ("ns", ".0f"), ("dram_pct", ".1f"), ("occupancy", ".1f"), ("regs", ".0f"), ("instructions", ".3g"),
                    ("conflicts_ld", ".0f"), ("conflicts_st", ".0f")]],
                  f"{r['stall_1']} {fmt_num(r['stall_1_per_issue'], '.1f')}"] for r in rows]))
    if a.save:
        version = subprocess.run([ncu, "--version"], capture_output=True, text=True).stdout.strip()
        save(a.save, "ncu", rows, {"ncu": version, "sections": NCU_SECTIONS, "metrics": NCU_METRICS})
        # per shared-memory SASS instruction: what maint/tests/check_thread_models.py holds the host runs to
        save(a.save, "ncu_source", source, {"ncu": version, "sections": NCU_SECTIONS, "commit": git_commit(),
                                            "date": datetime.date.today().isoformat(), "command": "./maint/do profile"})
        for stage in ladder_stages():  # the machine code the pages quote
            if lines := kernel_sass(binary(stage), stage):
                (pathlib.Path(a.save) / f"sass_{stage}.txt").write_text("\n".join(lines) + "\n")
    racecheck(a)
    return 0

SASS_LINE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")

def kernel_sass(exe, stage, cuobjdump=None, env=None):
    """The instructions (cuobjdump -sass, without the encodings) of the kernels of exe (a program or a cubin) that
    sass_<stage>.txt keeps: reduce_kernel(s), or every tiled GEMM, each under its "Function : <mangled name>" line."""
    headers = role(stage) == "gemm"
    wanted = (lambda l: "gemm_kernel" in l and "naive" not in l) if headers else (lambda l: "reduce_kernel" in l)
    cuobjdump = cuobjdump or shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump"
    proc = subprocess.run([cuobjdump, "-sass", str(exe)], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise StageError(f"cuobjdump -sass {exe} failed: {proc.stderr.strip()}")
    lines, inside = [], False
    for line in proc.stdout.splitlines():
        if "Function :" in line:
            inside = wanted(line)
            lines += [line.strip()] if inside and headers else []
        elif inside and (m := SASS_LINE.match(line)):
            lines.append(f"/*{m[1]}*/ {m[2]}")
    return lines

def racecheck(a):
    """What racecheck says of 04's unrolled warp and of the pre-Volta volatile last warp; what memcheck says of 06's
    head, body and tail at an unaligned pointer: each run as the pages quote it, in racecheck.txt and memcheck.txt."""
    for tool, cases in [("racecheck", [[binary("04_warp_unroll"), "--check-only", "-n", "4097", "--regime", "tree"],
                                       [str(a.build / "maint" / "bin" / "racy_warp_unroll")]]),
                        ("memcheck", [[binary("06_float4"), "--check-only", "-n", "1000003", "--offset", "1"],
                                      [binary("06_float4"), "--check-only", "-n", "4099", "--offset", "2", "--regime",
                                       "stream,tree"]])]:
        report = []
        for cmd in cases:
            say(f"      {tool}: {' '.join(cmd[1:])}")
            proc = subprocess.run([sanitize.program(), "--tool", tool, "--print-limit", "3", *cmd], capture_output=True,
                                  text=True)
            lines = [l for l in proc.stdout.splitlines() if l.startswith("=========")]
            report += [f"$ compute-sanitizer --tool {tool} {' '.join([pathlib.Path(cmd[0]).name, *cmd[1:]])}",
                       *(lines[:12] + ["========= ..."] + lines[-2:] if len(lines) > 14 else lines), ""]
        print("\n" + (text := "\n".join(report)))
        if a.save:
            (pathlib.Path(a.save) / f"{tool}.txt").write_text(text)
