"""./ladder profile: Nsight Compute's counters of every stage's first launch (and of the GEMM's kernels), the
shared-memory instructions of its source page, the machine code the pages quote, and what compute-sanitizer says of
the unrolled warp and of 06's unaligned loads."""
import csv
import datetime
import io
import os
import pathlib
import re
import shutil
import subprocess
import tempfile

from ..cli import say
from .results import fmt_num, git_commit, save, table
from .stages import (ROOT, StageError, all_regimes, binary, gemm_stage, has_stream, ladder_stages, reduce_stages,
                     regime_args, role, sanitizer_program)
from .tries import experiments, patch_target


# The Nsight Compute sections every case collects (they name their metrics per GPU, so nothing here breaks on
# another chip), plus the shared-memory and instruction counters the pages cite. ./ladder profile keeps the
# columns below; the pages name each by its ncu metric, so a reader can ask ncu for the same one.
NCU_SECTIONS = ["SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats", "InstructionStats", "SourceCounters"]


# Every counter ./ladder profile keeps: its short name (what the pages ask for), its ncu metric (the pages name it, so
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


def profile_reduce(a, ncu):
    """One --check-only run on the exact input per reduce stage and regime (the first launch is the one that reads
    the input), and the experiments' builds as ./ladder try left them: (rows, source rows)."""
    rows, source = [], []
    for regime in all_regimes():
        for stage in reduce_stages():
            if not has_stream(stage) and regime == "stream":
                continue
            say(f"      ncu: {stage} ({regime} regime, n = {a.profile_size})")
            cmd = [binary(a.build, stage), "--check-only", "--input", "exact", "-n", a.profile_size,
                   *regime_args(stage, [regime])]
            found = []
            kernel = run_ncu(ncu, cmd, "reduce_kernel", launch_count=1, source=found)[0]
            rows.append(ncu_row(stage, regime, a.profile_size, kernel))
            source += [{"stage": stage, "variant": regime, **r} for r in found]
    for stage, patch in experiments():
        if stage not in reduce_stages():  # the GEMM's experiments are timed by ./ladder try, not profiled here
            continue
        exe = a.build / "try" / "bin" / patch_target(stage, patch)
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
    cmd = [binary(a.build, stage), "--size", a.profile_gemm, "--pad", "both", "--reps", "1", "--warmup", "0"]
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
    if role(stage) == "gemm":
        return (lambda l: "gemm_kernel" in l and "naive" not in l), True
    return (lambda l: "reduce_kernel" in l), False


def save_sass(a):
    """The machine code the pages quote: each reduce stage's kernel, and every instantiation of the tiled GEMM."""
    files = [(stage, kernel_sass(binary(a.build, stage), *saved_kernels(stage))) for stage in ladder_stages()]
    for name, lines in files:
        if lines:
            (pathlib.Path(a.save) / f"sass_{name}.txt").write_text("\n".join(lines) + "\n")


def sanitizer_report(a, tool, runs, name):
    """Each run under compute-sanitizer --tool TOOL, as the pages quote it: a "$ command" line, then the tool's
    own lines (shortened where long), ending with its summary; written to <save>/<name>."""
    sanitizer = sanitizer_program()
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
