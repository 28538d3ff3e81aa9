"""The ladder's stages, in one place: the list is the top-level CMakeLists.txt's (the syllabus), and what a reduce
stage accepts (its regimes and combine strategies) is read from the `ladder::ReduceStage stage{...}` line of its own
file, the one the stage's binary parses its options with. Nothing else in the runner names a stage."""
import functools
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
REGIMES = ("stream", "tree")


class UsageProblem(Exception):
    """A command line ./ladder refuses: one line, exit status 2."""


class StageError(Exception):
    """A stage that could not be run or built as asked: one line (and what it printed), exit status 2."""


class NoGpu(Exception):
    """The stage found no usable GPU: exit status 77."""


def stages_in_order():
    """The ladder as the top-level CMakeLists.txt lists it."""
    text = (ROOT / "CMakeLists.txt").read_text()
    return [line.split("(")[1].rstrip(")").strip() for line in text.splitlines()
            if line.startswith("add_subdirectory(0")]


def stage_file(stage):
    return ROOT / stage / ("gemm.cu" if (ROOT / stage / "gemm.cu").exists() else "reduce.cu")


STAGES = stages_in_order()
REDUCE = [s for s in STAGES if stage_file(s).name == "reduce.cu"]
GEMM = next((s for s in STAGES if stage_file(s).name == "gemm.cu"), None)

# The C++ enumerators of common/reduce_stage.hpp, as the options spell them.
_SPELLING = {"kStream": "stream", "kTree": "tree", "kRelaunch": "relaunch", "kAtomic": "atomic",
             "kTwoPass": "two-pass", "kLastBlock": "last-block"}


@functools.lru_cache(maxsize=None)
def _spec(stage):
    """(regimes, combines) of a reduce stage, in its file's order (the first of each is the stage's default)."""
    text = stage_file(stage).read_text()
    m = re.search(r"ReduceStage\s+\w+\s*\{(.*?)\};", text, re.S)
    regimes = re.findall(r"Regime::(k\w+)", m.group(1)) if m else []
    combines = re.findall(r"Combine::(k\w+)", m.group(1)) if m else []
    if not regimes or not combines or any(k not in _SPELLING for k in regimes + combines):
        raise StageError(f"{stage}/{stage_file(stage).name}: no 'ladder::ReduceStage stage{{name, {{Regime::...}}, "
                         "{Combine::...}}};' line the runner can read (scripts/runner/stages.py)")
    return [_SPELLING[k] for k in regimes], [_SPELLING[k] for k in combines]


def regimes(stage):
    return _spec(stage)[0]


def combines(stage):
    return _spec(stage)[1]


def has_stream(stage):
    """Whether the stage has a grid-stride loop (the stream regime); 01 runs only the tree regime."""
    return "stream" in regimes(stage)


def combine_stage():
    """The reduce stage that offers several combine strategies (the last rung of the reduction)."""
    return next(s for s in REDUCE if len(combines(s)) > 1)


def regime_args(stage, wanted=REGIMES):
    """--regime for the stage: a tree-only stage takes none."""
    return ["--regime", ",".join(wanted)] if has_stream(stage) else []


CONSTANT = re.compile(r"^constexpr\s+(?:int|unsigned|unsigned int|std::size_t)\s+(k\w+)\s*=\s*([^;]+);", re.M)


def constants(stage):
    """The constants ./ladder try can change: the file's top-level `constexpr int kName = ...;` lines."""
    return dict(CONSTANT.findall(stage_file(stage).read_text()))


def resolve_stage(name):
    """'06' or '06_float4' -> '06_float4'."""
    found = [s for s in STAGES if s == name or s.split("_")[0] == name.zfill(2)]
    if len(found) != 1:
        raise UsageProblem(f"no stage '{name}': the stages are {', '.join(STAGES)}")
    return found[0]


def binary(build, stage):
    path = pathlib.Path(build) / "bin" / stage
    if not path.exists():
        raise StageError(f"{path} does not exist: build first (./ladder build)")
    return str(path)
