#!/usr/bin/env python3
"""The machine code the pages quote belongs to the kernels as they are: each stage is compiled for sm_90 with a
Release build's flags (scripts/sass.py's), disassembled with cuobjdump as ./ladder profile does, and compared
with docs/results/sass_<stage>.txt line for line. A kernel edited since its last profile fails here, naming the
stage and the first line that differs, until ./ladder profile is run again on a GPU; an edit of the comments only
changes no instruction and passes.

A PASS proves the saved machine code, and with it the pages' machine-code facts and the model's SASS checks, is
what nvcc makes of the current sources for sm_90; the profiler's counters were measured with that code. It does
not prove the counters fresh by itself: they and the code are saved by the same ./ladder profile run.

  check_saved_sass.py [--tools DIR] [STAGE...]   compare (default: every stage)
  check_saved_sass.py --self-test [--tools DIR]  a kernel edit (03's padding i / 32 -> i / 16) must fail, a
                                                 comment-only edit must pass
Exit status: 0 pass, 1 stale, 2 a stage does not compile, 77 a tool is missing (the test reports skipped).
"""
import argparse
import os
import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
from scripts.runner.profile import kernel_sass, saved_kernels
from scripts.runner.stages import ladder_stages, stage_file
from scripts.sass import Skip, compile_cubin, find_tool, find_tools

ARCH = "sm_90"  # the GPU docs/results/ was measured on


def find_cuobjdump(nvcc, nvdisasm, tools):
    cuobjdump = find_tool("cuobjdump", nvcc, tools)
    if not cuobjdump:
        raise Skip(f"cuobjdump not found (on PATH, beside nvcc or in {tools or 'a directory given by --tools'}): "
                   f"./ladder test installs it there from PyPI (nvidia-cuda-cuobjdump)")
    env = {**os.environ, "PATH": f"{pathlib.Path(nvdisasm).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return cuobjdump, env  # cuobjdump -sass runs nvdisasm, found on PATH


def machine_code(stage, source, tools):
    """The saved-SASS lines of `source`, compiled as `stage`'s file."""
    nvcc, cuobjdump, env = tools
    with tempfile.TemporaryDirectory() as tmp:
        cubin = compile_cubin(source, ARCH, nvcc, tmp)
        wanted, headers = saved_kernels(stage)
        return kernel_sass(cubin, wanted, headers, cuobjdump, env)


def stale(stage, source, tools):
    """None if source's machine code is the saved one, else what differs, in one line."""
    saved_path = ROOT / "docs" / "results" / f"sass_{stage}.txt"
    if not saved_path.exists():  # a stage not profiled yet: its pages quote no machine code (they say so)
        print(f"check_saved_sass: {stage}: not profiled yet (no docs/results/sass_{stage}.txt)")
        return None
    saved = saved_path.read_text().splitlines()
    now = machine_code(stage, source, tools)
    if now == saved:
        return None
    at = next((i for i, (a, b) in enumerate(zip(saved, now)) if a != b), min(len(saved), len(now)))
    was = saved[at] if at < len(saved) else "(the end)"
    got = now[at] if at < len(now) else "(the end)"
    return (f"{stage}: the kernel changed since it was profiled: its machine code for {ARCH} differs from "
            f"docs/results/sass_{stage}.txt from line {at + 1} ('{was}' saved, '{got}' now): run ./ladder profile on "
            f"a GPU, then ./ladder docs")


def self_test(tools):
    """A planted kernel edit must be seen, a comment-only edit must not."""
    stage = "03_padding"
    text = stage_file(stage).read_text()
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, edited, want_stale in [("i / 32 -> i / 16", text.replace("i / 32", "i / 16"), True),
                                          ("a comment added", text + "\n// a comment, and nothing else\n", False)]:
            if edited == text and want_stale:
                problems.append(f"{stage} has no 'i / 32' to plant the drift in: update the self-test")
                continue
            copy = pathlib.Path(tmp) / "reduce.cu"
            copy.write_text(edited)
            found = stale(stage, copy, tools)
            if bool(found) != want_stale:
                problems.append(f"{stage} with {label}: {'not seen' if want_stale else 'reported stale: ' + str(found)}")
            else:
                print(f"check_saved_sass: self-test: {stage} with {label}: {'stale, as it must be' if found else 'the same'}")
    return problems


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("stages", nargs="*", help="the stages (default: every one)")
    p.add_argument("--tools", help="where pip --target put nvidia-cuda-nvdisasm and -cuobjdump (./ladder: <build>/tools)")
    p.add_argument("--self-test", action="store_true", help="plant a kernel edit and a comment edit")
    a = p.parse_args(argv)
    try:
        nvcc, nvdisasm = find_tools(None, a.tools)
        tools = (nvcc, *find_cuobjdump(nvcc, nvdisasm, a.tools))
        if a.self_test:
            problems = self_test(tools)
        else:
            problems = [s for s in (stale(st, stage_file(st), tools) for st in a.stages or ladder_stages()) if s]
    except Skip as e:
        print(f"SKIPPED: {e}")
        return 77
    except RuntimeError as e:
        print(f"check_saved_sass: error: {e}", file=sys.stderr)
        return 2
    for problem in problems:
        print(f"check_saved_sass: {problem}", file=sys.stderr)
    if not problems and not a.self_test:
        print(f"check_saved_sass: {', '.join(a.stages or ladder_stages())}: the saved machine code is the current kernels'")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
