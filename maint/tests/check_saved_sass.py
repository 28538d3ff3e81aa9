"""The machine code the pages quote is the kernels': each stage compiled for sm_90 as the build does, disassembled with
cuobjdump as ./maint/do profile does, equals docs/results/sass_<stage>.txt line for line (the profile's freshness
check). A kernel edit fails, naming the stage and the first line that differs (check_evidence_note.py plants one).
  check_saved_sass.py [STAGE...]      compare (default: every stage)
Exit status: 0 pass, 1 stale, 2 a stage does not compile, 77 a tool is missing."""
import os
import pathlib
import shutil
import sys
import tempfile

from maint.measure import kernel_sass
from maint.tests import verdict
from scripts.sass import ARCH, Skip, compile_cubin, find_tools  # ARCH: the GPU docs/results/ was measured on
from scripts.stages import ROOT, build_dir, ladder_stages, stage_file

def stale(stage, source, tools):
    """None if source's machine code is the saved one, else what differs, in one line."""
    saved_path = ROOT / "docs" / "results" / f"sass_{stage}.txt"
    if not saved_path.exists():  # a stage not profiled yet: its pages quote no machine code (they say so)
        print(f"check_saved_sass: {stage}: not profiled yet (no docs/results/sass_{stage}.txt)")
        return None
    nvcc, nvdisasm = tools  # source compiled as `stage`'s file, then its saved-SASS lines
    cuobjdump = next((p for p in [shutil.which("cuobjdump"), str(pathlib.Path(nvdisasm).parent / "cuobjdump"),
                                  str(pathlib.Path(nvcc).parent / "cuobjdump")] if p and os.path.exists(p)), None)
    if not cuobjdump:
        raise Skip(f"cuobjdump not found (on PATH, beside nvcc or in {build_dir()}/tools): ./ladder test installs it "
                   "there from PyPI (nvidia-cuda-cuobjdump)")
    env = {**os.environ, "PATH": f"{pathlib.Path(nvdisasm).parent}{os.pathsep}{os.environ['PATH']}"}  # it runs nvdisasm
    with tempfile.TemporaryDirectory() as tmp:
        now = kernel_sass(compile_cubin(source, ARCH, tools, build_dir(), tmp), stage, cuobjdump, env)
    saved = saved_path.read_text().splitlines()
    if now == saved:
        return None
    at = next((i for i, (a, b) in enumerate(zip(saved, now)) if a != b), min(len(saved), len(now)))
    return (f"{stage}: the kernel changed since it was profiled: its machine code for {ARCH} differs from "
            f"docs/results/sass_{stage}.txt from line {at + 1} ('{saved[at] if at < len(saved) else '(the end)'}' "
            f"saved, '{now[at] if at < len(now) else '(the end)'}' now): run ./maint/do profile on a GPU, then "
            f"./maint/do docs")

def main(argv):
    try:
        tools = find_tools(build_dir())
        problems = [s for s in (stale(st, stage_file(st), tools) for st in argv or ladder_stages()) if s]
    except Skip as e:
        print(f"SKIPPED: {e}")
        return 77
    except RuntimeError as e:
        print(f"check_saved_sass: error: {e}", file=sys.stderr)
        return 2
    return verdict("check_saved_sass", problems, f"{', '.join(argv or ladder_stages())}: the saved machine code is the "
                   "current kernels'")

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
