"""The command line of ./ladder: one argparse subcommand per command, each with its own options and help. Every value
./ladder can check is checked before anything is installed or built; the options passed on to the stage programs are
theirs, and each program checks them before anything runs, so ./ladder states none of their defaults or ranges."""
import argparse
import os
import pathlib
import re
import signal
import sys
import tempfile

from . import build, run, tries
from .stages import CALLER, ROOT, NoGpu, StageError, UsageProblem, git_commit, resolve_stage, say

DESCRIPTION = """\
cuda-ladder: a float sum reduction climbed one technique at a time, then a tiled SGEMM.

./ladder COMMAND --help gives the options of each command. Results go to stdout; progress, build output and
errors to stderr. The maintainers' tools (measure, profile, docs, their tests) are ./maint/do's."""

ENVIRONMENT = """\
environment:
  LADDER_NO_INSTALL=1  install nothing (otherwise missing Debian/Ubuntu packages are installed with apt-get, the
                       command printed first, when running as root or with password-less sudo)
  BUILD_DIR=DIR        the build directory (default build; --build DIR also sets it, for any command)
  CUDAARCHS=XY         the GPUs to build for, compute capability X.Y (default: the GPU in the machine, or 7.5,
                       8.0 and 9.0 without one)
  LADDER_CMAKE_ARGS    more arguments for CMake's configure step

exit status: 0 pass, 1 a check failed, 2 usage or runtime error, 77 no usable GPU"""

COMMANDS = {  # name: (what it does, examples)
    "run": ("build, then run every stage in order on the same input and print one comparison table",
            "./ladder run\n  ./ladder run -n 2^24 --reps 20 --no-gemm"),
    "test": ("build, then run every test with CTest (without a GPU the GPU tests report skipped, with why)",
             "./ladder test\n  ./ladder test -L cpu\n  ./ladder test -R '^05_shuffle\\.' -V     (any other option goes "
             "to ctest as it is)"),
    "build": ("configure and build the stages, and run nothing",
              "./ladder build\n  ./ladder build --build /tmp/ladder-build"),
    "diff": ("the code that changes from stage A to stage B (each page in docs/stages/ shows a stage against the one "
             "before it)", "./ladder diff 04 05\n  ./ladder diff 01 06      (any two stages of one kind)"),
    "try": ("a stage with a constant, an option or an experiment's patch changed, beside the stage as it is; or your "
            "own version of the stage file, through the stage's checks",
            "./ladder try 06 kLoadsInFlight=1,2,4,8\n  ./ladder try 02 --grid=64,128,256\n"
            "  ./ladder try 01 docs/experiments/01_naive/interleaved.patch\n"
            "  ./ladder try 05 mine.cu            (your version of 05_shuffle/reduce.cu, through its checks)"),
}
class Parser(argparse.ArgumentParser):
    """argparse, with its errors in the project's one-line form instead of a usage block."""

    def error(self, message):
        say(f"{'maint' if 'maint' in self.prog else 'ladder'}: error: {message} (see {self.prog} --help)")
        sys.exit(2)

def stage_options(p):
    p.add_argument("-n", "--size", metavar="N", help="floats to sum, as the stages take -n (2^28, 1e6, ...)")
    g = p.add_argument_group("timing and input (passed to every stage, which checks them: see its --help)")
    for flag, what in [("--reps", "timed repetitions; the median is reported"), ("--warmup", "untimed runs first"),
                       ("--seed", "input seed: the same seed gives bitwise the same input everywhere"),
                       ("--input", "the input that is timed: float or exact"),
                       ("--flush", "what evicts the input from L2 before each repetition"),
                       ("--device", "CUDA device index")]:
        g.add_argument(flag, metavar=flag[2:].upper() if flag != "--seed" else "S", help=what)
    g = p.add_argument_group("the GEMM rung")
    g.add_argument("--gemm-size", metavar="M", help="M = N = K of the GEMM (its --size)")
    g.add_argument("--gemm-reps", metavar="N", help="timed repetitions of the GEMM (its --reps)")
    p.add_argument("--save", metavar="DIR", help="directory for the result files (default: <build>/results)")

