#!/usr/bin/env python3
"""./ladder try STAGE mine.cu, as a reader runs it: a correct copy of 05 passes what it can run; a file with a lost
element, one with a missing barrier (a race) and one that reads past the per-warp sums (a wrong tail) each fail and
name the check that caught them, as do a file whose kernel has another name and one that names another stage; a file that does not compile fails with the compiler's message naming the
reader's file; a missing file is a one-line usage error. Without a GPU the GPU checks are 'not run' and a correct
file exits 77; on one it must pass everything (exit 0).

  check_try_file.py BUILD_DIR PROBE    (a build directory of its own: ./ladder try builds the copies there; PROBE: a
                                        stage binary, whose --list-devices says whether there is a GPU; LADDER_TOOLS:
                                        where ./ladder test put the disassemblers, for the machine-code check)
"""
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
STAGE = "05_shuffle"
ORIGINAL = (ROOT / STAGE / "reduce.cu").read_text()

# (name, edit, exit statuses allowed, text the output must hold)
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


def ladder(build, *args, cwd=None):
    return subprocess.run([str(ROOT / "ladder"), "try", *args, "--build", str(build)], capture_output=True, text=True,
                          cwd=cwd)


def main():
    build = pathlib.Path(sys.argv[1]).resolve()
    tools = [pathlib.Path(os.environ.get("LADDER_TOOLS") or build / "tools")]  # as ./ladder try looks for them
    disassembler = shutil.which("nvdisasm") or any(any(t.glob("nvidia/*/bin/nvdisasm")) for t in tools)
    CASES[0][3][1] = "PASS     machine code" if disassembler else "not run  machine code"
    gpu = subprocess.run([sys.argv[2], "--list-devices"], capture_output=True).returncode != 77
    if gpu:  # on a GPU a correct copy must pass everything: the GPU checks and the timing too
        CASES[0] = ("correct", CASES[0][1], (0,), [*CASES[0][3], "PASS     --self-test full",
                                                    "PASS     compute-sanitizer --tool racecheck",
                                                    "PASS     timing beside the stage's own", "passed everything"])
    print(f"on a GPU: {'yes' if gpu else 'no'}; a disassembler: {'yes' if disassembler else 'no'}")
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, edit, allowed, wanted in CASES:
            path = pathlib.Path(tmp) / f"{name}.cu"
            text = edit(ORIGINAL)
            assert name == "correct" or text != ORIGINAL, f"the case {name} changes nothing"
            path.write_text(text)
            done = ladder(build, "05", path.name, cwd=tmp)
            out = done.stdout + done.stderr
            missing = [w for w in wanted if w not in out]
            if name == "no_semicolon" and f"{path}(" not in out:
                missing.append(f"the compiler's message naming {path}")
            verdict = "ok" if done.returncode in allowed and not missing else "WRONG"
            print(f"{name}: exit {done.returncode}, {verdict}" + (f"; missing: {missing}" if missing else ""))
            if verdict != "ok":
                problems.append(f"{name}: exit {done.returncode} (want {allowed}), missing {missing}\n{out[-3000:]}")
        done = ladder(build, "05", "nowhere.cu", cwd=tmp)
        if done.returncode != 2 or "no such file" not in done.stdout + done.stderr:
            problems.append(f"a missing file: exit {done.returncode}: {done.stdout}{done.stderr}")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
