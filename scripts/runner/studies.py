"""The studies behind the docs' charts: sweep (GB/s against n), probe (GB/s against the block size) and mutants (every
planted bug, run as its test runs it)."""
import re
import shlex
import subprocess
import sys

from ..cli import say
from ..mutants import MUTANTS
from .results import all_pass, fmt_num, git_commit, meta_from, row_label, run_args, run_binary, save, size_args, table
from .stages import (ROOT, NoGpu, StageError, combine_stage, constants, has_stream, reduce_stages, regime_args, resolve,
                     sanitizer_program, stage_file)


# ---- sweep and probe ---------------------------------------------------------------------------------

# The earlier rungs are swept up to here: their GB/s has long reached its plateau, and every size above costs
# seconds of input making; the rungs with several loads in flight (a kLoadsInFlight constant in their file: the ones
# that reach the bandwidth limit) and CUB run the whole --sweep.
EARLY_SWEEP_MAX = 2 ** 30


def sweep_rows(a):
    rows = []
    stages = [s for s in reduce_stages() if has_stream(s)]
    for i, stage in enumerate(stages, 1):
        sizes = resolve(stage, ["-n", a.sweep])["sizes"]
        if constants(stage).get("kLoadsInFlight") is None:  # the stages without float4 loads in flight stop early
            sizes = [n for n in sizes if n <= EARLY_SWEEP_MAX] or sizes[:1]
        combine = ["--combine", "all"] if stage == combine_stage() else []
        say(f"[{i}/{len(stages)}] {stage}: {len(sizes)} sizes from {sizes[0]} to {sizes[-1]}")
        r, _ = run_binary(a.build, stage, ["-n", ",".join(map(str, sizes)), *combine, *run_args(a)])
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
        r, _ = run_binary(a.build, stage, [*size_args(a), "--block", "64,128,256,512,1024",
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

def mutant_rows(a):
    """Runs every planted bug (scripts/mutants.py) as its test does; records the verdict and the line it printed."""
    rows = []
    for m in MUTANTS:
        if m.expect == "sass":  # its machine code, read on the CPU (scripts/sass.py): the mutated copy is checked
            exe = a.build / "tests" / "mutants" / m.name / stage_file(m.stage).name
            cmd = [sys.executable, "-m", "scripts.sass", "--tools", str(a.build / "tools"), "--expect-violation",
                   str(exe)]
        else:
            exe = a.build / "tests" / "bin" / f"mutant_{m.name}"
            cmd = [str(exe), *shlex.split(m.args)]
        if not exe.exists():
            raise StageError(f"{exe} does not exist: build the target 'mutants' first")
        if m.expect == "racecheck":  # as its test runs it: the harness's shared-memory fill is not traced
            cmd = [sanitizer_program(), "--tool", "racecheck", "--error-exitcode", "99", "--print-limit", "1", *cmd,
                   "--no-shared-poison"]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
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


# ---- profile: Nsight Compute counters ------------------------------------------------------------------


