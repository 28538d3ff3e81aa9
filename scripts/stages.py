"""The ladder's stages, and running their programs. A stage is a folder named NN_name that builds one program, and that
program is the one authority on itself: its --describe gives its role (reduce or gemm), its regimes and combines (the
first of each its default) and its options' defaults, and checks the options given before it, running nothing."""
import csv
import functools
import json
import os
import pathlib
import re
import struct
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
CPU = "cpu_baseline"  # the CPU's sums of the same input and the copy of it to the GPU (cpu_baseline/sum.cpp)
CALLER = pathlib.Path(os.environ.get("LADDER_CWD", "."))  # where ./ladder was run: relative paths among its arguments

class UsageProblem(Exception):
    """A command line ./ladder refuses: one line, exit status 2."""

class StageError(Exception):
    """A stage that could not be run or built as asked: one line (and what it printed), exit status 2."""

class NoGpu(Exception):
    """The stage found no usable GPU: exit status 77."""

def say(text):
    print(text, file=sys.stderr, flush=True)

def build_dir():  # ./ladder sets LADDER_BUILD from --build
    return pathlib.Path(os.environ.get("LADDER_BUILD") or ROOT / "build").absolute()

@functools.lru_cache(maxsize=None)
def ladder_stages():
    """Every stage, in order: the folders named NN_name that hold a CMakeLists.txt (CMake builds the same)."""
    return sorted(p.parent.name for p in ROOT.glob("[0-9][0-9]_*/CMakeLists.txt"))

def stage_file(stage):
    found = sorted((ROOT / stage).glob("*.cu"))
    if len(found) != 1:
        raise StageError(f"{stage}/ holds {len(found)} .cu files; a stage is one file")
    return found[0]

def resolve_stage(name):
    """'06' or '06_float4' -> '06_float4'."""
    found = [s for s in ladder_stages() if s == name or s[:2] == name.zfill(2)]
    if len(found) != 1:
        raise UsageProblem(f"no stage '{name}': the stages are {', '.join(ladder_stages())}")
    return found[0]

def binary(program):
    path = build_dir() / "bin" / program
    if not path.exists():
        raise StageError(f"{path} does not exist: build first (./ladder build)")
    return str(path)

@functools.lru_cache(maxsize=None)
def describe(program, args=(), carrier=None):
    """What the program says of itself with these options (checked by the program itself, which runs nothing): its
    own one-line error, as a UsageProblem (after carrier, the option or command that gave them), if it refuses one."""
    done = subprocess.run([binary(program), *args, "--describe"], capture_output=True, text=True)
    if done.returncode != 0:
        error = done.stderr.strip().removeprefix(f"{program}: error: ")
        raise UsageProblem(f"{carrier}: {error}" if carrier else error)
    return json.loads(done.stdout)

def role(stage):
    return describe(stage)["role"]

def reduce_stages():
    return [s for s in ladder_stages() if role(s) == "reduce"]

def gemm_stages():
    return [s for s in ladder_stages() if role(s) == "gemm"]

def regimes(stage):
    return describe(stage)["regimes"]

def combines(stage):
    return describe(stage)["combines"]

def all_regimes():
    """The regimes of the reduce stages, in the order of the stage with the most (stream, tree)."""
    return list(dict.fromkeys(r for s in sorted(reduce_stages(), key=lambda s: -len(regimes(s))) for r in regimes(s)))

def combine_stage():
    """The reduce stage that offers several combine strategies (the last rung of the reduction)."""
    return next(s for s in reduce_stages() if len(combines(s)) > 1)

def regime_args(stage, wanted=("stream", "tree")):
    return ["--regime", ",".join(r for r in wanted if r in regimes(stage))] if len(regimes(stage)) > 1 else []

CONSTANT_TYPE = r"(?:int|unsigned|unsigned int|std::size_t)"  # the types of the constants try may change
CONSTANT = re.compile(rf"^constexpr\s+{CONSTANT_TYPE}\s+(k\w+)\s*=\s*([^;]+);", re.M)

def constants(stage):
    return dict(CONSTANT.findall(stage_file(stage).read_text()))

