"""A stage program under compute-sanitizer: every tool below, side by side, on the quick self-test. The stage tests
(tests/CMakeLists.txt) and ./ladder try STAGE mine.cu both run it from here.

The harness's NaN fill of every SM's shared memory is turned off (--no-shared-poison): tens of millions of stores
per checked launch, which racecheck and synccheck would trace, and which are the harness's, not the stage's.

  python3 -m scripts.sanitize PROGRAM     exit 0: no tool reported an error; 1: one did; 77: no GPU or no sanitizer"""
import concurrent.futures
import pathlib
import re
import shutil
import subprocess
import sys

TOOLS = ["memcheck", "racecheck", "synccheck", "initcheck"]
ARGS = ["--self-test", "quick", "--no-shared-poison"]
REPORT = re.compile(r"^=+ +((?:Invalid|Race|Barrier|Error|Warning|Program hit).*)$", re.M)

def program():
    """compute-sanitizer: on PATH, beside nvcc, or in the CUDA Toolkit's usual home; None where there is none."""
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    return next((p for p in (shutil.which("compute-sanitizer"), str(pathlib.Path(nvcc).parent / "compute-sanitizer"))
                 if p and pathlib.Path(p).exists()), None)

MISSING = "compute-sanitizer not found (it ships with the CUDA Toolkit: put its bin/ on PATH)"

def command(exe, tool):
    return [program() or "compute-sanitizer", "--tool", tool, "--error-exitcode", "99", "--print-limit", "20",
            str(exe), *ARGS]

def main(argv):
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    if not program():
        print(f"SKIPPED: {MISSING}")
        return 77
    if subprocess.run([argv[0], "--list-devices"], capture_output=True).returncode == 77:
        print("SKIPPED: no usable GPU, so nothing ran under compute-sanitizer")
        return 77
    with concurrent.futures.ThreadPoolExecutor(len(TOOLS)) as pool:  # every tool side by side
        done = list(pool.map(lambda t: subprocess.run(command(argv[0], t), capture_output=True, text=True), TOOLS))
    for tool, d in zip(TOOLS, done):
        status, out = d.returncode, d.stdout + d.stderr
        found = REPORT.search(out)
        print(f"compute-sanitizer --tool {tool}: " + ("no error" if status == 0 else
              f"exit {status}: {found[1] if found else out.strip().splitlines()[-1:]}"))
        if status != 0:
            print(out[-4000:])
    return 1 if any(d.returncode for d in done) else 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
