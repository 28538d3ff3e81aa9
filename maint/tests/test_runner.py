"""Tests of the runner behind ./ladder (scripts/): the stage roles read from the programs, ./ladder test (ctest's
listing and skip reasons on stdout), the presets, the arguments try and test accept (check_cli.py has the refused
ones), try's line for a failed GPU check, a report after a kernel's printf, and the profile's reading of ncu's units.
python3 -m maint.tests.test_runner [CASE...]"""
import json
import pathlib
import random
import statistics
import subprocess
import sys
import tempfile

import maint
from scripts import ladder, stages, tries
from scripts.stages import ROOT, StageError, UsageProblem

MINI_PROJECT = """cmake_minimum_required(VERSION 3.24)
project(mini NONE)
enable_testing()
add_test(NAME passes COMMAND ${CMAKE_COMMAND} -E echo fine)
add_test(NAME skipped_one COMMAND ${CMAKE_COMMAND} -E echo "SKIPPED: a tool is missing here")
set_tests_properties(skipped_one PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED: ")
"""

def stage_roles():
    problems = []
    several = [s for s in stages.reduce_stages() if len(stages.combines(s)) > 1]
    if several != [stages.combine_stage()]:
        problems.append(f"the stages with several combines are {several}: one combine stage is expected")
    for s in stages.reduce_stages():
        values = stages.describe(s)["values"]
        if values["combines"] != stages.combines(s)[:1] or values["regimes"] != stages.regimes(s)[:1]:
            problems.append(f"{s}: its default combine or regime is not the first it lists")
    # The stages with a role (the ones without a stream regime, the one with the combines) are found, never named.
    roles = [s for s in stages.reduce_stages() if not maint.has_stream(s)] + [stages.combine_stage()]
    sources = [p for p in sorted((ROOT / "scripts").glob("*.py")) if p.name != "ladder.py"]  # its help has examples
    problems += [f"{path.relative_to(ROOT)} names {stage}: what a stage is comes from its --describe"
                 for path in sources for stage in roles if stage in path.read_text()]
    return problems, len(sources)

def test_command():
    with tempfile.TemporaryDirectory() as tmp:
        src, build = pathlib.Path(tmp) / "src", pathlib.Path(tmp) / "build"
        src.mkdir()
        (src / "CMakeLists.txt").write_text(MINI_PROJECT)
        subprocess.run(["cmake", "-S", str(src), "-B", str(build)], check=True, capture_output=True)
        proc, none = (subprocess.run([sys.executable, "-m", "scripts.ladder", "test", "--build", str(build), *regex],
                                     capture_output=True, text=True, cwd=ROOT) for regex in ([], ["-R", "["]))
    problems = [] if none.returncode == 1 else [f"./ladder test -R '[' (no test matches) exited {none.returncode}, not 1"]
    if proc.returncode != 0:
        problems.append(f"exit status {proc.returncode}")
    if "1 tests skipped" not in proc.stdout or "because a tool is missing here: skipped_one" not in proc.stdout:
        problems.append("the skipped test and its reason are not on stdout")
    if "Passed" not in proc.stdout or "a tool is missing" in proc.stderr:
        problems.append("ctest's listing and the reasons are not on the same stream")
    if "Internal ctest changing into directory" in proc.stdout + proc.stderr:
        problems.append("ctest is not run in the build directory")
    return [f"{p}:\n--- stdout\n{proc.stdout}--- stderr\n{proc.stderr}" for p in problems[:1]] + problems[1:], 1

def presets():
    data = json.loads((ROOT / "CMakePresets.json").read_text())
    problems = [f"build preset {p['name']} sets no job count" for p in data["buildPresets"] if not p.get("jobs")]
    debug = next(p for p in data["configurePresets"] if p["name"] == "debug")
    if any(k.startswith("CMAKE_CUDA_FLAGS") for k in debug["cacheVariables"]):
        problems.append("the debug preset sets CUDA flags: -G comes from cmake/Ladder.cmake, for every Debug build")
    return problems, len(data["buildPresets"])

def parsed(argv):
    """What ./ladder's own parse makes of argv; None where it refused it (and said why)."""
    try:
        return ladder.parse(argv)
    except (SystemExit, UsageProblem):
        return None

