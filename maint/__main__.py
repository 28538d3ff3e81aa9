"""./maint/do: the maintainers' commands, which measure on a GPU what the docs show and render the docs, and the
maintainers' tests. The reader's commands are ./ladder's; these build in the same build directory, and add the
programs only they need (the planted bugs, the harness's unit tests and helpers: the target maint)."""
import importlib
import os
import sys

from scripts import build
from scripts.ladder import Parser, stage_options, take_build, writable_directory
from scripts.stages import NoGpu, StageError, UsageProblem, say

COMMANDS = {
    "measure": "everything the docs are built from, written to docs/results/ (needs a GPU)",
    "profile": "Nsight Compute counters of every stage, the SASS the pages quote, racecheck (needs ncu)",
    "docs": "render docs/ and README.md from docs/templates/ and docs/results/ (--check compares, changes nothing)",
    "test": "the maintainers' tests: the harness, the runner, the planted bugs, the docs and their freshness",
}
PROFILE_SIZE, PROFILE_GEMM, SWEEP = "2^24", "2048", "2^10..2^30"  # the studies' own sizes

def parser():
    p = Parser(prog="./maint/do", description=__doc__, allow_abbrev=False)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", title="commands", parser_class=Parser)
    c = {name: sub.add_parser(name, help=text, description=text, allow_abbrev=False) for name, text in COMMANDS.items()}
    for name in COMMANDS:
        c[name].add_argument("--build", metavar="DIR", help="the build directory (default: build)")
    stage_options(c["measure"])
    for name in ("measure", "profile"):
        c[name].add_argument("--profile-size", metavar="N", default=PROFILE_SIZE, help="n of the profiled reduce runs")
        c[name].add_argument("--profile-gemm", metavar="M", default=PROFILE_GEMM, help="M = N = K of the profiled GEMM")
    c["measure"].add_argument("--sweep", metavar="SIZES", default=SWEEP, help="a list (1000,2^20) or a range (2^10..2^30)")
    c["profile"].add_argument("--save", metavar="DIR", help="directory for the result files (default: <build>/results)")
    c["measure"].add_argument("--part", metavar="LIST", help="only these parts (default: all)")
    c["profile"].add_argument("--ncu-check", metavar="STAGE", help="check that one stage's profile row is complete")
    one = c["docs"].add_mutually_exclusive_group()
    one.add_argument("--check", action="store_true", help="compare, change nothing: fail on any difference")
    one.add_argument("--self-test", action="store_true", help="plant wrong claims: every one must be caught")
    c["test"].add_argument("-k", metavar="WORDS", help="only the checks whose names hold WORDS")
    c["test"].add_argument("-j", "--parallel", metavar="N", type=int, default=build.ncpu(), help="checks at once")
    return p

def main(argv):
    try:
        argv, build_dir = take_build(argv)
        p = parser()
        a, extras = p.parse_known_args(argv or ["--help"])
        if extras:
            (p._subparsers._group_actions[0].choices[a.command] if a.command else p).error(
                f"unrecognized arguments: {' '.join(extras)}")
        a.build = build_dir
        for option in ("build", "save"):
            if getattr(a, option, None):
                writable_directory(f"--{option}", getattr(a, option))
        if a.command == "profile" and not a.save:
            a.save = str(a.build / "results")
        os.environ["LADDER_BUILD"] = str(a.build)
        if module := {"docs": "make_docs", "test": "checks"}.get(a.command):
            return importlib.import_module(f"maint.{module}").main(a)
        if not build.gpu_visible():
            say(f"maint: {a.command} needs an NVIDIA GPU, and none is visible: no usable GPU, so nothing to measure (exit 77)")
            return 77
        from . import measure, mutants
        mutants.write_copies(a.build)
        build.build(a.build, ["maint"])
        build.disassemblers(a.build)
        return getattr(measure, f"cmd_{a.command}")(a)
    except NoGpu as e:
        say(f"{e}\nmaint: no usable GPU, so nothing was measured (exit 77)")
        return 77
    except (StageError, UsageProblem) as e:
        say(f"maint: error: {e}")
        return 2

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
