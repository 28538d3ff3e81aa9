"""The command line of ./ladder: one argparse subcommand per command, each with its own options and help.

./ladder (the shell driver) calls this twice: first with --check, which parses the command line and checks what
needs no build (the command, its directories, the stage names, the change try makes, ncu for profile), then, after
the build, to run the command. The options passed on to the stage programs are theirs: each program checks them
(its --describe, after them) before anything runs, so ./ladder states none of their defaults or ranges. The work
itself lives in scripts/runner/ (see its __init__.py).
"""
import argparse
import os
import pathlib
import re
import signal
import sys
import tempfile

from .cli import HELP_SHOWN, OneLineParser, say
from .runner import measure, profile, reader, results, studies, tries
from .runner.stages import ROOT, NoGpu, StageError, UsageProblem, resolve_stage, use_build

DESCRIPTION = """\
cuda-ladder: a float sum reduction climbed one technique at a time, then a tiled SGEMM.

The two commands of the README:
  ./ladder run     build, then run every stage in order on the same input and print one comparison table
  ./ladder test    build, then run every test with CTest (without a GPU the GPU tests report skipped, with why)

./ladder COMMAND --help gives the options of each command. Results go to stdout; progress, build output and
errors to stderr."""

ENVIRONMENT = """\
environment:
  LADDER_NO_INSTALL=1  install nothing (otherwise missing Debian/Ubuntu packages are installed with apt-get, the
                       command printed first, when running as root or with password-less sudo)
  BUILD_DIR=DIR        the build directory (default build; --build DIR also sets it, for any command)
  CUDAARCHS=XY         the GPUs to build for, compute capability X.Y (default: the GPU in the machine, or 7.5,
                       8.0 and 9.0 without one)
  LADDER_CMAKE_ARGS    more arguments for CMake's configure step

exit status: 0 pass, 1 a check failed, 2 usage or runtime error, 77 no usable GPU"""

COMMANDS = {
    "run": "build, then run every stage in order on the same input and print one comparison table",
    "test": "build, then run every test with CTest; the skipped tests are listed with the reason",
    "build": "configure and build the stages and the test helpers, and run nothing",
    "diff": "the code stage B changes in stage A (adjacent stages are what each page in docs/stages/ shows)",
    "try": "a stage with a constant, an option or an experiment's patch changed, beside the stage as it is; or your "
           "own version of the stage file, through the stage's checks",
    "docs": "render docs/ from docs/templates/ and docs/results/ (--check compares)",
    "measure": "everything the docs are built from, written to docs/results/ (needs a GPU)",
    "profile": "Nsight Compute counters of every stage, the SASS the pages quote, racecheck (needs ncu)",
    "mutants": "every planted bug of scripts/mutants.py, run as its test runs it, with what the stage printed",
    "sweep": "GB/s against n for every stage with a stream regime, and CUB",
    "probe": "GB/s against the block size, 64 to 1024, for every reduce stage",
}
EXAMPLES = {
    "run": "./ladder run\n  ./ladder run -n 2^24 --reps 20 --no-gemm",
    "test": "./ladder test\n  ./ladder test -L cpu\n  ./ladder test -R '^cli\\.' -V --output-on-failure\n"
            "  ./ladder test -- --schedule-random      (everything after -- goes to ctest as it is)",
    "build": "./ladder build\n  ./ladder build --build /tmp/ladder-build",
    "diff": "./ladder diff 04 05\n  ./ladder diff 01 06      (any two stages of one kind)",
    "try": "./ladder try 06 kLoadsInFlight=1,2,4,8\n  ./ladder try 02 --grid=64,128,256\n"
           "  ./ladder try 01 docs/experiments/01_naive/interleaved.patch\n"
           "  ./ladder try 05 mine.cu            (your version of 05_shuffle/reduce.cu, through its checks)",
    "sweep": "./ladder sweep --sweep 2^20..2^28",
    "probe": "./ladder probe --regime tree",
    "measure": "./ladder measure                    (writes docs/results/; then ./ladder docs)\n"
               "  ./ladder measure --save /tmp/results --reps 20",
    "profile": "./ladder profile\n  ./ladder profile --profile-size 2^22 --save /tmp/profile",
    "mutants": "./ladder mutants\n  ./ladder mutants --save /tmp/mutants",
}
# The studies' own sizes (the stages' defaults are theirs: each program's --help and --describe say them).
PROFILE_SIZE, PROFILE_GEMM, SWEEP = "2^24", "2048", "2^10..2^30"


