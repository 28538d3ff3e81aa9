"""A reader's edit is judged by its code, not by the evidence's freshness: in a scratch copy with 06's kLoadsInFlight
changed, ./ladder test of that stage passes with a note that the results describe the code as it was, and the saved
machine code's freshness check fails."""
import os
import pathlib
import subprocess
import sys
import tempfile

from maint.tests import scratch_copy, verdict
from scripts.stages import build_dir

STAGE, BEFORE, AFTER = "06_float4", "constexpr int kLoadsInFlight = 4;", "constexpr int kLoadsInFlight = 8;"

def main():
    with tempfile.TemporaryDirectory() as tmp:
        tree = scratch_copy(tmp)
        source = tree / STAGE / "reduce.cu"
        assert BEFORE in source.read_text(), f"{STAGE}/reduce.cu no longer says `{BEFORE}`: update this test"
        source.write_text(source.read_text().replace(BEFORE, AFTER))
        scratch_build = pathlib.Path(tmp) / "build"
        scratch_build.mkdir()
        if (build_dir() / "tools").exists():  # the disassemblers ./ladder put there, so nothing is installed again
            (scratch_build / "tools").symlink_to(build_dir() / "tools")
        env = {**os.environ, "LADDER_NO_INSTALL": "1", "LADDER_BUILD": str(scratch_build), "CUDA_VISIBLE_DEVICES": "-1",
               "CUDAARCHS": os.environ.get("CUDAARCHS", "90")}  # the GPU's tests skipped: the GPU is the others' lane
        test = subprocess.run([str(tree / "ladder"), "test", "--build", str(scratch_build), "-R", f"^{STAGE}\\."],
                              capture_output=True, text=True, env=env, cwd=tree)
        fresh = subprocess.run([sys.executable, "-m", "maint.tests.check_saved_sass", STAGE], capture_output=True,
                               text=True, env={**env, "PYTHONPATH": str(tree)}, cwd=tree)
    problems = [f"./ladder test exited {test.returncode}"] if test.returncode != 0 else []
    if "ladder: note: " not in test.stdout or f"{STAGE}/reduce.cu" not in test.stdout:
        problems.append("./ladder test did not note that the results describe the code as it was")
    if fresh.returncode != 1:
        problems.append(f"the saved machine code's freshness check exited {fresh.returncode}, not 1 (stale)")
    print(test.stdout[-1500:] + fresh.stdout[-800:])
    return verdict("evidence_note", problems, "the edited stage passes ./ladder test with the note; the maintainers' "
                   "freshness check fails on it")

if __name__ == "__main__":
    sys.exit(main())
