"""./ladder try STAGE mine.cu, as a reader runs it, on the planted copies below: a correct copy
passes what it can run; a lost element, a missing barrier (a race), a read past the per-warp sums (a wrong tail), a
renamed kernel and a file that names another stage each fail, naming the check that caught them; a file that does
not compile fails with the compiler's message naming the reader's file; a missing file is a one-line usage error.
Without a GPU the GPU checks are 'not run' and a correct file exits 77; on one it must pass everything (exit 0).

The copies are built in this build directory (LADDER_BUILD), as ./ladder try builds them; the first case runs the
whole ./ladder driver, the others its Python side (the driver's part is the build, which the first case covers).
Every case runs with the GPU hidden (try_file), then, on a GPU, the correct copy through every GPU check
(try_file.gpu, --correct): the planted copies' reports rest on the host run either way.

  python3 -m maint.tests.check_try_file [--correct]
"""
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

from scripts.stages import ROOT, binary, build_dir, ladder_stages

# Planted copies of one stage, as a reader might write them: (name, edit, exit statuses allowed, text the report must
# hold). this test puts each through ./ladder try; ./maint/do measure --part own saves the reports of two
# of them for docs/own.md.
STAGE = "05_shuffle"
ORIGINAL = (ROOT / STAGE / "reduce.cu").read_text()
CASES = [
    ("correct", lambda t: t, (0, 77), ["PASS     host run", "machine code"]),  # PASS where a disassembler is
    ("lost_element", lambda t: t.replace("i < n; i += stride) sum += in[i]", "i + 1 < n; i += stride) sum += in[i]"),
     (1,), ["FAIL     host run", "the host run sums 2016, the input 2080", "ladder try: failed"]),
    ("race", lambda t: t.replace("  __syncthreads();\n  if (warp == 0)", "  if (warp == 0)"),
     (1,), ["FAIL     host run", "which no thread of this block has written yet", "ladder try: failed"]),
    ("wrong_tail", lambda t: t.replace("lane < blockDim.x / 32 ?", "lane <= blockDim.x / 32 ?"),
     (1,), ["FAIL     host run", "past its end", "ladder try: failed"]),
    ("no_semicolon", lambda t: t.replace("v = warp_reduce(v);", "v = warp_reduce(v)"),
     (1,), ["error: expected a \";\"", "FAIL     build", "ladder try: failed 1 check"]),
    ("renamed_kernel", lambda t: t.replace("reduce_kernel", "my_kernel").replace(
        "i < n; i += stride) sum += in[i]", "i + 1 < n; i += stride) sum += in[i]"),
     (1,), ["FAIL     host run", "finds no kernel reduce_kernel", "ladder try: failed"]),
    ("another_stage", lambda t: t.replace('"05_shuffle"', '"04_warp_unroll"'),
     (1,), ["FAIL     host run", "does not name 05_shuffle"]),
]


def ladder(args, cwd, driver):
    command = [str(ROOT / "ladder")] if driver else [sys.executable, "-m", "scripts.ladder"]
    env = {**os.environ, "LADDER_CWD": cwd, "PYTHONPATH": str(ROOT)}
    return subprocess.run([*command, "try", "--build", str(build_dir().resolve()), STAGE[:2], *args], capture_output=True,
                          text=True, cwd=cwd, env=env)


def gpu_visible():
    return subprocess.run([binary(ladder_stages()[0]), "--list-devices"], capture_output=True).returncode != 77


def expectations(gpu):
    """CASES, with what this machine can run: the machine-code check where a disassembler is, and on a GPU every
    GPU check and the timing of the correct copy."""
    disassembler = shutil.which("nvdisasm") or any((build_dir() / "tools").glob("nvidia/*/bin/nvdisasm"))
    print(f"on a GPU: {'yes' if gpu else 'no'}; a disassembler: {'yes' if disassembler else 'no'}")
    cases = []
    for name, edit, allowed, wanted in CASES:
        if name == "correct":
            wanted = [wanted[0], ("PASS     " if disassembler else "not run  ") + "machine code"]
            if gpu:
                allowed, wanted = (0,), [*wanted, "PASS     --self-test full",
                                         "PASS     compute-sanitizer --tool racecheck",
                                         "PASS     timing beside the stage's own", "passed everything"]
        cases.append((name, edit, allowed, wanted))
    return cases


def main():
    correct_only = "--correct" in sys.argv[1:]
    if not correct_only:  # every case with the GPU hidden: their reports rest on the host run
        os.environ["CUDA_VISIBLE_DEVICES"] = "-1"
    problems, gpu = [], gpu_visible()
    if correct_only and not gpu:
        print("no usable GPU: the correct copy's GPU checks are not run (try_file ran every case without one)")
        return 77
    cases = [c for c in expectations(gpu) if c[0] == "correct" or not correct_only]
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, edit, allowed, wanted) in enumerate(cases):
            path = pathlib.Path(tmp) / f"{name}.cu"
            text = edit(ORIGINAL)
            assert name == "correct" or text != ORIGINAL, f"the case {name} changes nothing"
            path.write_text(text)
            done = ladder([path.name], tmp, driver=i == 0)
            out = done.stdout + done.stderr
            missing = [w for w in wanted if w not in out]
            if name == "no_semicolon" and f"{path}(" not in out:
                missing.append(f"the compiler's message naming {path}")
            verdict = "ok" if done.returncode in allowed and not missing else "WRONG"
            print(f"{name}: exit {done.returncode}, {verdict}" + (f"; missing: {missing}" if missing else ""))
            if verdict != "ok":
                problems.append(f"{name}: exit {done.returncode} (want {allowed}), missing {missing}\n{out[-3000:]}")
        done = ladder(["nowhere.cu"], tmp, driver=False)
        if done.returncode != 2 or "no such file" not in done.stdout + done.stderr:
            problems.append(f"a missing file: exit {done.returncode}: {done.stdout}{done.stderr}")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