def arguments():
    problems = []
    stage = next(s for s in stages.reduce_stages() if stages.constants(s))  # a stage with a constant to vary
    name, own = next(iter(stages.constants(stage).items()))
    others = [v for v in ("1", "2", "8") if v != own]
    for spec, want in [(f"{name}={others[0]},{others[1]},{own}", others[:2]), (f"{name}=0{others[0]},{others[0]}",
                                                                               others[:1])]:  # 01 is 1, in decimal
        if (got := tries.parse_change(stage, spec).values) != want:
            problems.append(f"try {stage} {spec}: copies for {got}, not {want}")
    with tempfile.TemporaryDirectory() as tmp:
        a = parsed(["try", "--build", tmp, stage, "--grid=64", "--grid=128"])
        if a is None or a.change != "--grid=64,128":
            problems.append(f"try {stage} --grid=64 --grid=128: read as {a and a.change}")
        a = parsed(["test", "--build", tmp, "-R", "x", "--", "--schedule-random", "-j1"])
        if a is None or a.ctest_args != ["-R", "x", "--schedule-random", "-j1"]:
            problems.append(f"test ... -- --schedule-random -j1: ctest gets {a and a.ctest_args}")
    row = {"variant": "as in the file", "tile": "16", "pad": "false", "check": "PASS", "ms_median": "2", "gflops": "1",
           "pct_cublas": "1"}  # try 08 --pad=on: a padded variant against the file's unpadded rows
    if tries.try_lines([row, {**row, "variant": "--pad on", "pad": "true", "ms_median": "1"}], True)[1][1][-1] != "2.00":
        problems.append("try's table does not set a padded variant against the file's unpadded run")
    return problems, 5

def why_failed():
    """./ladder try's line for a failed GPU check is the first that says why: the harness's "program: FAIL: ..." line,
    a check's FAIL line, the sanitizer's first report, an error, or else the last line; never "no FAIL line"."""
    refused = ("try_07_own: n = 1024, block 256: checking\ntry_07_own: FAIL: n = 1024, block 256, stream regime, atomic: "
               "the stage launched 0 kernels whose first argument is the input")
    cases = [(refused, 1, "FAIL: n = 1024, block 256, stream regime, atomic: the stage launched 0 kernels"),
             ("   n  regime\n  FAIL n = 4097, block 512: canary: the result (*out)[1] holds 0", 1,
              "FAIL n = 4097, block 512: canary"),
             ("========= Invalid __global__ read of size 4 bytes\n=========     at reduce_kernel", 99,
              "compute-sanitizer: Invalid __global__ read of size 4 bytes"),
             ("try_02_own: error: out of host memory", 2, "error: out of host memory"),
             ("checking\nterminate called after throwing an instance of 'std::logic_error'", 134,
              "exit status 134: terminate called after throwing an instance of 'std::logic_error'")]
    return [f"why_failed for exit {status} gave {got!r}; want it to begin {want!r}" for text, status, want in cases
            if not (got := tries.why_failed(text, status)).startswith(want)], len(cases)

def printf():  # a kernel's printf output reaches stdout before the report (here printf(1) prints both): still read
    rows = stages.run_binary("x", ['n = 5 [1] n = 5 [\n  {"check": "PASS"}\n]\n'], exe="printf")[0]  # or raises
    return ([] if rows == [{"check": "PASS"}] else [f"the report was read as {rows}"]), 1

def ncu_units():
    from maint.measure import parse_ncu_raw
    def page(time_unit, byte_unit):
        return ('"ID","Kernel Name","gpu__time_duration.sum","dram__bytes_read.sum"\n'
                f'"","","{time_unit}","{byte_unit}"\n"0","reduce_kernel","31008","67122176"\n')
    problems = []
    rows = parse_ncu_raw(page("nsecond", "byte"))
    if [r["gpu__time_duration.sum"] for r in rows] != ["31008"]:
        problems.append(f"a page in base units was read as {rows}")
    for units in (("usecond", "byte"), ("nsecond", "Mbyte"), ("msecond", "Gbyte")):
        try:
            parse_ncu_raw(page(*units))
            problems.append(f"a page in {units} was read without a word")
        except StageError:
            pass
    return problems, 4

def study_centring():
    """The error study's centring test passes centred errors, fails them 0.3 sigma to one side (as rounding toward zero
    leans), and counts once each of 100 results of mean 0.3 sigma that 40 launches repeat."""
    from maint.measure import common_constant, leans, study_sigmas
    rng, lam = random.Random(1), common_constant("kSumLambda")
    fair = [rng.gauss(0, 1) for _ in range(4000)]
    few = [z - statistics.fmean(fair[:100]) + 0.3 for z in fair[:100]]
    rows = [{"stage": "s", "seed": i, "offset": 0, "n": 1, "abs_error": 1, "error_sigmas": z,
             "error_bound_ratio": abs(z) / lam} for i, z in enumerate(few) for _ in range(40)]
    found = {"centred errors failed": leans(fair), "leaning errors passed": not leans([z - 0.3 for z in fair]),
             "repeated results counted each time": leans(study_sigmas(rows, "s")),
             "the repeats' mean not seen": not leans([r["error_sigmas"] for r in rows])}
    return [what for what, wrong in found.items() if wrong], 4

def main(argv):
    cases = {f.__name__: f for f in (stage_roles, test_command, presets, arguments, why_failed, printf, ncu_units,
                                     study_centring)}
    failed = 0
    for name in argv or cases:
        problems, checked = cases[name]()
        failed += bool(problems)
        print("\n".join(f"runner.{name}: {p}" for p in problems) or f"runner.{name}: {checked} checked, all as expected")
    return 1 if failed else 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
