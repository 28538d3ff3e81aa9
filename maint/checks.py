"""./maint/do test: the maintainers' checks, each a program; those that need no GPU run side by side, niced (but the
longest), so that those that use it, one after another beside them, each with the GPU to itself, keep the CPU their
host work needs. Exit status 0 when none failed (a check that cannot run here, exit 77, is listed with its reason)."""
import concurrent.futures
import os
import re
import subprocess
import sys
import time

from scripts import build
from scripts.stages import ROOT, ladder_stages

PY = [sys.executable, "-m"]
LONGEST = ("evidence_note", "host_intrinsics", "add_stage")  # started first and not niced: they set the wall time

def checks(b):
    """(name, command, gpu): gpu, the check runs in the GPU's lane, one at a time."""
    unit = b / "maint" / "bin" / "unit_tests"
    return [
        ("unit", [str(unit)] if unit.exists() else ["sh", "-c", "echo 'SKIPPED: GoogleTest not found (apt-get install "
                                                                  "libgtest-dev, then configure again)'; exit 77"], 0),
        ("runner", [*PY, "maint.tests.test_runner"], 0),
        ("mutant_texts", [*PY, "maint.tests.check_mutants", "--texts"], 0),
        ("docs", [*PY, "maint", "docs", "--check"], 0),
        ("docs_self_test", [*PY, "maint", "docs", "--self-test"], 0),
        *[(n, [*PY, f"maint.tests.check_{n}"], 0) for n in ("cli", "pictures", "saved_sass", "try_file",
                                                          "host_intrinsics", "stage_diffs", "experiments", "add_stage",
                                                          "configure", "budget", "evidence_note", "thread_models")],
        ("cpu_sums", [str(b / "maint" / "bin" / "cpu_sums"), "--max-log2", "20"], 0),
        *[(f"thread_models.{s}{name}", [*PY, "maint.tests.check_thread_models", option, s], 0)
          for name, option in (("", "--stage"), (".drifts", "--drifts")) for s in ladder_stages()],
        ("mutants", [*PY, "maint.tests.check_mutants"], 1),
        ("try_file.gpu", [*PY, "maint.tests.check_try_file", "--correct"], 1),
        ("racecheck_sees_race", [*PY, "maint.tests.check_mutants", "--racy-warp"], 1),
        ("profile_metrics", [*PY, "maint", "profile", "--ncu-check", ladder_stages()[0]], 1),
        ("shared_poison", [str(b / "maint" / "bin" / "shared_poison_probe")], 1),
        ("mutants.cpu", [*PY, "maint.tests.check_mutants", "--cpu"], 0),
    ]

def run_one(name, cmd, b, niced=True):
    started = time.time()
    env = {**os.environ, "LADDER_BUILD": str(b), "BUILD_DIR": str(b), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(["nice", "-n", "10", *cmd] if niced else cmd, cwd=ROOT, env=env, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL)
    out = done.stdout + done.stderr
    status = {0: "PASS", 77: "skip"}.get(done.returncode, "FAIL")
    why = re.search(r"^(?:SKIPPED: (.*)|.*(no usable GPU).*)$", out, re.M)  # a skip's reason
    why = (why[1] or "no usable GPU") if why else "it printed no reason"
    line = f"{status:4}  {name}  ({time.time() - started:.1f} s)" + (f": {why}" if status == "skip" else "")
    print(line + (f"\n{out[-6000:]}" if status == "FAIL" else ""), flush=True)
    return status

def main(a):
    from . import mutants
    if a.k and not any(a.k in name for name, *_ in checks(a.build)):  # before the build: a typo says so
        print(f"maint: error: no check's name holds '{a.k}' (see maint/checks.py)", file=sys.stderr)
        return 2
    mutants.write_copies(a.build)
    build.build(a.build, ["maint"], optional=("ninja-build", "libgtest-dev"))
    build.disassemblers(a.build)
    chosen = [c for c in checks(a.build) if not a.k or a.k in c[0]]  # after the build: the unit tests' program exists
    started, results = time.time(), {}
    with concurrent.futures.ThreadPoolExecutor(max(2, a.parallel + 1)) as pool:  # the GPU's checks one after another
        lane = pool.submit(lambda: results.update({n: run_one(n, c, a.build, False) for n, c, gpu in chosen if gpu}))
        cpu = sorted((c for c in chosen if not c[2]), key=lambda c: c[0] not in LONGEST)
        futures = {pool.submit(run_one, name, cmd, a.build, name not in LONGEST): name for name, cmd, _ in cpu}
        for f in concurrent.futures.as_completed(futures):
            results[futures[f]] = f.result()
        lane.result()
    failed = [n for n, s in results.items() if s == "FAIL"]
    skipped = [n for n, s in results.items() if s == "skip"]
    print(f"maint: {len(results) - len(failed) - len(skipped)} checks passed, {len(skipped)} skipped, {len(failed)} "
          f"failed{': ' + ', '.join(failed) if failed else ''} ({time.time() - started:.0f} s)")
    return 1 if failed else 0
