#!/usr/bin/env python3
"""Tests of the runner behind ./ladder (scripts/ladder.py, scripts/runner/), each a CTest test runner.<name>:

  test_runner.py values_agree BIN_DIR   the runner's checks of sizes and try's options agree with the stage binaries'
  test_runner.py stage_roles            what a stage accepts is read from its file; no runner module names a stage
  test_runner.py test_command           ./ladder test: ctest's listing and the skipped tests' reasons, both on stdout
  test_runner.py presets                every build preset sets a job count; the debug preset adds no device flags
  test_runner.py arguments              try builds no copy twice and none for the file's own value, takes an option
                                        given twice as two values; test passes -- and its options on to ctest
  test_runner.py docs_unchanged         ./ladder docs, run on a copy of the tree, says "unchanged" for the pages it
                                        leaves as they are (all of them, since docs_check holds them current)
"""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from runner import stages, values  # noqa: E402
from runner.stages import UsageProblem  # noqa: E402

SIZES = ["1", "0", "2^28", "3*2^20", "1e6", "2^36", "2^37", "68719476737", "abc", "-5", "", "1.5", "2^10..2^12",
         "2^12..2^10", "3..9", "2^10..x", "1000,2^20", "1000,", "20000000000000000000", "2^63", "1e19", " 64"]
GEMM_DIMS = ["1", "0", "4096", "1000000", "1000001", "2^12", "4e3", "x", ""]
TRY_OPTIONS = {"02_grid_stride": {"--block": ["64", "96", "1024", "2048", "32", "x"],
                                  "--grid": ["0", "64", "2147483647", "2147483648", "-1", "x"],
                                  "--offset": ["0", "1024", "1025", "x"]},
               "07_multiblock": {"--combine": ["atomic", "two-pass", "last-block", "relaunch", "foo"]},
               "08_gemm_tiled": {"--tile": ["16", "32", "8"], "--pad": ["off", "on", "sideways"]}}


def stage_accepts(bin_dir, stage, option, value):
    """The stage binary's verdict: it parses every option before it looks for a GPU (exit 2 on a bad value)."""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "-1"}
    proc = subprocess.run([str(bin_dir / stage), option, value, "--list-devices"], capture_output=True, env=env)
    return proc.returncode != 2


def runner_accepts(check, value):
    try:
        check(value)
        return True
    except (argparse.ArgumentTypeError, UsageProblem):
        return False


def values_agree(bin_dir):
    bin_dir = pathlib.Path(bin_dir)
    cases = [("02_grid_stride", "-n", v, values.size_list) for v in SIZES]
    cases += [("08_gemm_tiled", "--size", v, values.gemm_dim) for v in GEMM_DIMS]
    for stage, options in TRY_OPTIONS.items():
        for option, vals in options.items():
            cases += [(stage, option, v, lambda x, s=stage, o=option: values.check_try_option(s, o, [x])) for v in vals]
    problems = [f"{stage} {option} '{v}': the stage {'accepts' if ok else 'refuses'} it, the runner does not agree"
                for stage, option, v, check in cases
                if (ok := stage_accepts(bin_dir, stage, option, v)) != runner_accepts(check, v)]
    # One size, where the runner takes one (run, try, probe): a list is refused, a single size as the stages do.
    problems += [f"values.size('{v}') accepted a list" for v in ("1000,2^20", "2^10..2^12") if runner_accepts(values.size, v)]
    return problems, len(cases)


def stage_roles():
    problems = []
    if stages.combine_stage() != "07_multiblock" or stages.combines("07_multiblock")[0] != "atomic":
        problems.append(f"the combine stage read as {stages.combine_stage()}, {stages.combines(stages.combine_stage())}")
    if stages.has_stream("01_naive") or not all(stages.has_stream(s) for s in stages.REDUCE[1:]):
        problems.append("01_naive alone runs only the tree regime")
    if stages.constants("06_float4") != {"kLoadsInFlight": "4"}:
        problems.append(f"06_float4's constants read as {stages.constants('06_float4')}")
    # The stages with a role (the one without a stream regime, the one with the combines) are found, never named.
    roles = [s for s in stages.REDUCE if not stages.has_stream(s)] + [stages.combine_stage()]
    sources = sorted((ROOT / "scripts" / "runner").glob("*.py"))  # (ladder.py's help may show examples)
    for path in sources:
        for stage in roles:
            if stage in path.read_text():
                problems.append(f"{path.relative_to(ROOT)} names {stage}: the stage list lives in CMakeLists.txt, "
                                "what a stage accepts in its file (scripts/runner/stages.py reads both)")
    return problems, len(sources)