def parser():
    p = Parser(prog="./ladder", description=DESCRIPTION, epilog=ENVIRONMENT, allow_abbrev=False,
               formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", title="commands", parser_class=Parser)
    cmds = {name: sub.add_parser(name, help=text, description=text, allow_abbrev=False,
                                 epilog=f"examples:\n  {example}", formatter_class=argparse.RawDescriptionHelpFormatter)
            for name, (text, example) in COMMANDS.items()}
    for name in ("run", "test", "build", "try"):
        cmds[name].add_argument("--build", metavar="DIR", help="the build directory (default: build)")
    stage_options(cmds["run"])
    cmds["run"].add_argument("--no-gemm", action="store_true", help="leave out the GEMM rung")
    cmds["test"].add_argument("-j", "--parallel", metavar="N", default=str(build.ncpu()),
                              help="tests run at once (default: the CPU count); any other option (-R REGEX, -L LABEL, "
                                   "-V, ...) goes to ctest as it is (ctest ignores one it does not know)")
    cmds["diff"].add_argument("before", metavar="A", help="a stage: 04 or 04_warp_unroll")
    cmds["diff"].add_argument("after", metavar="B", help="another stage of the same kind: 05 or 05_shuffle")
    cmds["try"].usage = "./ladder try [options] STAGE CHANGE"
    cmds["try"].add_argument("stage", metavar="STAGE", help="the stage: 06 or 06_float4")
    cmds["try"].add_argument("change", metavar="CHANGE", nargs="?", help=(
        "NAME=v1,v2,... a constant of the stage file (kLoadsInFlight=1,2,4,8); --option=v1,v2,... one of the stage's "
        "launch options (--grid=64,128, --block=128,256), which the stage checks; path/to/experiment.patch "
        "(docs/experiments/<stage>/), applied with git apply to a copy; or path/to/mine.cu, your own version of the "
        "stage file, built as a copy and put through the stage's checks (exit 0: passed everything; 1: a check "
        "failed; 77: passed what could run without a GPU)"))
    stage_options(cmds["try"])
    return p, cmds

def writable_directory(option, path):
    """A directory option is usable before anything is built or run: it is a directory, or one can be made in its
    nearest existing parent (tried, and removed again); UsageProblem otherwise."""
    p = pathlib.Path(path).absolute()
    base = next(b for b in (p, *p.parents) if b.exists())
    if not base.is_dir():
        why = "that is a file, not a directory" if base == p else f"{base} is a file, so the directory cannot be made"
        raise UsageProblem(f"{option} {path}: {why}")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".ladder-probe-", dir=base))
    except OSError as e:
        what = "is not writable" if base == p else f"cannot be made in {base} ({e.strerror})"
        raise UsageProblem(f"{option} {path}: the directory {what}") from None

def take_build(argv):
    """--build DIR (or --build=DIR) anywhere among the arguments chooses the build directory for every step."""
    out, build_dir, args = [], os.environ.get("BUILD_DIR"), iter(argv)
    for arg in args:
        if arg == "--build" or arg.startswith("--build="):
            if not (build_dir := arg.split("=", 1)[1] if "=" in arg else next(args, "")):
                raise UsageProblem("--build needs a directory")
        else:
            out.append(arg)
    return out, (CALLER / build_dir).absolute() if build_dir else ROOT / "build"

