"""The planted bugs (maint/mutants.py), each of which its check must catch.

  check_mutants.py              every planted bug (exit 77 without a GPU, after the machine-code ones ran)
  check_mutants.py --cpu        the ones that need no GPU: the machine code's, and the CPU baseline's
  check_mutants.py --texts      each planted bug's text is in its file once; a changed text must be reported
  check_mutants.py --racy-warp  racecheck reports the pre-Volta unrolled warp (maint/tests/racy_warp_unroll.cu)"""
import subprocess
import sys

from maint import mutants
from maint.tests import verdict
from scripts import build, sanitize
from scripts.stages import build_dir, table

def main(argv):
    if argv == ["--texts"]:
        every = mutants.MUTANTS + mutants.CPU_MUTANTS
        changed = every[-1]._replace(find=every[-1].find + " // since changed")
        problems = [s for m in every if (s := mutants.stale(m))]
        problems += [] if mutants.stale(changed) else [f"a changed text ({changed.name}) was not reported"]
        return verdict("mutants", problems, f"the text of each of the {len(every)} planted bugs occurs once")
    if argv == ["--racy-warp"]:
        exe = build_dir() / "maint" / "bin" / "racy_warp_unroll"
        if not sanitize.program() or subprocess.run([str(exe)], capture_output=True).returncode == 77:
            print(f"SKIPPED: {sanitize.MISSING if not sanitize.program() else 'no usable GPU'}")
            return 77
        done = subprocess.run([sanitize.program(), "--tool", "racecheck", "--error-exitcode", "99", str(exe)],
                              capture_output=True, text=True)
        print(done.stdout[-2000:] + f"racecheck {'reported the race' if done.returncode == 99 else 'MISSED the race'}")
        return 0 if done.returncode == 99 else 1
    gpu = "--cpu" not in argv and build.gpu_visible()
    rows = mutants.rows(build_dir(), gpu=gpu) if "--cpu" in argv or gpu else []
    print(table(["mutant", "verdict", "exit", "what the stage printed"],
                [[r["mutant"], r["verdict"], str(r["exit"]), r["line"][:110]] for r in rows]))
    cpu = mutants.cpu_rows(build_dir(), gpu=gpu) if "--cpu" in argv or gpu else []
    for name, caught, out in cpu:
        print(f"  {name}: {'caught' if caught else 'NOT CAUGHT'}" + ("" if caught else f"\n{out}"))
    missed = [r["mutant"] for r in rows if r["verdict"] != "caught"] + [n for n, caught, _ in cpu if not caught]
    print(f"mutants: {len(rows) + len(cpu) - len(missed)} of {len(rows) + len(cpu)} planted bugs caught"
          + (f"; missed: {', '.join(missed)}" if missed else ""))
    if not gpu and "--cpu" not in argv:
        print("SKIPPED: no usable GPU, so the planted bugs that run on it were built but not run")
        return 77
    return 1 if missed else 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