def writable_directory(option, path):
    """A directory option (--build, --save) is proven usable before anything is installed, built or run: a directory
    that exists must be one, and a probe directory must be makeable (and is removed again) in it or, for one still
    to be made, in its nearest existing parent; UsageProblem in one line otherwise. Nothing is left behind."""
    p = pathlib.Path(path).absolute()
    if p.exists() and not p.is_dir():
        raise UsageProblem(f"{option} {path}: that is a file, not a directory")
    base = p
    while not base.exists():
        base = base.parent
    if not base.is_dir():
        raise UsageProblem(f"{option} {path}: {base} is a file, so the directory cannot be made")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".ladder-probe-", dir=base))
    except OSError as e:
        what = "is not writable" if base == p else f"cannot be made in {base} ({e.strerror})"
        raise UsageProblem(f"{option} {path}: the directory {what}") from None


def whole(lo, hi):
    """An argparse type for ./ladder's own counts (ctest's -j and --timeout)."""
    def parse(text):
        if not text.strip().isdigit() or not lo <= int(text) <= hi:
            raise argparse.ArgumentTypeError(f"'{text}' is not a whole number from {lo} to {hi}")
        return int(text)
    return parse


def repeat(text):
    """An argparse type: ctest's --repeat MODE:N."""
    if not re.fullmatch(r"(until-fail|until-pass|after-timeout):[1-9]\d*", text):
        raise argparse.ArgumentTypeError(f"'{text}' is not until-fail:N, until-pass:N or after-timeout:N")
    return text


def parents():
    """The option groups several commands share, as argparse parent parsers."""
    def group(build):
        p = argparse.ArgumentParser(add_help=False)
        build(p)
        return p

    def build_dir(p):
        p.add_argument("--build", metavar="DIR", type=pathlib.Path, default=ROOT / "build",
                       help="the build directory (default: build)")

    def size(p):
        p.add_argument("-n", "--size", metavar="N", help="floats to sum, as the stages take -n (2^28, 1e6, ...)")

    def timing(p):
        t = p.add_argument_group("timing and input (passed to every stage, which checks them: see its --help)")
        t.add_argument("--reps", metavar="N", help="timed repetitions; the median is reported")
        t.add_argument("--warmup", metavar="N", help="untimed runs before timing")
        t.add_argument("--seed", metavar="S", help="input seed: the same seed gives bitwise the same input everywhere")
        t.add_argument("--input", metavar="MODE", help="the input that is timed: float or exact")
        t.add_argument("--flush", metavar="MODE", help="what evicts the input from L2 before each repetition")
        t.add_argument("--device", metavar="I", help="CUDA device index")

    def gemm(p):
        g = p.add_argument_group("the GEMM rung")
        g.add_argument("--gemm-size", metavar="M", help="M = N = K of the GEMM (its --size)")
        g.add_argument("--gemm-reps", metavar="N", help="timed repetitions of the GEMM (its --reps)")

    def saving(p):
        p.add_argument("--save", metavar="DIR", help="directory for the result files (default: <build>/results)")
        p.add_argument("--save-format", choices=["csv", "json"], default="csv",
                       help="format of the result files (default: csv)")

    def profiling(p):
        g = p.add_argument_group("the profiler's runs")
        g.add_argument("--profile-size", metavar="N", default=PROFILE_SIZE,
                       help=f"n of the profiled reduce runs (default: {PROFILE_SIZE})")
        g.add_argument("--profile-gemm", metavar="M", default=PROFILE_GEMM,
                       help=f"M = N = K of the profiled GEMM (default: {PROFILE_GEMM})")

    def sweep(p):
        p.add_argument("--sweep", metavar="SIZES", default=SWEEP,
                       help=f"the sizes: a list (1000,2^20) or a range of powers of two (default: {SWEEP})")

    return {name: group(f) for name, f in [("build", build_dir), ("size", size), ("timing", timing), ("gemm", gemm),
                                            ("save", saving), ("profile", profiling), ("sweep", sweep)]}