def parse(argv):
    argv, build_dir = take_build(argv)
    p, cmds = parser()
    if not argv:
        say(p.format_help() + "ladder: error: give a command, e.g. ./ladder run")
        sys.exit(2)
    if argv[0] == "help":  # ./ladder help [COMMAND]
        argv = [*argv[1:2], "--help"]
    if argv[0] in ("--version", "version"):
        v = re.search(r"project\(cuda_ladder VERSION ([\d.]+)", (ROOT / "CMakeLists.txt").read_text())[1]
        print(f"cuda-ladder {v} (commit {git_commit()})")
        sys.exit(0)
    if not argv[0].startswith("-") and argv[0] not in COMMANDS:
        raise UsageProblem(f"unknown command '{argv[0]}' ({', '.join(COMMANDS)}; see ./ladder --help)")
    a, extras = p.parse_known_args(argv)
    a.build = build_dir
    if a.command == "try":  # CHANGE may look like an option (--grid=64,128), which argparse leaves among the unknown
        # arguments; the same option again is more values of it (--grid=64 --grid=128)
        if a.change is None and extras and (extras[0].startswith("--") or not extras[0].startswith("-")):
            a.change = extras.pop(0)  # an option to vary, or a change given after the options
            if a.change.startswith("--") and "=" not in a.change:
                raise UsageProblem(f"try {a.stage} {a.change}: write a stage option to vary as "
                                   f"{a.change}={extras[0] if extras else 'v1,v2'}")
        elif extras and extras[0].startswith("--") and "=" not in extras[0] and a.change and "=" not in a.change:
            raise UsageProblem(f"try {a.stage} {extras[0]} {a.change}: write a stage option to vary as "
                               f"{extras[0]}={a.change}")
        if a.change is None:
            cmds["try"].error("try takes a stage and a change, e.g. ./ladder try 06 kLoadsInFlight=1,2,4,8")
        name = a.change.split("=", 1)[0] + "="
        while extras and extras[0].startswith(name):
            a.change += "," + extras.pop(0)[len(name):]
    if a.command == "test":
        a.ctest_args, extras = [x for x in extras if x != "--"], []
        if a.ctest_args and not a.ctest_args[0].startswith("-"):  # ctest would run every test, saying nothing
            raise UsageProblem(f"test {a.ctest_args[0]}: ./ladder test takes ctest's options, not names; ./ladder test "
                               f"-R '{a.ctest_args[0]}' runs the tests whose names hold it")
    if extras:
        (cmds[a.command] if a.command else p).error(f"unrecognized arguments: {' '.join(extras)}")
    if empty := [k for k, v in vars(a).items() if v == "" and k not in ("stage", "change", "before", "after")]:
        raise UsageProblem(f"{'-n/' * (empty[0] == 'size')}--{empty[0].replace('_', '-')} needs a value")
    if getattr(a, "no_gemm", False) and (a.gemm_size or a.gemm_reps):
        raise UsageProblem("--no-gemm leaves out the GEMM rung: give it, or --gemm-size/--gemm-reps, not both")
    writable_directory("--build", a.build)
    if getattr(a, "save", None):
        writable_directory("--save", a.save)
        a.save = str(CALLER / a.save)
    elif hasattr(a, "save"):
        a.save = str(a.build / "results")
    if a.command == "try":
        tries.parse_change(resolve_stage(a.stage), a.change)
    return a

def main(argv):
    try:
        a = parse(argv)
        if a.command == "diff":
            print(run.stage_diff(resolve_stage(a.before), resolve_stage(a.after)))
            return 0
        if a.command in ("run", "try") and not build.gpu_visible():
            say("ladder: no NVIDIA GPU is visible here: building anyway, to show that the code compiles; every stage\n"
                "        will then report 'no usable GPU' (exit status 77). ./ladder test runs what needs no GPU.")
        build.build(a.build)
        os.environ["LADDER_BUILD"] = str(a.build)
        if a.command in ("test", "try"):
            build.disassemblers(a.build)
        if a.command in ("run", "try"):
            run.check_options(a)
        commands = {"test": run.cmd_test, "run": run.cmd_run, "try": tries.cmd_try}
        return commands[a.command](a) if a.command in commands else 0
    except NoGpu as e:
        say(f"{e}\nladder: no usable GPU, so nothing was run or timed (exit 77); ./ladder test runs the tests that "
            "need none, and docs/index.md has the measured results")
        return 77
    except (StageError, UsageProblem) as e:
        say(f"ladder: error: {e}")
        return 2

if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # ./ladder diff 04 05 | head ends quietly, as diff itself would
    sys.exit(main(sys.argv[1:]))
