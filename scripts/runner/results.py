"""Running a stage binary and reading its rows; tables for people; result files for the docs."""
import csv
import io
import json
import os
import pathlib
import struct
import subprocess
import time

from ..cli import say
from .stages import ROOT, NoGpu, StageError, binary, combines


def run_binary(build, stage, args, fmt="json", exe=None):
    """Runs one stage binary (or exe, a variant of it) with --format fmt; returns its rows and exit status."""
    cmd = [exe or binary(build, stage), *args, "--format", fmt]
    started = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode == 77:
        raise NoGpu(proc.stderr.strip())
    if proc.returncode not in (0, 1):
        raise StageError(f"{' '.join(cmd[1:])}\n{stage} exited {proc.returncode}: {proc.stderr.strip()}")
    if fmt == "json":
        rows = json.loads(proc.stdout)
    else:
        rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    if proc.returncode == 1 and rows and all(row_passes(r) for r in rows) and "--determinism" not in args:
        # exit 1 means a check failed: if no row says which, the failure is one the rows do not carry
        raise StageError(f"{' '.join(cmd[1:])}\n{stage} exited 1 (a check failed) but every row passes: "
                         f"run it with --format table to see its notes")
    unheld = [r for r in rows if r.get("timing_check") == "FAIL"]
    if unheld:
        # Launches waited for the GPU (CUDA_LAUNCH_BLOCKING=1, a profiler): the stage's results stand, its times
        # do not, and no table or result file gets them.
        raise StageError(f"{' '.join(cmd[1:])}\n{stage}: {len(unheld)} of its rows were timed with repetitions not held "
                         f"behind the stream hold, so their times may hold host time (is CUDA_LAUNCH_BLOCKING set, or a "
                         f"profiler attached?); nothing was saved")
    say(f"      {stage} {' '.join(args)}  ({time.time() - started:.1f} s)")
    return rows, proc.returncode


# ./ladder's timing and input options, as the stage programs name them; each program checks them and has its own
# default for what is not given.
RUN_OPTIONS = ("reps", "warmup", "seed", "input", "flush", "device")


def run_args(a, only=RUN_OPTIONS):
    """The timing and input options given to ./ladder, as stage arguments."""
    return [x for name in only if getattr(a, name, None) is not None for x in (f"--{name}", str(getattr(a, name)))]


def size_args(a):
    return ["-n", a.size] if getattr(a, "size", None) else []


def gemm_args(a):
    """The GEMM rung's arguments: --gemm-size and --gemm-reps as its --size and --reps, and the input options."""
    size = ["--size", a.gemm_size] if getattr(a, "gemm_size", None) else []
    reps = ["--reps", a.gemm_reps] if getattr(a, "gemm_reps", None) else []
    return [*size, *reps, *run_args(a, ("seed", "input", "device", "flush"))]


def row_label(r):
    """A result row's name in every table: its stage, with its combine where the stage has several."""
    return r["stage"] if len(combines(r["stage"])) == 1 else f"{r['stage']} ({r['combine']})"


def relative_error(r, result="result", reference="reference"):
    """|result - reference| / |reference|, the result read as the float the stage printed (its shortest decimal
    names exactly one float); not from abs_error, which the stage rounds to three digits."""
    value = struct.unpack("f", struct.pack("f", float(r[result])))[0]
    return abs(value - float(r[reference])) / abs(float(r[reference]))


def fmt_num(v, spec):
    return "-" if v is None or v == "" else format(float(v), spec)


def table(headers, rows):
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    out = ["  " + "  ".join(f"{h:>{w}}" if i else f"{h:<{w}}" for i, (h, w) in enumerate(zip(headers, widths)))]
    for r in rows:
        out.append("  " + "  ".join(f"{str(c):>{w}}" if i else f"{str(c):<{w}}" for i, (c, w) in enumerate(zip(r, widths))))
    return "\n".join(out)


def tool_version(cmd, pick=lambda out: out.strip().splitlines()[-1]):
    try:
        return pick(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    except (OSError, subprocess.CalledProcessError, IndexError):
        return "unknown"


def meta_from(row):
    return {
        "device": row["device"], "compute_capability": row["compute_capability"], "sms": row["sms"],
        "l2_bytes": row["l2_bytes"], "peak_gbps": row["peak_gbps"], "cuda_driver_api": row["driver"],
        "cuda_runtime": row["runtime"],
        "driver": tool_version(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                               lambda out: out.strip().splitlines()[0]),
        "nvcc": tool_version(["nvcc", "--version"]),
    }


def git_commit():
    if os.environ.get("LADDER_COMMIT"):
        return os.environ["LADDER_COMMIT"]
    try:
        return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


SAVE_FORMAT = "csv"


def save(directory, name, rows, meta=None):
    """Writes rows to <directory>/<name>.csv (or .json with --save-format json), and the meta beside them."""
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.{SAVE_FORMAT}"
    if rows and SAVE_FORMAT == "json":
        path.write_text(json.dumps(rows, indent=1) + "\n")
    elif rows:
        with open(path, "w", newline="") as f:
            fields = list(dict.fromkeys(k for r in rows for k in r))  # rows of several kinds (cpu_baseline's)
            w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
            w.writeheader()
            for r in rows:
                w.writerow({k: ("" if v is None else str(v).lower() if isinstance(v, bool) else v) for k, v in r.items()})
    if meta is not None:
        (directory / f"{name}.meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    say(f"      wrote {path}")


def row_passes(r):
    """A row's verdict, as the stage decided it (common/verdict.hpp): its "check" field covers every check the
    run made, the references' included. Nothing here judges a row again."""
    return r["check"] == "PASS"


def all_pass(*row_lists):
    return all(row_passes(r) for rows in row_lists for r in rows)