# ctest's options that ./ladder test passes on, in the order it passes them.
TEST_OPTIONS = [
    ("-R", dict(metavar="REGEX", help="run only the tests whose names match REGEX")),
    ("-E", dict(metavar="REGEX", help="leave out the tests whose names match REGEX")),
    ("-L", dict(metavar="LABEL", help="run only the tests labelled LABEL: cpu, gpu, sanitizer, mutant, profiler")),
    ("-LE", dict(metavar="LABEL", help="leave out the tests labelled LABEL")),
    ("--timeout", dict(metavar="SECONDS", type=whole(1, 86400), help="a time limit for every test")),
    ("--repeat", dict(metavar="MODE:N", type=repeat, help="until-fail:N, until-pass:N or after-timeout:N, as ctest takes it")),
    ("-V", dict(action="store_true", help="print every test's output")),
    ("-VV", dict(action="store_true", help="print every test's output and ctest's own steps")),
    ("-N", dict(action="store_true", help="list the tests, run none")),
    ("--stop-on-failure", dict(action="store_true", help="stop at the first failure")),
    ("--rerun-failed", dict(action="store_true", help="run only the tests that failed last time")),
]
# ./ladder test passes what follows -- to ctest as it is, after the options above.
TEST_PASSTHROUGH = "--"
SHARED = {"run": ["build", "size", "timing", "gemm", "save"], "test": ["build"], "build": ["build"], "diff": [],
          "try": ["build", "size", "timing", "gemm", "save"], "docs": [],
          "measure": ["build", "size", "timing", "gemm", "profile", "sweep"], "profile": ["build", "profile", "save"],
          "mutants": ["build", "save"], "sweep": ["build", "timing", "sweep", "save"],
          "probe": ["build", "size", "timing", "save"]}


def add_command_options(parsers):
    parsers["run"].add_argument("--no-gemm", action="store_true", help="leave out the GEMM rung")
    for flag, kwargs in TEST_OPTIONS:
        parsers["test"].add_argument(flag, dest=flag.lstrip("-").replace("-", "_"), **kwargs)
    parsers["test"].add_argument("--output-on-failure", action="store_true",  # accepted; cmd_test passes it always
                                 help="print a failed test's output (./ladder test always does)")
    parsers["test"].add_argument("-j", "--parallel", metavar="N", type=whole(1, 1024),
                                 default=os.cpu_count() or 2, help="tests run at once (default: the CPU count)")
    parsers["diff"].add_argument("before", metavar="A", help="a stage: 04 or 04_warp_unroll")
    parsers["diff"].add_argument("after", metavar="B", help="another stage of the same kind: 05 or 05_shuffle")
    parsers["try"].usage = "./ladder try [options] STAGE CHANGE"
    parsers["try"].add_argument("stage", metavar="STAGE", help="the stage: 06 or 06_float4")
    parsers["try"].add_argument("change", metavar="CHANGE", nargs="?", help=(
        "NAME=v1,v2,... a constant of the stage file (kLoadsInFlight=1,2,4,8); --option=v1,v2,... a stage option "
        "(--grid=64,128, --block=128,256); path/to/experiment.patch (docs/experiments/<stage>/), applied with git "
        "apply to a copy; or path/to/mine.cu, your own version of the stage file, built as a copy and put through "
        "the stage's checks (exit 0: passed everything; 1: a check failed; 77: passed what could run without a GPU)"))
    parsers["measure"].add_argument("--save", metavar="DIR", help="directory for the result files "
                                                                  "(default: docs/results)")
    parsers["measure"].add_argument("--part", metavar="LIST", help="only these parts, each writing its own files: "
                                    f"{', '.join(measure.PARTS)} (default: all)")
    parsers["measure"].set_defaults(ncu_check=None, save_format="csv")
    parsers["profile"].add_argument("--ncu-check", metavar="STAGE", help="check that one stage's profile row is "
                                    "complete (the test profile_metrics), save nothing")
    parsers["probe"].add_argument("--regime", choices=["stream", "tree"], default="stream",
                                  help="the regime (default: stream)")