MINI_PROJECT = """cmake_minimum_required(VERSION 3.24)
project(mini NONE)
enable_testing()
add_test(NAME passes COMMAND ${CMAKE_COMMAND} -E echo fine)
add_test(NAME skipped_one COMMAND ${CMAKE_COMMAND} -E echo "SKIPPED: a tool is missing here")
set_tests_properties(skipped_one PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED: ")
"""


def test_command():
    with tempfile.TemporaryDirectory() as tmp:
        src, build = pathlib.Path(tmp) / "src", pathlib.Path(tmp) / "build"
        src.mkdir()
        (src / "CMakeLists.txt").write_text(MINI_PROJECT)
        subprocess.run(["cmake", "-S", str(src), "-B", str(build)], check=True, capture_output=True)
        proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "ladder.py"), "test", "--build", str(build)],
                              capture_output=True, text=True)
    problems = []
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


def docs_unchanged():
    with tempfile.TemporaryDirectory() as tmp:
        copy = pathlib.Path(tmp) / "tree"
        shutil.copytree(ROOT, copy, ignore=lambda d, names: [n for n in names if n in (".git", "__pycache__") or
                                                             (pathlib.Path(d) == ROOT and n.startswith("build"))])
        proc = subprocess.run([str(copy / "ladder"), "docs"], capture_output=True, text=True)
    lines = proc.stderr.splitlines()
    unchanged = [line for line in lines if line.startswith("unchanged ")]
    problems = [f"{line}: the page was current" for line in lines if line.startswith("wrote ")]
    if proc.returncode != 0 or not unchanged:
        problems.append(f"./ladder docs exited {proc.returncode}:\n{proc.stderr}")
    return problems, len(unchanged)


def parsed(argv):
    """What ./ladder's own parse makes of argv; None where it refused it (and said why)."""
    import ladder  # scripts/ladder.py
    try:
        return ladder.parse(argv, *ladder.build_parser())
    except SystemExit:
        return None


def arguments():
    from runner import reader
    problems, checked = [], 0
    own = stages.constants("06_float4")["kLoadsInFlight"]
    for spec, want in [(f"kLoadsInFlight=1,2,{own},8", ["1", "2", "8"]), ("kLoadsInFlight=1,1,2", ["1", "2"])]:
        got = reader.parse_change("06_float4", spec).values
        checked += 1
        if got != want:
            problems.append(f"try 06 {spec}: copies for {got}, not {want}")
    try:
        reader.parse_change("06_float4", f"kLoadsInFlight={own},{own}")
        problems.append(f"try 06 kLoadsInFlight={own}: the file's own value alone was accepted")
    except UsageProblem:
        checked += 1
    with tempfile.TemporaryDirectory() as tmp:
        a = parsed(["try", "--build", tmp, "02", "--grid=64", "--grid=128"])
        checked += 1
        if a is None or a.change != "--grid=64,128":
            problems.append(f"try 02 --grid=64 --grid=128: read as {a and a.change}")
        a = parsed(["test", "--build", tmp, "--output-on-failure", "-R", "x", "--", "--schedule-random", "-j1"])
        checked += 1
        if a is None or a.ctest_args != ["-R", "x", "--schedule-random", "-j1"]:
            problems.append(f"test ... -- --schedule-random -j1: ctest gets {a and a.ctest_args}")
    for pair, ok in [(("04_warp_unroll", "05_shuffle"), True), (("05_shuffle", "04_warp_unroll"), False),
                     (("01_naive", "03_padding"), False), (("07_multiblock", "08_gemm_tiled"), False),
                     (("01_naive", "01_naive"), False)]:
        checked += 1
        try:
            reader.diff_pair(*pair)
            if not ok:
                problems.append(f"diff {pair}: accepted, though no page shows it")
        except UsageProblem as e:
            if ok:
                problems.append(f"diff {pair}: refused ({e})")
    return problems, checked


def main(argv):
    tests = {"values_agree": values_agree, "stage_roles": stage_roles, "test_command": test_command,
             "presets": presets, "docs_unchanged": docs_unchanged, "arguments": arguments}
    if len(argv) < 2 or argv[1] not in tests:
        print(__doc__, file=sys.stderr)
        return 2
    problems, checked = tests[argv[1]](*argv[2:])
    for p in problems:
        print(f"runner.{argv[1]}: {p}", file=sys.stderr)
    if not problems:
        print(f"runner.{argv[1]}: {checked} checked, all as expected")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