def shown(path):
    path = pathlib.Path(path)
    return str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)

# ---- running a program and reading its rows ------------------------------------------------------------------------

def run_binary(stage, args, exe=None):
    """Runs one stage program (or exe, a copy of it) with --format json; returns its rows and exit status."""
    cmd = [exe or binary(stage), *args, "--format", "json"]
    started = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode == 77:
        raise NoGpu(proc.stderr.strip())
    which, err = f"{' '.join(cmd[1:])}\n{stage}", proc.stderr.strip()
    if proc.returncode not in (0, 1):
        raise StageError(f"{which} exited {proc.returncode}: {err}")
    start = max(proc.stdout.rfind("[\n"), 0)  # the report, printed last; a kernel's printf output comes before it
    if own := proc.stdout[:start].strip():
        say(f"      {stage} printed: {own[:300]}{' ...' if len(own) > 300 else ''}")
    try:
        rows = json.loads(proc.stdout[start:])
    except ValueError:  # it stopped before its report: a launch that never ended, say (its message says)
        raise StageError(f"{which} exited {proc.returncode} with no report: {err}") from None
    if proc.returncode == 1 and rows and all_pass(rows):
        raise StageError(f"{which} exited 1 (a check failed) but every row passes: run it with --format table to see "
                         "its notes")
    if any(r.get("timing_check") == "FAIL" for r in rows):
        raise StageError(f"{which}: some of its rows were timed with repetitions not held behind the stream hold, so "
                         "their times may hold host time (is CUDA_LAUNCH_BLOCKING set, or a profiler attached?); "
                         "nothing was saved")
    say(f"      {stage} {' '.join(args)}  ({time.time() - started:.1f} s)")
    return rows, proc.returncode

def all_pass(*row_lists):
    """The rows' verdicts, as each program decided them (common/verdict.hpp): nothing here judges a row again."""
    return all(r["check"] == "PASS" for rows in row_lists for r in rows)

def row_label(r):
    """A result row's name in every table: its stage, with its combine where the stage has several."""
    return r["stage"] if len(combines(r["stage"])) == 1 else f"{r['stage']} ({r['combine']})"

def relative_error(r, result="result", reference="reference"):
    """|result - reference| / |reference|, the result read as the float the program printed (its shortest decimal
    names exactly one float)."""
    value = struct.unpack("f", struct.pack("f", float(r[result])))[0]
    return abs(value - float(r[reference])) / abs(float(r[reference]))

def fmt_num(v, spec):
    return "-" if v is None or v == "" else format(float(v), spec)

def table(headers, rows):
    widths = [max([len(str(h))] + [len(str(r[i])) for r in rows]) for i, h in enumerate(headers)]
    return "\n".join("  " + "  ".join(f"{str(c):>{w}}" if i else f"{str(c):<{w}}" for i, (c, w) in
                                      enumerate(zip(cells, widths))) for cells in [headers, *rows])

def git_commit():
    done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else "unknown"

def meta_from(row):
    """The GPU, driver and toolkit of a run, and the commit, for the result files' meta."""
    def tool(cmd, pick):
        try:
            return pick(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
        except (OSError, subprocess.CalledProcessError, IndexError):
            return "unknown"
    return {**{k: row[k] for k in ("device", "compute_capability", "sms", "l2_bytes", "peak_gbps")},
            "cuda_driver_api": row["driver"], "cuda_runtime": row["runtime"],
            "driver": tool(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                           lambda out: out.split()[0]),
            "nvcc": tool(["nvcc", "--version"], lambda out: out.strip().splitlines()[-1]), "commit": git_commit()}

def save(directory, name, rows, meta=None):
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.csv"
    if rows:
        with path.open("w") as out:
            w = csv.DictWriter(out, fieldnames=list(dict.fromkeys(k for r in rows for k in r)), lineterminator="\n")
            w.writeheader()
            w.writerows({k: "" if v is None else str(v).lower() if isinstance(v, bool) else v for k, v in r.items()}
                        for r in rows)
    if meta is not None:
        (directory / f"{name}.meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    say(f"      wrote {path}")