def build_parser():
    p = OneLineParser(prog="./ladder", description=DESCRIPTION, epilog=ENVIRONMENT, allow_abbrev=False,
                      formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", title="commands", parser_class=OneLineParser)
    g = parents()
    parsers = {}
    for name, text in COMMANDS.items():
        parsers[name] = sub.add_parser(name, help=text, description=text, parents=[g[x] for x in SHARED[name]],
                                       allow_abbrev=False, add_help=name != "docs",
                                       epilog=f"examples:\n  {EXAMPLES[name]}" if name in EXAMPLES else None,
                                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_command_options(parsers)
    return p, parsers


def take_try_change(a, extras, parser):
    """try's CHANGE may look like an option (--grid=64,128), which argparse leaves among the unknown arguments."""
    if a.change is None and extras and extras[0].startswith("--"):
        option = extras.pop(0)
        if "=" not in option:
            raise UsageProblem(f"try {a.stage} {option}: write a stage option to vary as "
                               f"{option}={extras[0] if extras else 'v1,v2'}")
        a.change = option
    elif extras and extras[0].startswith("--") and "=" not in extras[0] and a.change and "=" not in a.change:
        raise UsageProblem(f"try {a.stage} {extras[0]} {a.change}: write a stage option to vary as "
                           f"{extras[0]}={a.change}")
    if a.change is None:
        parser.error("try takes a stage and a change, e.g. ./ladder try 06 kLoadsInFlight=1,2,4,8")
    # The same option again is more values of it: --grid=64 --grid=128 is --grid=64,128.
    name = a.change.split("=", 1)[0] + "="
    while extras and extras[0].startswith(name):  # an option or a constant
        a.change += "," + extras.pop(0)[len(name):]


def check(a):
    """What ./ladder checks before it installs or builds anything, beyond what argparse checked: what needs no build.
    The stage programs check their own options after the build (run_checks)."""
    for option in ("build", "save"):
        if getattr(a, option, None):
            writable_directory(f"--{option}", getattr(a, option))
    if a.command == "try":
        tries.parse_change(resolve_stage(a.stage), a.change)
    elif a.command == "diff":
        reader.diff_pair(resolve_stage(a.before), resolve_stage(a.after))
    elif a.command == "profile":
        if a.ncu_check:
            resolve_stage(a.ncu_check)
        if not profile.find_ncu():
            raise UsageProblem("profile needs ncu (Nsight Compute), which is neither on PATH nor in /usr/local/cuda/bin: "
                               "install Nsight Compute or put its directory on PATH")


def prepare(a):
    """Defaults that depend on other values."""
    results.SAVE_FORMAT = getattr(a, "save_format", "csv")
    if getattr(a, "save", None) and not os.path.isabs(a.save):  # relative to where ./ladder was called from
        a.save = os.path.join(os.environ.get("LADDER_CWD", "."), a.save)
    if a.command not in ("measure",) and hasattr(a, "save") and not a.save:
        a.save = str(a.build / "results")
    if a.command == "test":
        a.ctest_args = []
        for flag, kwargs in TEST_OPTIONS:
            value = getattr(a, flag.lstrip("-").replace("-", "_"))
            if value:
                a.ctest_args += [flag] if value is True else [flag, str(value)]
        a.ctest_args += a.ctest_passthrough


RUN = {"run": reader.cmd_run, "test": reader.cmd_test, "diff": reader.cmd_diff, "try": reader.cmd_try,
       "measure": measure.cmd_measure, "profile": profile.cmd_profile, "mutants": studies.cmd_mutants,
       "sweep": studies.cmd_sweep, "probe": studies.cmd_probe, "build": lambda a: 0}


def parse(argv, parser, parsers):
    """argv's options as the command reads them (prepare() included); argparse exits on an error."""
    passthrough = []
    if argv[:1] == ["test"] and TEST_PASSTHROUGH in argv:
        cut = argv.index(TEST_PASSTHROUGH)
        argv, passthrough = argv[:cut], argv[cut + 1:]
    a, extras = parser.parse_known_args(argv)
    a.ctest_passthrough = passthrough
    if a.command is None:
        parser.error("give a command, e.g. ./ladder run")
    if a.command == "docs":
        raise UsageProblem("docs is run by ./ladder itself (scripts/make_docs.py)")
    if a.command == "try":
        take_try_change(a, extras, parsers["try"])
    if extras:
        parsers[a.command].error(f"unrecognized arguments: {' '.join(extras)}")
    prepare(a)
    return a


def main(argv):
    checking = argv[:1] == ["--check"]
    argv = argv[1:] if checking else argv
    parser, parsers = build_parser()
    if not argv:
        say(parser.format_help())
        say("ladder: error: give a command, e.g. ./ladder run")
        return 2
    if argv[0] == "help":  # ./ladder help [COMMAND]
        argv = [*[c for c in argv[1:2] if c != "help"], "--help"]
    if not argv[0].startswith("-") and argv[0] not in COMMANDS:
        say(f"ladder: error: unknown command '{argv[0]}' ({', '.join(COMMANDS)}; see ./ladder --help)")
        return 2
    try:
        a = parse(argv, parser, parsers)
        check(a)
        if checking:
            return 0
        if hasattr(a, "build"):
            use_build(a.build)
        reader.check_stage_options(a)
        return RUN[a.command](a)
    except SystemExit as e:  # argparse printed the help (0) or an error (2)
        return HELP_SHOWN if checking and e.code == 0 else e.code
    except NoGpu as e:
        say(str(e))
        say("ladder: no usable GPU, so nothing was run or timed (exit 77); ./ladder test runs the tests that "
            "need none, and docs/index.md has the measured results")
        return 77
    except (StageError, UsageProblem) as e:
        say(f"ladder: error: {e}")
        return 2


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # ./ladder diff 04 05 | head ends quietly, as diff itself would
    sys.exit(main(sys.argv[1:]))
