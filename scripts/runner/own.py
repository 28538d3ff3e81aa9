"""./ladder try STAGE path/to/mine.cu: a reader's own version of a stage, built as a copy beside the stage and put
through what the stage itself must pass, each check with the command that repeats it.

Without a GPU: the build, the machine-code rules (scripts/sass.py) and the host runs of the file's kernels
(scripts/host_checks.py: every element added once, at every input offset and awkward sizes, in either thread
order). With one: also the stage's default run, its --self-test full, the runs under compute-sanitizer that the
stage's own tests make (where it is installed: the tools and arguments cmake/Ladder.cmake declares), and the timing
beside the stage's own.
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

from .. import host_checks, host_run
from ..cli import say
from .stages import ROOT, StageError, binary, combines, regime_args, role, sanitizer, stage_file
from .tries import build_copies, run_variants, shown, variant_target

PASS, FAIL, NOT_RUN = "PASS", "FAIL", "not run"

# Planted copies of one stage, as a reader might write them: (name, edit, exit statuses allowed, text the report must
# hold). tests/check_try_file.py puts each through ./ladder try; ./ladder measure --part own saves the reports of
# two of them for docs/own.md.
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


@dataclass
class Check:
    name: str
    status: str
    detail: str
    command: str


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def machine_code(copy, build):
    cmd = [sys.executable, "-m", "scripts.sass", str(copy)]
    # the disassemblers ./ladder put in the build directory, or those of another (LADDER_TOOLS, as the test gives)
    tools = pathlib.Path(os.environ.get("LADDER_TOOLS") or pathlib.Path(build) / "tools")
    if tools.is_dir():
        cmd += ["--tools", str(tools)]
    done = run(cmd, cwd=ROOT)
    status = {0: PASS, 77: NOT_RUN}.get(done.returncode, FAIL)
    detail = (done.stdout + done.stderr).strip().splitlines()
    return Check("machine code: the rules of scripts/sass.py (atomics of device scope, a ticket released and "
                 "acquired, no non-coherent read of what the launch wrote)", status, "; ".join(detail[-3:]),
                 " ".join(cmd[1:]))


def not_this_stage(stage, text):
    """Why the file is not a version of this stage (it must name the stage and hold every kernel the stage file has, as
    host_run finds them: otherwise a renamed kernel or another stage's file would pass an empty run), or None."""
    kernels = host_run.entries(stage_file(stage).read_text())
    missing = [e for e in kernels if e not in host_run.entries(text)]
    if f'"{stage}"' not in text:
        return f"the file does not name {stage} (its main() names the stage it runs)"
    if missing:
        return (f"the host run finds no kernel {missing[0][1].split('(')[0]} as the stage file spells it (the kernels it "
                f"runs: {', '.join(m[0] for m in kernels)})")
    return None


def host_runs(stage, text, repeat, not_it, path):
    """The file's kernels (read from path) on the host, in a copy of the project with the stage file replaced, the
    messages naming path; not_it: why the file is not a version of the stage (not_this_stage), or None."""
    what = "C equals the product, made by the file's launcher at edge shapes, either thread order" \
        if role(stage) == "gemm" else \
        "every element added once, at awkward sizes, every input offset, either thread order, three block orders " \
        "and a second launch, and through the file's launcher with the shared memory and buffers it asks for"
    name = f"host run: {what}"
    if not_it:
        return Check(name, FAIL, not_it, repeat)
    with host_run.stage_text(stage, text, path.resolve()):
        try:
            found = host_checks.gemm_problems(stage) if role(stage) == "gemm" else host_checks.sum_problems(stage)
        except host_run.HostRunUnmodelled as e:
            return Check(name, NOT_RUN, str(e), repeat)
        except host_run.HostRunError as e:
            found = [str(e)]
    return Check(name, FAIL if found else PASS, found[0] if found else "", repeat)


# What a failed run printed that says why: compute-sanitizer's first report, the stage's first FAIL line (a check's,
# or the harness refusing the run: "program: FAIL: ..."), its error, or else the last line it printed.
SANITIZER_REPORT = re.compile(r"^=+ +((?:Invalid|Race|Barrier|Error|Warning|Program hit).*)$", re.M)
STAGE_FAILURE = re.compile(r"^(?:[\w.-]+: )?\s*((?:FAIL|error)\b.*)$", re.M)


def why_failed(text, status):
    found = (SANITIZER_REPORT.search(text) if status == 99 else None) or STAGE_FAILURE.search(text)
    last = next((line.strip() for line in reversed(text.splitlines()) if line.strip()), "")
    line = found.group(1).strip() if found else (f"exit status {status}: {last}" if last else
                                                 f"exit status {status}, and it printed nothing")
    return ("compute-sanitizer: " if status == 99 else "") + line[:300]


def shown_command(cmd):
    """A command as the report prints it: paths in the repository relative to it, and a tool found on PATH (the
    sanitizer) by its name."""
    return [pathlib.Path(c).name if shutil.which(pathlib.Path(c).name) == c else shown(c) if pathlib.Path(c).exists()
            else c for c in cmd]


def gpu_checks(exe, stage):
    """The checks on the GPU: (checks, whether there is one)."""
    probe = run([str(exe), "--list-devices"])
    if probe.returncode == 77:
        return [], False
    checks = []
    every = [] if role(stage) != "reduce" else [
        *regime_args(stage), *(["--combine", ",".join(combines(stage))] if len(combines(stage)) > 1 else [])]
    runs = [("the default run's checks, every regime and combine", every, None),
            ("--self-test full", ["--self-test", "full"], None)]
    found = sanitizer()  # as the stages' own sanitizer tests run it (cmake/Ladder.cmake)
    for tool in found.tools:
        runs.append((f"compute-sanitizer --tool {tool}", found.args,
                     [found.program, "--tool", tool, "--error-exitcode", "99"]))
    for name, args, wrap in runs:
        if wrap and not (found.program and pathlib.Path(found.program).exists()):
            checks.append(Check(name, NOT_RUN, found.missing or f"{found.program} does not exist (configure again)",
                                ""))
            continue
        cmd = [*(wrap or []), str(exe), *args]
        done = run(cmd)
        checks.append(Check(name, PASS if done.returncode == 0 else FAIL,
                            "" if done.returncode == 0 else why_failed(done.stdout + done.stderr, done.returncode),
                            " ".join(shown_command(cmd))))
    return checks, True


def report(stage, path, checks):
    """The report, on stdout (progress and the compiler's messages went to stderr); returns the exit status."""
    print(f"\nladder try {stage} {path}: each check, and the command that repeats it")
    for c in checks:
        print(f"  {c.status:8} {c.name}" + (f"\n           {c.detail}" if c.detail else "")
              + (f"\n           $ {c.command}" if c.command and c.status != PASS else ""))
    failed = [c for c in checks if c.status == FAIL]
    skipped = [c for c in checks if c.status == NOT_RUN]
    if failed:
        print(f"ladder try: failed {len(failed)} check{'s' * (len(failed) > 1)} of {len(checks)}: "
              + ", ".join(c.name.split(":")[0] for c in failed))
        return 1
    if skipped:
        print(f"ladder try: passed the {len(checks) - len(skipped)} checks it could run; not run here: "
              + ", ".join(c.name.split(":")[0] for c in skipped))
        return 77
    print(f"ladder try: passed everything ({len(checks)} checks)")
    return 0


def try_file(a, stage, path):
    text = path.read_text()
    target = variant_target(stage, f"own_{path.stem}")
    say(f"ladder: building {shown(path)} as a copy of {stage} ({target})")
    try:
        # #line: the compiler's messages and the machine code's lines name the reader's file, not the copy
        exe = build_copies(a, stage, [(target, f'#line 1 "{path}"\n{text}',
                                       f"{path.name}, a reader's version of {stage} (./ladder try)")])[0]
    except StageError:
        return report(stage, path, [Check("build", FAIL, f"{path.name} did not compile (the compiler's messages are "
                                          "above, on stderr)", f"cmake --build {a.build} --target {target}")])
    copy = pathlib.Path(a.build) / "try" / target / stage_file(stage).name
    repeat = f"{ROOT / 'ladder'} try {stage[:2]} {path}" + ("" if a.build == ROOT / "build" else f" --build {a.build}")
    not_it = not_this_stage(stage, text)
    checks = [Check("build", PASS, "", ""), machine_code(copy, a.build), host_runs(stage, text, repeat, not_it, path)]
    gpu_name = "on a GPU: the default run, --self-test full, the sanitizers and the timing"
    if not_it:  # nothing more to learn from running it as this stage
        return report(stage, path, checks + [Check(gpu_name, NOT_RUN, f"the file is not a version of {stage}", "")])
    on_gpu, gpu = gpu_checks(exe, stage)
    checks += on_gpu
    if not gpu:
        checks.append(Check(gpu_name, NOT_RUN, "no usable GPU here", ""))
    elif all(c.status != FAIL for c in checks):
        try:
            ok = run_variants(a, stage, f"own_{path.stem}", [("the stage", binary(a.build, stage), []),
                                                             (path.name, str(exe), [])]) == 0
            checks.append(Check("timing beside the stage's own", PASS if ok else FAIL, "the table above", ""))
        except StageError as e:
            checks.append(Check("timing beside the stage's own", FAIL, str(e).splitlines()[-1], ""))
    return report(stage, path, checks)
