"""The ladder's stages: a stage is a folder named NN_name (two digits, an underscore) that builds one program, and that
program is the one authority on itself. Its --describe (kept by the build in <build>/describe/<stage>.json) gives its
role (reduce or gemm), its regimes and combines, every option with its default and range; ./ladder, the docs and
the tests read it here and restate none of it."""
import functools
import json
import os
import pathlib
import re
import subprocess
from typing import NamedTuple, Optional

ROOT = pathlib.Path(__file__).resolve().parents[2]
STAGE_FOLDER = re.compile(r"^\d\d_[a-z0-9_]+$")
CPU = "cpu_baseline"  # the CPU's sums of the same input and the copy of it to the GPU (cpu_baseline/sum.cpp)


class UsageProblem(Exception):
    """A command line ./ladder refuses: one line, exit status 2."""


class StageError(Exception):
    """A stage that could not be run or built as asked: one line (and what it printed), exit status 2."""


class NoGpu(Exception):
    """The stage found no usable GPU: exit status 77."""


def build_dir():
    """The build directory whose programs are asked: LADDER_BUILD (./ladder sets it from --build; CTest gives each
    test its own), else build/."""
    return pathlib.Path(os.environ.get("LADDER_BUILD") or ROOT / "build").absolute()


def use_build(path):
    os.environ["LADDER_BUILD"] = str(path)
    describe.cache_clear()


def ladder_stages():
    """Every stage, in order: the folders named NN_name that hold a CMakeLists.txt (CMake finds them the same way).
    Looked up again whenever the project's top folder changes (a folder added or removed)."""
    return list(_stage_folders(ROOT.stat().st_mtime_ns))


@functools.lru_cache(maxsize=4)
def _stage_folders(_mtime):
    return tuple(sorted(p.name for p in ROOT.iterdir()
                        if STAGE_FOLDER.match(p.name) and (p / "CMakeLists.txt").is_file()))


def stage_file(stage):
    """The stage's source file: the one .cu file of its folder."""
    found = sorted((ROOT / stage).glob("*.cu"))
    if len(found) != 1:
        raise StageError(f"{stage}/ holds {len(found)} .cu files; a stage is one file")
    return found[0]


def build_json(name, step="build"):
    """A JSON file the build writes for the runner (<build>/NAME), parsed; StageError where it is not there yet."""
    path = build_dir() / name
    if not path.exists():
        raise StageError(f"{path} does not exist: {step} first (./ladder build)")
    return json.loads(path.read_text())


@functools.lru_cache(maxsize=None)
def describe(program):
    """What the program says of itself (its --describe), as the build kept it."""
    return build_json(f"describe/{program}.json")


class Sanitizer(NamedTuple):
    program: Optional[str]  # compute-sanitizer's path as the build found it, None where it found none
    missing: str            # why there is none ("" where there is)
    tools: list             # the tools every stage's sanitizer tests run
    args: list              # and the arguments the stage is given there


def sanitizer():
    """compute-sanitizer as the build found it, with the tools and arguments every stage's sanitizer tests run it
    with (cmake/Ladder.cmake declares them)."""
    found = build_json("sanitizers.json", "configure")
    return Sanitizer((found["program"] or [None])[0], "".join(found["missing"]), found["tools"], found["args"])


def sanitizer_program():
    """compute-sanitizer's path, as the build found it; StageError where it did not."""
    found = sanitizer()
    if not found.program:
        raise StageError(found.missing)
    return found.program


def role(stage):
    return describe(stage)["role"]


def reduce_stages():
    return [s for s in ladder_stages() if role(s) == "reduce"]


def gemm_stages():
    return [s for s in ladder_stages() if role(s) == "gemm"]


def gemm_stage():
    """The first GEMM rung (the one the docs' GEMM tables are of), or None."""
    return next(iter(gemm_stages()), None)


def regimes(stage):
    return describe(stage)["regimes"]


def combines(stage):
    """The stage's combine strategies; the first is its default."""
    return describe(stage)["combines"]


def all_regimes():
    """The regimes the reduce stages have, in the order of the stage with the most (stream, tree)."""
    ordered = sorted(reduce_stages(), key=lambda s: -len(regimes(s)))
    return list(dict.fromkeys(r for s in ordered for r in regimes(s)))


def has_stream(stage):
    """Whether the stage has a grid-stride loop (the stream regime); a tree-only stage runs one element per thread."""
    return "stream" in regimes(stage)


def combine_stage():
    """The reduce stage that offers several combine strategies (the last rung of the reduction)."""
    return next(s for s in reduce_stages() if len(combines(s)) > 1)


def option(program, flag):
    """One option of the program, as it describes it: {flags, kind, group, default, help, min, max, values}."""
    found = [o for o in describe(program)["options"] if flag in o["flags"]]
    if not found:
        raise UsageProblem(f"{program} has no option {flag}")
    return found[0]


def launch_options(program):
    """The options that change how the program launches (its "Launch" group): what ./ladder try may vary."""
    return [o["flags"][-1] for o in describe(program)["options"] if o["group"] == "Launch"]


def regime_args(stage, wanted=("stream", "tree")):
    """--regime for the stage: only the regimes it has."""
    mine = [r for r in wanted if r in regimes(stage)]
    return ["--regime", ",".join(mine)] if len(regimes(stage)) > 1 else []


def resolve(program, args):
    """The values the program would run with for these arguments, checked by the program itself (--describe after
    them): its own one-line error, as a UsageProblem, if it refuses one."""
    done = subprocess.run([binary(build_dir(), program), *args, "--describe"], capture_output=True, text=True)
    if done.returncode != 0:
        raise UsageProblem(done.stderr.strip().removeprefix(f"{program}: error: "))
    return json.loads(done.stdout)["values"]


CONSTANT = re.compile(r"^constexpr\s+(?:int|unsigned|unsigned int|std::size_t)\s+(k\w+)\s*=\s*([^;]+);", re.M)


def constants(stage):
    """The constants ./ladder try can change: the file's top-level `constexpr int kName = ...;` lines."""
    return dict(CONSTANT.findall(stage_file(stage).read_text()))


def resolve_stage(name):
    """'06' or '06_float4' -> '06_float4'."""
    found = [s for s in ladder_stages() if s == name or s.split("_")[0] == name.zfill(2)]
    if len(found) != 1:
        raise UsageProblem(f"no stage '{name}': the stages are {', '.join(ladder_stages())}")
    return found[0]


def binary(build, program):
    path = pathlib.Path(build) / "bin" / program
    if not path.exists():
        raise StageError(f"{path} does not exist: build first (./ladder build)")
    return str(path)
