#!/usr/bin/env python3
"""Tests of the runner behind ./ladder (scripts/ladder.py, scripts/runner/), each a CTest test runner.<name>:

  test_runner describe [P..]  each program's (or only P's) --describe is what the build kept, and is true: every
                              option's default, range ends and listed values are accepted by the program and the
                              values just outside a range refused; ./ladder refuses a bad stage option in the
                              program's own words
  test_runner stage_roles     the roles read from --describe are consistent (one combine stage, defaults first) and
                              no runner module names a stage
  test_runner test_command    ./ladder test: ctest's listing and the skipped tests' reasons, both on stdout
  test_runner presets         every build preset sets a job count; the debug preset adds no device flags
  test_runner arguments       try builds no copy twice and none for the file's own value, takes an option given
                              twice as two values; test passes -- and its options on to ctest; diff takes two stages
                              of one kind
  test_runner docs_unchanged  the docs builder, run on a copy of the tree, says "unchanged" for the pages it leaves as
                              they are (all of them, since docs_check holds them current)
  test_runner gpu_slots       the test gpu_slots_in_force passes with a GPU slot and fails without one (a ctest that
                              ignored the build's spec file, planted)
  test_runner why_failed      ./ladder try's line for a failed GPU check: the first that says why, whoever printed it
  test_runner ncu_units       the profile's reader takes ncu's raw page in base units and refuses a time in
                              microseconds or bytes in megabytes (what ncu prints unless asked for base units)
(python3 -m tests.test_runner CASE, from the repository's root.)
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

from scripts import ladder
from scripts.runner import own, stages, tries
from scripts.runner.reader import diff_pair
from scripts.runner.stages import UsageProblem

ROOT = stages.ROOT


def programs():
    return [*stages.ladder_stages(), stages.CPU]


def accepts(program, option, value):
    """The program's own verdict on one value (--describe after it: it checks, runs nothing, needs no GPU)."""
    args = [option] if value is None else [option, value]
    return subprocess.run([stages.binary(stages.build_dir(), program), *args, "--describe"],
                          capture_output=True).returncode == 0


def edge_cases(o):
    """(value, whether the program must accept it) for one described option."""
    if o["kind"] == "flag":
        return [(None, True)]
    cases = [(o["default"], True)] if o["default"] else []
    cases += [(v, True) for v in o.get("values", [])]
    if "max" in o:
        cases += [(str(o["min"]), True), (str(o["max"]), True), (str(o["max"] + 1), False)]
        cases += [(str(o["min"] - 1), False)] if o["min"] > 0 else [("-1", False)]
    if o.get("values"):
        cases.append(("not-a-value", False))
    return cases


def describe(*only):
    problems, checked = [], 0
    for program in only or programs():
        live = subprocess.run([stages.binary(stages.build_dir(), program), "--describe"], capture_output=True,
                              text=True, check=True).stdout
        if json.loads(live) != stages.describe(program):
            problems.append(f"{program}: the build's describe/{program}.json is not what --describe prints now")
        for o in stages.describe(program)["options"]:
            for value, ok in edge_cases(o):
                checked += 1
                if accepts(program, o["flags"][-1], value) != ok:
                    problems.append(f"{program} {o['flags'][-1]} {value}: --describe says it is "
                                    f"{'accepted' if ok else 'refused'}, the program does not agree")
    with tempfile.TemporaryDirectory() as tmp:  # ./ladder's error is the program's own line, before anything runs
        proc = subprocess.run([sys.executable, "-m", "scripts.ladder", "run", "--build", str(stages.build_dir()),
                               "--save", tmp, "-n", "0"], capture_output=True, text=True, cwd=ROOT)
    checked += 1
    want = "ladder: error: -n/--size 0 is out of range: sizes run from 1 to 2^36"
    if proc.returncode != 2 or want not in proc.stderr or "[1/" in proc.stderr:
        problems.append(f"./ladder run -n 0: exit {proc.returncode}, {proc.stderr.strip()!r}; want exit 2 and "
                        f"'{want}' before any stage runs")
    return problems, checked


def stage_roles():
    problems = []
    several = [s for s in stages.reduce_stages() if len(stages.combines(s)) > 1]
    if several != [stages.combine_stage()]:
        problems.append(f"the stages with several combines are {several}: one combine stage is expected")
    for s in stages.reduce_stages():
        if stages.option(s, "--combine")["default"] != stages.combines(s)[0]:
            problems.append(f"{s}: its default combine is not the first it lists")
        if stages.option(s, "--regime")["default"] != stages.regimes(s)[0]:
            problems.append(f"{s}: its default regime is not the first it lists")
    # The stages with a role (the ones without a stream regime, the one with the combines) are found, never named.
    roles = [s for s in stages.reduce_stages() if not stages.has_stream(s)] + [stages.combine_stage()]
    sources = sorted((ROOT / "scripts" / "runner").glob("*.py"))
    for path in sources:
        for stage in roles:
            if stage in path.read_text():
                problems.append(f"{path.relative_to(ROOT)} names {stage}: what a stage is comes from its --describe")
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
        proc = subprocess.run([sys.executable, "-m", "scripts.ladder", "test", "--build", str(build)],
                              capture_output=True, text=True, cwd=ROOT)
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
        proc = subprocess.run([sys.executable, "-m", "scripts.make_docs"], capture_output=True, text=True, cwd=copy)
    lines = proc.stderr.splitlines()
    unchanged = [line for line in lines if line.startswith("unchanged ")]
    problems = [f"{line}: the page was current" for line in lines if line.startswith("wrote ")]
    if proc.returncode != 0 or not unchanged:
        problems.append(f"./ladder docs exited {proc.returncode}:\n{proc.stderr}")
    return problems, len(unchanged)


