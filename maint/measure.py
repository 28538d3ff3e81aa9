"""The maintainers' measurements: everything the docs are built from, in parts (measure), and the studies behind its
charts: the size sweep, the block-size probe, the planted bugs' runs, and the profile (Nsight Compute's counters, the
machine code the pages quote, what compute-sanitizer says of the unrolled warp and of 06's unaligned loads)."""
import contextlib
import csv
import datetime
import io
import json
import os
import pathlib
import re
import shutil
import subprocess
import tempfile
import time

from scripts import sanitize
from scripts.run import (cpu_rows, gemm_rows, ladder_rows, print_cpu, print_ladder, run_args, size_args)
from scripts.stages import (ROOT, StageError, UsageProblem, all_pass, all_regimes, binary, combine_stage, constants,
                            describe, fmt_num, gemm_stage, git_commit, has_stream, ladder_stages, meta_from,
                            reduce_stages, regime_args, role, row_label, run_binary, save, say, table)
from scripts.tries import cmd_try, experiments, patched_copy, variant_target

from . import mutants
from .tests.check_try_file import CASES, ORIGINAL, STAGE


# The "things to try" of the stage pages, measured by ./maint/do measure (the pages show these results).
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
            "command": "./maint/do measure", "ladder_run_s": run_seconds}
    save(out, "ladder", rows, meta)
    return meta, ok and all_pass(rows)


OWN_CASES = ("race", "correct")  # maint/tests/check_try_file.py's copies of 05 that docs/own.md shows ./ladder try on


def measure_own(a, out):
    """./ladder try 05 mine.cu on two of maint/tests/check_try_file.py's copies of 05 (a planted race, and the file as it
    is), each report saved as own_<case>.txt with this machine's paths left out, for docs/own.md."""
    ok = True
    for name in OWN_CASES:
        edit = next(c[1] for c in CASES if c[0] == name)
        with tempfile.TemporaryDirectory() as tmp:
            mine = pathlib.Path(tmp).resolve() / "mine.cu"
            mine.write_text(edit(ORIGINAL))
            say(f"== ./ladder try {STAGE[:2]} mine.cu, mine.cu: maint/tests/check_try_file.py's case {name}")
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


def measure_tries(a, out):
    """The experiments: their verdicts are results the pages show, not the measurement's."""
    for stage, spec in try_experiments():
        say(f"== ./ladder try {stage[:2]} {spec}")
        a.stage, a.change = stage, spec
        a.save = str(out)
        if cmd_try(a) != 0:
            say(f"      {stage} with {spec}: a check failed (the page shows which)")
    return True


def measure_mutants(a, out):
    """The planted bugs, every one of which must be caught."""
    say("== planted bugs: every mutant must be caught")
    rows = mutants.rows(a.build)
    save(out, "mutants", rows)
    return all(r["verdict"] == "caught" for r in rows)


def measure_combines(a, out):
    """The combine stage: every combine at the targets' sizes, in the tree regime, after each flush, determinism."""
    multiblock = combine_stage()
    say(f"== {multiblock}: every combine strategy at the sizes of the targets")
    rows, _ = run_binary(multiblock, ["-n", "2^20,2^24,20000000,2^28", "--combine", "all", *run_args(a)])
    save(out, "multiblock", rows)
    ok = all_pass(rows)
    say(f"== {multiblock} in the tree regime: every combine at small blocks (one atomic or ticket per block)")
    rows, _ = run_binary(multiblock, [*size_args(a), "--regime", "tree", "--block", "64,128,256,1024",
                                                "--combine", "all", *run_args(a)])
    save(out, "combine_tree", rows)
    ok &= all_pass(rows)
    say(f"== the L2 flush: {multiblock} and CUB timed after each kind of flush")
    frows = []
    for flush in ("clean", "write", "none"):
        r, _ = run_binary(multiblock, ["-n", "2^22,2^24,2^28", *run_args(a, ("reps", "warmup", "seed", "input", "device")), "--flush", flush])
        frows.extend(r)
    save(out, "flush", frows)
    ok &= all_pass(frows)
    say(f"== {multiblock}: determinism, 100 runs of each strategy at three sizes")
    drows = []
    for n in ("2^20", "2^24", "2^28"):
        rows, rc = run_binary(multiblock, ["-n", n, "--combine", "all", "--determinism", "100",
                                                    *run_args(a, ("seed", "input"))])
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
    for label, exe, combine in [("the stage", binary(stage), "atomic,last-block"),
                                ("handoff (the patch)", patched_copy(a.build, stage, patch), "atomic")]:
        r, _ = run_binary(stage, ["-n", HANDOFF_SIZES, "--combine", combine, *run_args(a)], exe=str(exe))
        for row in r:
            row["variant"] = label
        rows.extend(r)
    save(out, "handoff_sweep", rows)
    return all_pass(rows)


