"""./ladder measure: everything the docs are built from, written to docs/results/ in parts (--part runs some alone;
meta.json records each part's commit and date)."""
import contextlib
import datetime
import io
import json
import pathlib
import subprocess
import tempfile
import time

from ..cli import say
from .own import CASES, ORIGINAL, STAGE
from .reader import cmd_try
from .ladder_run import cpu_rows, gemm_rows, ladder_rows, print_cpu, print_ladder
from .profile import cmd_profile, find_ncu
from .results import all_pass, git_commit, meta_from, run_args, run_binary, save, size_args
from .stages import ROOT, StageError, UsageProblem, binary, combine_stage, gemm_stage, reduce_stages
from .studies import mutant_rows, print_probe, print_sweep, probe_rows, sweep_rows
from .tries import build_patch_variant, experiments


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


OWN_CASES = ("race", "correct")  # scripts/runner/own.py's copies of 05 that docs/own.md shows ./ladder try on


def measure_own(a, out):
    """./ladder try 05 mine.cu on two of scripts/runner/own.py's copies of 05 (a planted race, and the file as it
    is), each report saved as own_<case>.txt with this machine's paths left out, for docs/own.md."""
    ok = True
    for name in OWN_CASES:
        edit = next(c[1] for c in CASES if c[0] == name)
        with tempfile.TemporaryDirectory() as tmp:
            mine = pathlib.Path(tmp).resolve() / "mine.cu"
            mine.write_text(edit(ORIGINAL))
            say(f"== ./ladder try {STAGE[:2]} mine.cu, mine.cu: scripts/runner/own.py's case {name}")
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
    rows = mutant_rows(a)
    save(out, "mutants", rows)
    return all(r["verdict"] == "caught" for r in rows)


def measure_combines(a, out):
    """The combine stage: every combine at the targets' sizes, in the tree regime, after each flush, determinism."""
    multiblock = combine_stage()
    say(f"== {multiblock}: every combine strategy at the sizes of the targets")
    rows, _ = run_binary(a.build, multiblock, ["-n", "2^20,2^24,20000000,2^28", "--combine", "all", *run_args(a)])
    save(out, "multiblock", rows)
    ok = all_pass(rows)
    say(f"== {multiblock} in the tree regime: every combine at small blocks (one atomic or ticket per block)")
    rows, _ = run_binary(a.build, multiblock, [*size_args(a), "--regime", "tree", "--block", "64,128,256,1024",
                                                "--combine", "all", *run_args(a)])
    save(out, "combine_tree", rows)
    ok &= all_pass(rows)
    say(f"== the L2 flush: {multiblock} and CUB timed after each kind of flush")
    frows = []
    for flush in ("clean", "write", "none"):
        r, _ = run_binary(a.build, multiblock, ["-n", "2^22,2^24,2^28", *run_args(a, ("reps", "warmup", "seed", "input", "device")), "--flush", flush])
        frows.extend(r)
    save(out, "flush", frows)
    ok &= all_pass(frows)
    say(f"== {multiblock}: determinism, 100 runs of each strategy at three sizes")
    drows = []
    for n in ("2^20", "2^24", "2^28"):
        rows, rc = run_binary(a.build, multiblock, ["-n", n, "--combine", "all", "--determinism", "100",
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
    for label, exe, combine in [("the stage", binary(a.build, stage), "atomic,last-block"),
                                ("handoff (the patch)", build_patch_variant(a, stage, patch), "atomic")]:
        r, _ = run_binary(a.build, stage, ["-n", HANDOFF_SIZES, "--combine", combine, *run_args(a)], exe=str(exe))
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
        rows, _ = run_binary(a.build, stage, ["--check-only", "-n", ACCURACY_SIZES, *run_args(a, ("seed", "device"))])
        arows.extend(rows)
    save(out, "accuracy", arows)
    ok = all_pass(arows)
    proc = subprocess.run([str(a.build / "tests" / "bin" / "cpu_sums"), *run_args(a, ("seed",)), "--max-log2", "30"],
                          capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise StageError(f"cpu_sums failed (exit {proc.returncode}): {proc.stderr.strip()}")
    ok &= proc.returncode == 0
    (out / "accuracy_cpu.csv").write_text(proc.stdout)
    say(f"== the float bound: {ERROR_STUDY} random configurations of every reduce stage (--error-study)")
    erows = []
    for stage in reduce_stages():
        rows, rc = run_binary(a.build, stage, ["--error-study", str(ERROR_STUDY), *run_args(a, ("seed", "device"))])
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
        r, _ = run_binary(a.build, gemm_stage(), ["--size", size, "--tile", str(tile), "--pad", "both", *reps,
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


# The parts of ./ladder measure, in the order it runs them; --part runs some of them alone (each writes its own
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