def parsed(argv):
    """What ./ladder's own parse makes of argv; None where it refused it (and said why)."""
    try:
        return ladder.parse(argv, *ladder.build_parser())
    except SystemExit:
        return None


def arguments():
    problems, checked = [], 0
    stage = next(s for s in stages.reduce_stages() if stages.constants(s))  # a stage with a constant to vary
    name, own = next(iter(stages.constants(stage).items()))
    others = [v for v in ("1", "2", "8") if v != own]
    for spec, want in [(f"{name}={others[0]},{others[1]},{own}", others[:2]), (f"{name}={others[0]},{others[0]}",
                                                                               others[:1])]:
        got = tries.parse_change(stage, spec).values
        checked += 1
        if got != want:
            problems.append(f"try {stage} {spec}: copies for {got}, not {want}")
    try:
        tries.parse_change(stage, f"{name}={own},{own}")
        problems.append(f"try {stage} {name}={own}: the file's own value alone was accepted")
    except UsageProblem:
        checked += 1
    with tempfile.TemporaryDirectory() as tmp:
        a = parsed(["try", "--build", tmp, stage, "--grid=64", "--grid=128"])
        checked += 1
        if a is None or a.change != "--grid=64,128":
            problems.append(f"try {stage} --grid=64 --grid=128: read as {a and a.change}")
        a = parsed(["test", "--build", tmp, "--output-on-failure", "-R", "x", "--", "--schedule-random", "-j1"])
        checked += 1
        if a is None or a.ctest_args != ["-R", "x", "--schedule-random", "-j1"]:
            problems.append(f"test ... -- --schedule-random -j1: ctest gets {a and a.ctest_args}")
    reduce, gemm = stages.reduce_stages(), stages.gemm_stage()
    for pair, ok in [(reduce[:2], True), (reduce[1::-1], True), ((reduce[0], reduce[-1]), True),
                     ((reduce[-1], gemm), False), ((reduce[0], reduce[0]), False)]:
        checked += 1
        try:
            diff_pair(*pair)
            if not ok:
                problems.append(f"diff {pair}: accepted, though the two stages are not of one kind")
        except UsageProblem as e:
            if ok:
                problems.append(f"diff {pair}: refused ({e})")
    return problems, checked


def gpu_slots():
    """The test gpu_slots_in_force passes where CTest handed out a GPU slot and fails where it ignored the build's
    spec file (planted: its command run without the slot CTest would give it)."""
    listed = json.loads(subprocess.run(["ctest", "--show-only=json-v1", "-R", "^gpu_slots_in_force$"],
                                       cwd=stages.build_dir(), capture_output=True, text=True, check=True).stdout)
    if len(listed["tests"]) != 1:
        return ["the build registers no test gpu_slots_in_force"], 0
    command = listed["tests"][0]["command"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTEST_RESOURCE_GROUP")}
    given = subprocess.run(command, capture_output=True, env={**env, "CTEST_RESOURCE_GROUP_COUNT": "1"})
    ignored = subprocess.run(command, capture_output=True, text=True, env=env)
    problems = [] if given.returncode == 0 else [f"with a slot given it exits {given.returncode}"]
    if ignored.returncode == 0 or "no GPU slot" not in ignored.stderr:
        problems.append(f"without a slot it exits {ignored.returncode}, saying {ignored.stderr.strip()!r}")
    return problems, 2


def why_failed():
    """./ladder try's line for a failed GPU check is the first that says why, whoever printed it: the harness refusing
    the run (its own "program: FAIL: ..." line, which the report once missed), a check's FAIL line, the sanitizer's
    first report, an error, or else the last line printed; never "no FAIL line"."""
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
    problems = []
    for text, status, want in cases:
        got = own.why_failed(text, status)
        if not got.startswith(want):
            problems.append(f"why_failed for exit {status} gave {got!r}; want it to begin {want!r}")
    return problems, len(cases)


def ncu_units():
    from scripts.runner.profile import parse_ncu_raw, StageError
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


def main(argv):
    tests = {"describe": describe, "stage_roles": stage_roles, "test_command": test_command,
             "presets": presets, "docs_unchanged": docs_unchanged, "arguments": arguments,
             "gpu_slots": gpu_slots, "why_failed": why_failed, "ncu_units": ncu_units}
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
