"""The command lines readers meet: the stage programs', cpu_baseline's, a copy's --version, ./ladder's and ./maint/do's.
Each row: (program, arguments, exit status, a regular expression the output must match, one it must not, environment).
Program "ladder" runs with a build directory that must not exist afterwards; "runner" is its Python side."""
import os
import re
import shlex
import subprocess
import sys
import tempfile

from maint.tests import verdict
from scripts.stages import ROOT, build_dir, ladder_stages

NO_GPU = {"CUDA_VISIBLE_DEVICES": "-1"}
STAGES = ladder_stages()
GEMM_RANGE = "1 to 1000000"
ROWS = [
    ("02_grid_stride", "--block 96", 2, "error: --block 96: 02_grid_stride runs power-of-two blocks from 64 to 1024"),
    ("04_warp_unroll", "-n lots", 2, "error: -n/--size 'lots' is not a size"),
    ("05_shuffle", "--reps -3", 2, "error: --reps -3 is out of range: give a whole number from 1 to 100000"),
    ("02_grid_stride", "--seed -1", 2, "error: --seed -1 is out of range: give a whole number from 0 to"),
    ("07_multiblock", "--grid -1", 2, r"error: --grid -1 is out of range: give a whole number from 0 to 2\^31-1"),
    ("02_grid_stride", "-n 1e20", 2, r"error: -n/--size 1e20 is out of range: sizes run from 1 to 2\^36"),
    ("03_padding", "--bogus", 2, "error: --bogus: 03_padding has no such option"),
    ("03_padding", "--reps", 2, "error: --reps needs a value"),
    ("02_grid_stride", "-n 1..9223372036854775808", 2, "error: -n/--size [0-9]+ is out of range"),
    ("02_grid_stride", "--seed 18446744073709551615", 77, "no usable GPU", None, NO_GPU),
    ("02_grid_stride", "--offset=", 2, "error: --offset needs a value"),
    ("03_padding", "--reps 3 --reps 4", 2, "error: --reps is given twice: give it once"),
    ("03_padding", "stray", 2, "error: 'stray': 03_padding takes options only"),
    ("04_warp_unroll", "--input double", 2, "error: --input 'double' is not one of float, exact"),
    ("08_gemm_tiled", "--size 100 -m 50", 2, "error: --size sets M = N = K at once"),
    ("08_gemm_tiled", "--combine all", 2, "error: --combine: 08_gemm_tiled has no such option"),
    ("08_gemm_tiled", "--tile 8", 2, "error: --tile '8' is not one of 16, 32"),
    ("08_gemm_tiled", "--help", 0, "--pad", "reduction|--combine|Excludes"),  # the refusals are ours, after parsing
    ("06_float4", "--version", 0, r"^06_float4: cuda-ladder [0-9]+\.[0-9]+ \(commit ", "a copy of"),
    ("01_naive", "--regime stream", 2, "error: --regime stream: 01_naive has no grid-stride loop"),
    ("06_float4", "--combine atomic", 2, "error: --combine 'atomic': 06_float4 combines partial sums by relaunch only"),
    ("07_multiblock", "--regime tree --grid 64", 2, "error: --grid 64: the tree regime"),
    ("08_gemm_tiled", "-k x", 2, "error: -k 'x' is not a whole number"),
    ("07_multiblock", "--help", 0, r"--combine NAME\|LIST[= ].?atomic.*Examples:.*07_multiblock --self-test full.*"
                                   r"Exit status: 0 pass", "TEXT|Excludes"),
    ("02_grid_stride", "--help", 0, r"-n,--size N\|LIST\|RANGE( .|=)2\^28.*--block B\|LIST( .|=)1024.*--grid G( .|=)0.*"
                                    r"--reps N( .|=)50", "TEXT"),
    ("01_naive", "--help", 0, "--block", "--regime|--grid|--combine"),
    ("06_float4", "--help", 0, "--regime", "--combine|two-pass"),
    ("05_shuffle", "--regime stream,fast", 2, "error: --regime 'fast' is not one of stream, tree"),
    ("07_multiblock", "--combine relaunch", 2, r"error: --combine 'relaunch': 07_multiblock combines partial sums by "
                                               r"atomic, last-block, two-pass \(a list of them, or all\)"),
    ("06_float4", "--combine foo", 2, r"error: --combine 'foo': 06_float4 combines partial sums by relaunch only \("),
    ("08_gemm_tiled", "--help", 0, f"-m M.*{GEMM_RANGE}.*-n N.*{GEMM_RANGE}.*-k K.*{GEMM_RANGE}"),
    ("08_gemm_tiled", "-m big", 2, f"error: -m 'big' is not a whole number: give one from {GEMM_RANGE}"),
    ("02_grid_stride", "-n 2^10..2^5", 2, r"error: -n/--size '2\^10..2\^5' runs backwards: a range goes from the "
                                         r"smaller power of two up \(2\^5..2\^10\)"),
    ("02_grid_stride", "-n 3..9", 2, r"error: -n/--size '3..9': a range a..b doubles"),
    # every option refused in one line that names it (main() demands one line of every refusal)
    *[("05_shuffle", args, 2, f"^05_shuffle: error: {message}") for args, message in [
        ("-n -2^3", r"-n/--size -2\^3 is out of range"), ("-n 2^40", "-n/--size 1099511627776 is out of range"),
        ("-n 100,0", "-n/--size 0 is out of range"), ("--block big", "--block 'big' is not a number"),
        ("--block 2048", "--block 2048: 05_shuffle runs power-of-two"), ("--block 32", "--block 32: 05_shuffle runs"),
        ("--block 64..2048", "--block 2048: 05_shuffle runs"), ("--block 32..64", "--block 32: 05_shuffle runs"),
        ("--block -64", "--block -64: 05_shuffle"), ("--grid 2^31", "--grid 2147483648 is out of range"),
        ("--reps 0", "--reps 0 is out of range"), ("--reps many", "--reps 'many' is not a whole number"),
        ("--warmup -1", "--warmup -1 is out of range"), ("--device -1", "--device -1 is out of range"),
        ("--offset 2000", "--offset 2000 is out of range"), ("--seed x", "--seed 'x' is not a whole number"),
        ("--format xml", "--format 'xml' is not one of"), ("--flush maybe", "--flush 'maybe' is not one of"),
        ("--self-test full --check-only", "--self-test and --check-only: give one")]],
    ("02_grid_stride", "--reps ' 010' --seed ' 3*2^8' --describe", 0, r'"reps": 10, "warmup": 5, "seed": 768\b'),
    ("02_grid_stride", "--reps 00000000000000000000005 --describe", 0, r'"reps": 5, '),
    ("07_multiblock", "--combine ' all' --describe", 0, r'"combines": \["atomic", "last-block", "two-pass"\], "grid"'),
    ("02_grid_stride", "--grid 5 --regime tree,tree", 2, "error: --grid 5: the tree regime sizes its grid from n"),
    ("01_naive", "--grid 5 --describe", 2, "error: --grid 5: the tree regime sizes its grid from n"),
    ("07_multiblock", "--self-test quick -n 1024", 2, r"error: --self-test and -n: give one \(--self-test chooses"),
    ("05_shuffle", "-n 00000000000000000001024 --describe", 0, r'"sizes": \[1024\]'),
    ("08_gemm_tiled", "--self-test quick -m 100", 2, "error: --self-test and -m: give one"),
    ("08_gemm_tiled", "--self-test full -m 2^7 --describe", 0, '"m": 128, '),
    ("08_gemm_tiled", "--pad maybe", 2, "error: --pad 'maybe' is not one of off, on, both"),
    ("08_gemm_tiled", "--size 2000000", 2, "error: --size 2000000 is out of range: give a whole number from 1 to"),
    ("02_grid_stride", "-n 2^36 --check-only", (2, 77), r"(error: -n 68719476736: needs [0-9]+ bytes .* of device "
                                                        r"memory .* but only [0-9]+ bytes .* are free|no usable GPU)"),
    ("cpu_baseline", "--version", 0, r"^cpu_baseline: cuda-ladder [0-9.]+ \(commit "),
    ("cpu_baseline", "--no-copy -n 4097 --threads 3 --reps 2", 0, r"float loop +4097 +1 +PASS.*every hw thread +4097 +3 "
                                                                  r"+PASS"),
    ("cpu_baseline", "--no-copy -n 1000 --input exact --format csv", 0, r"^stage,row,.*\ncpu_baseline,loop,.*,exact,"
                                                                        r".*,PASS,"),
    ("cpu_baseline", "", 77, "no usable GPU.*--no-copy times the CPU sums alone", None, NO_GPU),
    ("cpu_baseline", "--threads 2000", 2, "--threads 2000 is out of range"),
    ("cpu_baseline", "-n 0", 2, "-n/--size 0 is out of range"),
    ("deadline_probe", "lifted", 0, "^$"),  # a lifted Deadline never fires, though the program outlives it
    ("deadline_probe", "outlived", 1, r"^deadline_probe: error: did not finish within 1 s: a loop that never ends, or a "
                                      r"barrier not every thread of the block reaches \(a probe\); to repeat it: "
                                      r".*deadline_probe outlived$"),
    ("mutant_01_bound", "--version", 0, r"^mutant_01_bound: cuda-ladder [0-9.]+ \(commit [^)]*\), a copy of 01_naive "
                                        r"with a planted bug"),
    # ./ladder: help, and every value it can check refused in one line ("ladder: error: ...") before anything is built
    *[("ladder", args, 2, f"^ladder: error: {message}") for args, message in [
        ("fly", "unknown command 'fly'"), ("--frob", r"unrecognized arguments: --frob \(see ./ladder --help\)"),
        ("run -n ''", "-n/--size needs a value"), ("run --build ''", "--build needs a directory"),
        ("run --no-gemm --gemm-size 5", "--no-gemm leaves out the GEMM rung"), ("test 05", "test 05: ./ladder test"),
        ("try 06 kLoadsInFlight=²", "try 06_float4 kLoadsInFlight=²: kLoadsInFlight is a count"),
        ("run --nonsense", r"unrecognized arguments: --nonsense \(see ./ladder run --help\)"),
        ("test --build", "--build needs a directory"), ("diff 01 nope", "no stage 'nope': the stages are 01_naive, "),
        ("diff 07 08", "diff 07 08: 07_multiblock/reduce.cu and 08_gemm_tiled/gemm.cu are stages of two kinds"),
        ("diff 01 01", "diff 01 01: a stage against itself shows nothing"),
        ("run --save CMakeLists.txt", "--save .*CMakeLists.txt: that is a file, not a directory"),
        ("try 06 kLoadsInFlight=4,4", "try 06_float4 kLoadsInFlight=4: the file says kLoadsInFlight = 4 already"),
        ("try 99 kBlock=1", "no stage '99'"), ("try 06 kLoads", "try 06_float4 kLoads: not NAME=v1,v2"),
        ("try 06 kLoadsInFlight=0", "try 06_float4 kLoadsInFlight=0: kLoadsInFlight is a count .*from 1 to 64"),
        ("try 06 kNope=1", r"try 06_float4 kNope=...: 06_float4/reduce.cu has no constant kNope \(its constants: "
                           r"kLoadsInFlight\)"),
        ("try 02 --grid 64,128", "try 02 --grid: write a stage option to vary as --grid=64,128"),
        ("try 05 docs/experiments/01_naive/interleaved.patch", r"try 05_shuffle docs/experiments/01_naive/interleaved."
         r"patch: the patch changes 01_naive/reduce.cu, not 05_shuffle/reduce.cu: it is an experiment of 01_naive "
         r"\(./ladder try 01 "),
        ("try 01 maint/tests/data/stale.patch", "try 01_naive .*stale.patch does not apply to 01_naive/reduce.cu as it "
         "is now; git apply says: patch failed: 01_naive/reduce.cu:"),
        ("try 01 nothing.patch", "'nothing.patch': no such patch"),
        ("try 05 -n 2^20 nowhere.cu", "try 05_shuffle nowhere.cu: no such file")]],  # the change after an option
    ("ladder", "", 2, "^usage: ./ladder .*COMMAND.*ladder: error: give a command"),
    ("ladder", "--version", 0, r"^cuda-ladder [0-9]+\.[0-9]+ \(commit "),
    ("ladder", "diff 05 04", 0, r"^--- 05_shuffle/reduce.cu\n\+\+\+ 04_warp_unroll/reduce.cu"),
    ("ladder", "diff 01 03", 0, r"^--- 01_naive/reduce.cu\n\+\+\+ 03_padding/reduce.cu"),
    *[("ladder", f"run --{o} /proc/ladder-nope", 2, f"^ladder: error: --{o} /proc/ladder-nope: the directory cannot "
       "be made in /proc", "configuring") for o in ("build", "save")],
    ("ladder", "help run", 0, "^usage: ./ladder run .*examples:"),
    ("ladder", "--help", 0, r"commands:.*run .*test .*try .*LADDER_NO_INSTALL=1", r"skipped  |called by"),
    ("ladder", "run --help", 0, r"^usage: ./ladder run .*--reps REPS +timed repetitions.*--gemm-size M +M = N = K",
     "--sweep|--ncu-check|skipped"),
    ("ladder", "try --help", 0, r"^usage: ./ladder try \[options\] STAGE CHANGE.*NAME=v1,v2.*experiment.patch"),
    ("ladder", "diff --help", 0, r"^usage: ./ladder diff \[-h\] A B"),
    ("ladder", "test --help", 0, "^usage: ./ladder test .*-R REGEX.*goes to ctest"),
    ("ladder", "build --help", 0, r"^usage: ./ladder build \[-h\] \[--build DIR\]"),
    ("maint", "measure", 77, "^maint: measure needs an NVIDIA GPU, and none is visible", None, NO_GPU),
    ("maint", "docs --nonsense", 2, r"^maint: error: unrecognized arguments: --nonsense \(see ./maint/do docs --help\)"),
    ("maint", "test -k nosuch_zzz", 2, "^maint: error: no check's name holds 'nosuch_zzz'"),
    ("maint", "docs --check --self-test", 2, "^maint: error: argument --self-test: not allowed with argument --check"),
    ("maint", "measure --help", 0, "^usage: ./maint/do measure .*--profile-size N.*--sweep SIZES"),
    ("ladder", "build", 2, "^ladder: CMake 3.22.1 is too old: 3.24 or newer is needed", "missing", "old-cmake"),
    *[("runner", args, 2, f"^ladder: error: {message}") for args, message in [
        ("run -n 0", r"-n/--size 0 is out of range: sizes run from 1 to 2\^36"),
        ("run --gemm-size 0", "--gemm-size: --size 0 is out of range: give a whole number from 1 to 1000000"),
        ("run --reps 0", "--reps 0 is out of range"),
        ("try 02 --regime=tree", "try 02_grid_stride --regime=...: try varies how the stage is launched: --block, "
                                 "--grid, --offset"),
        ("try 02 --grid=abc", "try 02_grid_stride --grid=abc: --grid 'abc' is not a whole number")]],
    ("runner", "try 05 docs/experiments/05_shuffle/xor.patch --seed -1", 2, r"--seed -1 .*\(see 05_shuffle --help\)$"),
    ("runner", "try 08 docs/experiments/08_gemm_tiled/two_outputs.patch -n 5", 2, "try 08_gemm_tiled -n: -n is for the "
                                                                                "reduce stages"),
]