def measure_accuracy(a, out):
    """Every stage's float result from 2^10 to 2^30, the CPU's float sums, and the error study of the bound."""
    say("== accuracy: every stage's float result from 2^10 to 2^30 (--check-only), and the CPU's float sums")
    arows = []
    for stage in reduce_stages():
        rows, _ = run_binary(stage, ["--check-only", "-n", ACCURACY_SIZES, *run_args(a, ("seed", "device"))])
        arows.extend(rows)
    save(out, "accuracy", arows)
    ok = all_pass(arows)
    proc = subprocess.run([str(a.build / "maint" / "bin" / "cpu_sums"), *run_args(a, ("seed",)), "--max-log2", "30"],
                          capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise StageError(f"cpu_sums failed (exit {proc.returncode}): {proc.stderr.strip()}")
    ok &= proc.returncode == 0
    (out / "accuracy_cpu.csv").write_text(proc.stdout)
    say(f"== the float bound: {ERROR_STUDY} random configurations of every reduce stage (--error-study)")
    erows = []
    for stage in reduce_stages():
        rows, rc = run_binary(stage, ["--error-study", str(ERROR_STUDY), *run_args(a, ("seed", "device"))])
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
        reps = ["--reps", a.gemm_reps] if a.gemm_reps else []
        r, _ = run_binary(gemm_stage(), ["--size", size, "--tile", str(tile), "--pad", "both", *reps,
                                                  *run_args(a, ("seed", "device"))])
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


# The parts of ./maint/do measure, in the order it runs them; --part runs some of them alone (each writes its own
# files; meta.json records the commit and date of each part, so a page can say when each was measured).
PARTS = {"ladder": None, "tries": measure_tries, "mutants": measure_mutants, "own": measure_own, "combines": measure_combines,
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


# ---- sweep and probe ---------------------------------------------------------------------------------

# The earlier rungs are swept up to here: their GB/s has long reached its plateau, and every size above costs
# seconds of input making; the rungs with several loads in flight (a kLoadsInFlight constant in their file: the ones
# that reach the bandwidth limit) and CUB run the whole --sweep.
EARLY_SWEEP_MAX = 2 ** 30


def sweep_rows(a):
    rows = []
    stages = [s for s in reduce_stages() if has_stream(s)]
    for i, stage in enumerate(stages, 1):
        sizes = describe(stage, ("-n", a.sweep))["values"]["sizes"]
        if constants(stage).get("kLoadsInFlight") is None:  # the stages without float4 loads in flight stop early
            sizes = [n for n in sizes if n <= EARLY_SWEEP_MAX] or sizes[:1]
        combine = ["--combine", "all"] if stage == combine_stage() else []
        say(f"[{i}/{len(stages)}] {stage}: {len(sizes)} sizes from {sizes[0]} to {sizes[-1]}")
        r, _ = run_binary(stage, ["-n", ",".join(map(str, sizes)), *combine, *run_args(a)])
        rows.extend(r)
    return rows


def print_sweep(rows):
    sizes = sorted({int(r["n"]) for r in rows})
    labels = list(dict.fromkeys(row_label(r) for r in rows))
    by = {(row_label(r), int(r["n"])): r for r in rows}
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
    stages = [s for s in reduce_stages() if regime == "tree" or has_stream(s)]  # 01 has no stream regime
    for i, stage in enumerate(stages, 1):
        say(f"[{i}/{len(stages)}] {stage}: blocks 64..1024")
        r, _ = run_binary(stage, [*size_args(a), "--block", "64,128,256,512,1024",
                                           *regime_args(stage, [regime]), *run_args(a)])
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

def cmd_mutants(a):
    rows = mutants.rows(a.build)
    mutants.print_rows(rows)
    if a.save:
        save(a.save, "mutants", rows)
    return 0 if all(r["verdict"] == "caught" for r in rows) else 1


# ---- profile: Nsight Compute counters ------------------------------------------------------------------




# The Nsight Compute sections every case collects (they name their metrics per GPU, so nothing here breaks on
# another chip), plus the shared-memory and instruction counters the pages cite. ./maint/do profile keeps the
# columns below; the pages name each by its ncu metric, so a reader can ask ncu for the same one.
NCU_SECTIONS = ["SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats", "InstructionStats", "SourceCounters"]


# Every counter ./maint/do profile keeps: its short name (what the pages ask for), its ncu metric (the pages name it, so
# a reader can ask ncu for the same one), what a table calls it, and whether it is asked for by name (the others
# come with the sections above). The columns of ncu.csv, in this order.
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


TOP_STALLS = 3


# The units ncu.csv keeps, which the pages divide by (ncu scales a metric's unit to its value unless --print-units base).
BASE_UNITS = {"gpu__time_duration.sum": ("ns", "nsecond"), "dram__bytes_read.sum": ("byte",)}


def parse_ncu_raw(text):
    """ncu --page raw --csv: a header row, a units row, then one row per profiled kernel -> [{column: value}]. A
    metric of BASE_UNITS in another unit is refused: a microsecond read as a nanosecond is a silent wrong number."""
    lines = [l for l in text.splitlines() if l.startswith('"')]
    if len(lines) < 3:
        return []
    table_rows = list(csv.reader(io.StringIO("\n".join(lines))))
    header, units = table_rows[0], dict(zip(table_rows[0], table_rows[1]))
    wrong = {m: units[m] for m, unit in BASE_UNITS.items() if m in units and units[m] not in unit}
    if wrong:
        raise StageError(f"ncu printed {wrong}, not in {BASE_UNITS} (the export needs --print-units base)")
    return [dict(zip(header, r)) for r in table_rows[2:]]


def ncu_number(value):
    try:
        return float(str(value).replace(",", ""))
    except ValueError:
        return ""


def ncu_row(stage, variant, size, kernel):
    """One profiled kernel -> the row ./maint/do profile keeps: the columns above and the top stall reasons (warps
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
    output = ["-o", str(report)] if report else ["--page", "raw", "--csv", "--print-units", "base"]
    return [ncu, "--clock-control", "none", *sections, "--metrics", ",".join(NCU_METRICS), *output,
            "--kernel-name-base", "demangled", "--kernel-name", f"regex:{kernel_regex}", *count, *cmd]


def run_ncu(ncu, cmd, kernel_regex, launch_count=None, source=None):
    """The raw page of every profiled kernel: [{column: value}]. With source (a list, and launch_count 1), the same
    profile's shared-memory instructions from the source page are appended to it (source_rows())."""
    with tempfile.TemporaryDirectory() as tmp:
        report = pathlib.Path(tmp) / "profile.ncu-rep"
        proc = subprocess.run(ncu_command(ncu, cmd, kernel_regex, launch_count, report), capture_output=True, text=True)
        raw = subprocess.run([ncu, "-i", str(report), "--page", "raw", "--csv", "--print-units", "base",
                              "--kernel-name-base", "demangled"],
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
    if role(stage) == "gemm":
        return (head + "--kernel-name-base demangled --kernel-name regex:gemm \\\n    "
                f"build/bin/{gemm_stage()} --size {size} --pad both --reps 1 --warmup 0")
    return (head + f"--kernel-name regex:reduce_kernel --launch-count 1 \\\n    build/bin/{stage} --check-only --input exact "
            f"-n {size}" + (f" --regime {variant}" if has_stream(stage) else ""))


GEMM_KERNELS = [("tiled", lambda k: "gemm_kernel<" in k and ", 0>" in k), ("tiled padded", lambda k: "gemm_kernel<" in k and ", 1>" in k),
                ("naive", lambda k: "gemm_naive_kernel" in k),
                ("cuBLAS", lambda k: "gemm_kernel<" not in k and "gemm_naive_kernel" not in k)]


def ncu_check(a, ncu, stage):
    """The test profile_metrics: one stage's first launch through the very sections and metrics of cmd_profile;
    every kept column must be a number and the stall reasons present."""
    probe = subprocess.run([binary(stage), "--check-only", "-n", "1"], capture_output=True, text=True)
    if probe.returncode == 77:
        print(probe.stderr.strip())  # "...: no usable GPU: ..." marks the test skipped
        return 0
    kernel = run_ncu(ncu, [binary(stage), "--check-only", "--input", "exact", "-n", a.profile_size,
                           *regime_args(stage, ["tree"])], "reduce_kernel", launch_count=1)[0]
    row = ncu_row(stage, "tree", a.profile_size, kernel)
    missing = [m for m in NCU_COLUMNS if row[m] == ""] + ([] if row["stall_1"] else ["stall reasons"])
    if missing:
        say(f"ladder: profile row of {stage} lacks {', '.join(missing)}")
        return 1
    print(f"profile row of {stage}: {len(NCU_COLUMNS)} columns, top stall {row['stall_1']} {row['stall_1_per_issue']}")
    return 0


def profile_reduce(a, ncu):
    """One --check-only run on the exact input per reduce stage and regime (the first launch is the one that reads
    the input), and the experiments' builds as ./ladder try left them: (rows, source rows)."""
    rows, source = [], []
    for regime in all_regimes():
        for stage in reduce_stages():
            if not has_stream(stage) and regime == "stream":
                continue
            say(f"      ncu: {stage} ({regime} regime, n = {a.profile_size})")
            cmd = [binary(stage), "--check-only", "--input", "exact", "-n", a.profile_size,
                   *regime_args(stage, [regime])]
            found = []
            kernel = run_ncu(ncu, cmd, "reduce_kernel", launch_count=1, source=found)[0]
            rows.append(ncu_row(stage, regime, a.profile_size, kernel))
            source += [{"stage": stage, "variant": regime, **r} for r in found]
    for stage, patch in experiments():
        if stage not in reduce_stages():  # the GEMM's experiments are timed by ./ladder try, not profiled here
            continue
        exe = a.build / "try" / "bin" / variant_target(stage, patch.stem)
        if not exe.exists():
            say(f"      ncu: {patch.stem} of {stage} not built (./ladder try {stage[:2]} {patch.relative_to(ROOT)}): skipped")
            continue
        for regime in (all_regimes() if has_stream(stage) else ["tree"]):
            say(f"      ncu: {stage} with {patch.name} ({regime} regime)")
            cmd = [str(exe), "--check-only", "--input", "exact", "-n", a.profile_size, *regime_args(stage, [regime])]
            kernel = run_ncu(ncu, cmd, "reduce_kernel", launch_count=1)[0]
            rows.append(ncu_row(stage, f"{regime}, {patch.stem}", a.profile_size, kernel))
    return rows, source


def profile_gemm(a, ncu):
    """One timed run of the GEMM with one repetition, every kernel of it; the tiled kernels' source pages, one launch
    each: (rows, source rows)."""
    stage = gemm_stage()
    say(f"      ncu: {stage} (tiled, padded, naive and cuBLAS, {a.profile_gemm}^3)")
    cmd = [binary(stage), "--size", a.profile_gemm, "--pad", "both", "--reps", "1", "--warmup", "0"]
    kernels = run_ncu(ncu, cmd, "gemm")
    source = []
    for variant, pad in (("tiled", 0), ("tiled padded", 1)):  # the source page shows one kernel's one launch
        found = []
        run_ncu(ncu, cmd, f"gemm_kernel<[^,]*16, [^>]*{pad}>", launch_count=1, source=found)  # <(int)16, (int)0>
        source += [{"stage": stage, "variant": variant, **r} for r in found]
    rows = []
    for variant, match in GEMM_KERNELS:
        found = [k for k in kernels if match(k.get("Kernel Name", ""))]
        if not found:
            raise StageError(f"ncu: no {variant} kernel among {sorted({k.get('Kernel Name') for k in kernels})}")
        rows.append(ncu_row(stage, variant, a.profile_gemm, found[-1]))  # the last: after any check runs
    return rows, source


def print_profile(a, rows):
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


def cmd_profile(a):
    ncu = find_ncu()
    if not ncu:
        say("ladder: ncu (Nsight Compute) not found: install Nsight Compute or put its directory on PATH")
        return 2
    if a.ncu_check:
        return ncu_check(a, ncu, a.ncu_check)
    rows, source = profile_reduce(a, ncu)
    gemm_rows, gemm_source = profile_gemm(a, ncu)
    rows, source = rows + gemm_rows, source + gemm_source
    print_profile(a, rows)
    if a.save:
        version = subprocess.run([ncu, "--version"], capture_output=True, text=True).stdout.strip()
        save(a.save, "ncu", rows, {"ncu": version, "sections": NCU_SECTIONS, "metrics": NCU_METRICS})
        # per shared-memory SASS instruction: what maint/tests/check_thread_models.py holds the host runs to
        save(a.save, "ncu_source", source, {"ncu": version, "sections": NCU_SECTIONS, "commit": git_commit(),
                                            "date": datetime.date.today().isoformat(), "command": "./maint/do profile"})
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
    if role(stage) == "gemm":
        return (lambda l: "gemm_kernel" in l and "naive" not in l), True
    return (lambda l: "reduce_kernel" in l), False


def save_sass(a):
    """The machine code the pages quote: each reduce stage's kernel, and every instantiation of the tiled GEMM."""
    files = [(stage, kernel_sass(binary(stage), *saved_kernels(stage))) for stage in ladder_stages()]
    for name, lines in files:
        if lines:
            (pathlib.Path(a.save) / f"sass_{name}.txt").write_text("\n".join(lines) + "\n")


def sanitizer_report(a, tool, runs, name):
    """Each run under compute-sanitizer --tool TOOL, as the pages quote it: a "$ command" line, then the tool's
    own lines (shortened where long), ending with its summary; written to <save>/<name>."""
    sanitizer = sanitize.program()
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
         [binary("04_warp_unroll"), "--check-only", "-n", "4097", "--regime", "tree"]),
        ("volatile last warp, no __syncwarp (maint/tests/racy_warp_unroll.cu)",
         [str(a.build / "maint" / "bin" / "racy_warp_unroll")])], "racecheck.txt")
    sanitizer_report(a, "memcheck", [
        ("06_float4, n = 1000003 at offset 1 (head 3, tail 0)",
         [binary("06_float4"), "--check-only", "-n", "1000003", "--offset", "1"]),
        ("06_float4, n = 4099 at offset 2, both regimes",
         [binary("06_float4"), "--check-only", "-n", "4099", "--offset", "2", "--regime", "stream,tree"])],
        "memcheck.txt")


COMMANDS = {"measure": cmd_measure, "profile": cmd_profile, "mutants": cmd_mutants, "sweep": cmd_sweep,
            "probe": cmd_probe}