def command(program, args):
    if program == "runner":
        return [sys.executable, "-m", "scripts.ladder", *shlex.split(args), "--build", str(build_dir())]
    folder = "maint/mutants/bin" if program.startswith("mutant_") else "maint/bin" if "_probe" in program else "bin"
    path = {"ladder": ROOT / "ladder", "maint": ROOT / "maint" / "do"}.get(program) or build_dir() / folder / program
    return [str(path), *shlex.split(args)]

def main():
    rows = ROWS + [(s, "", 77, f"^{s}: no usable GPU: .*compute capability 7.5", None, NO_GPU)  # each in one line
                   for s in ladder_stages()]
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        os.mkdir(f"{tmp}/old")  # a cmake on PATH that says it is 3.22.1: too old, not missing
        with open(f"{tmp}/old/cmake", "w") as f:
            f.write("#!/bin/sh\necho 'cmake version 3.22.1'\n")
        os.chmod(f"{tmp}/old/cmake", 0o755)
        never, old = f"{tmp}/never-built", {"PATH": f"{tmp}/old:{os.environ['PATH']}"}
        for program, args, want, pattern, reject, env in ((*row, None, None)[:6] for row in rows):
            done = subprocess.run(command(program, args), capture_output=True, text=True, cwd=ROOT, timeout=300,
                                  env={**os.environ, "LADDER_NO_INSTALL": "1", "BUILD_DIR": never,  # a hang: a traceback
                                       "LADDER_CWD": str(ROOT), **(old if env == "old-cmake" else env or {})})
            out = done.stdout + done.stderr
            wrong = [f"exit {done.returncode}, not {want}"] if done.returncode not in (want if isinstance(
                want, tuple) else (want,)) else []
            wrong += [f"no match for {pattern!r}"] if not re.search(pattern, out, re.S | re.M) else []
            wrong += [f"a match for {reject!r}"] if reject and re.search(reject, out, re.S | re.M) else []
            wrong += ["it configured or built before it refused its arguments"] if os.path.exists(never) else []
            wrong += ["not one line"] if want == 2 and program in STAGES and "\n" in out.strip() else []
            problems += [f"{program} {args}: {'; '.join(wrong)}\n{out[-1500:]}"] if wrong else []
    return verdict("cli", problems, f"{len(rows)} command lines as expected")

if __name__ == "__main__":
    sys.exit(main())
