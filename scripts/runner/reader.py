"""The reader's commands: run (the ladder and the GEMM rung), test (CTest, then why tests were skipped), diff (the code
one stage changes in another) and try (a stage changed, beside the original; or the reader's own file)."""
import difflib
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree

from . import own, tries
from .ladder_run import cpu_rows, gemm_rows, ladder_rows, print_cpu, print_gemm, print_ladder
from .results import all_pass, git_commit, meta_from, run_args, save, size_args
from .stages import CPU, UsageProblem, binary, gemm_stage, reduce_stages, resolve, resolve_stage, stage_file


def check_stage_options(a):
    """Every stage option ./ladder was given, checked by a program that takes it (its --describe after them), before
    anything runs: a refused value is the program's own one-line message, after the ./ladder option that carried
    it. The programs of one kind share the harness's checks, so one of each kind is asked."""
    if a.command not in ("run", "try", "sweep", "probe", "measure"):
        return
    reduce = reduce_stages()[0]
    checks = [(None, reduce, [*size_args(a), *run_args(a)]),
              (None, CPU, [*size_args(a), *run_args(a, ("seed", "input", "device"))])]
    if getattr(a, "gemm_size", None):
        checks.append(("--gemm-size", gemm_stage(), ["--size", a.gemm_size]))
    if getattr(a, "gemm_reps", None):
        checks.append(("--gemm-reps", gemm_stage(), ["--reps", a.gemm_reps]))
    for option in ("sweep", "profile_size"):
        if getattr(a, option, None):
            checks.append((f"--{option.replace('_', '-')}", reduce, ["-n", getattr(a, option)]))
    if getattr(a, "profile_gemm", None):
        checks.append(("--profile-gemm", gemm_stage(), ["--size", a.profile_gemm]))
    for carrier, program, args in checks:
        try:
            resolve(program, args)
        except UsageProblem as e:
            raise UsageProblem(f"{carrier}: {e}" if carrier else str(e)) from None


def cmd_run(a):
    started = time.time()
    rows = ladder_rows(a)
    grows = [] if a.no_gemm or gemm_stage() is None else gemm_rows(a)
    cpu = cpu_rows(a)
    print_ladder(rows)
    print_cpu(cpu, rows)
    if grows:
        print_gemm(grows)
    print(f"\n  {len(reduce_stages()) + (1 if grows else 0)} stages in {time.time() - started:.1f} s")
    if a.save:
        save(a.save, "ladder", rows, {**meta_from(rows[0]), "commit": git_commit()})
        save(a.save, "cpu", cpu)
        if grows:
            save(a.save, f"gemm_{grows[0]['m']}", grows)
    return 0 if all_pass(rows, grows) else 1  # the ladder's verdict: the CPU rows are a baseline, shown with theirs


# ---- diff: the code a stage adds, as its page shows it -------------------------------------------------

def header_length(lines):
    """Lines of the header comment: everything before the first #include."""
    return next(i for i, l in enumerate(lines) if l.startswith("#include"))


HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def stage_diff(before, after, context=2):
    """The unified diff of two stage files below their header comments, with the files' own line numbers.

    The header comment is left out (it describes the stage, it is not the technique); `diff -u` of the two
    files shows it too."""
    a_lines, b_lines = stage_file(before).read_text().splitlines(), stage_file(after).read_text().splitlines()
    a0, b0 = header_length(a_lines), header_length(b_lines)
    out = []
    for line in difflib.unified_diff(a_lines[a0:], b_lines[b0:], f"{before}/{stage_file(before).name}",
                                     f"{after}/{stage_file(after).name}", n=context, lineterm=""):
        m = HUNK.match(line)
        if m:
            line = f"@@ -{int(m.group(1)) + a0}{m.group(2) or ''} +{int(m.group(3)) + b0}{m.group(4) or ''} @@"
        out.append(line)
    return "\n".join(out)


def diff_pair(before, after):
    """Two stages ./ladder diff can show: any two stages whose stage files have the same name (the rungs of one
    kind; the pages show each rung against the one before it); UsageProblem otherwise."""
    if before == after:
        raise UsageProblem(f"diff {before[:2]} {after[:2]}: a stage against itself shows nothing")
    a_file, b_file = stage_file(before), stage_file(after)
    if a_file.name != b_file.name:
        raise UsageProblem(f"diff {before[:2]} {after[:2]}: {before}/{a_file.name} and {after}/{b_file.name} are "
                           "stages of two kinds; ./ladder diff compares two stage files of one kind")


def cmd_diff(a):
    print(stage_diff(resolve_stage(a.before), resolve_stage(a.after)))
    return 0


# ---- try: a variant of a stage beside the original ---------------------------------------------------

def cmd_try(a):
    stage = resolve_stage(a.stage)
    change = tries.parse_change(stage, a.change)
    if change.kind == "file":  # a reader's own version of the stage file: scripts/runner/own.py
        return own.try_file(a, stage, change.patch)
    if change.kind == "patch":
        return tries.try_patch(a, stage, change.patch)
    name, values = change.name, change.values
    runs = [("as in the file", binary(a.build, stage), [])]
    if change.kind == "option":
        tries.check_option(stage, name, values)
        runs += [(f"{name} {v}", binary(a.build, stage), [name, v]) for v in values]
    else:
        paths, original = tries.build_variants(a, stage, name, values)
        runs[0] = (f"{name} = {original} (the file)", runs[0][1], [])
        runs += [(f"{name} = {v}", str(p), []) for v, p in zip(values, paths)]
    return tries.run_variants(a, stage, name, runs)


# ---- test: CTest, then the tests it skipped and why ----------------------------------------------------

SKIP_REASON = re.compile(r"^(?:SKIPPED: (.*)|.*?: (no usable GPU)\b.*)$", re.M)
NO_GPU = "no usable GPU (no driver, no device, or compute capability below 7.5)"


def cmd_test(a):
    """ctest in the build directory (as a reader would run it there), then the skipped tests grouped by the reason
    their output gives; both on stdout, so `./ladder test > t.txt` keeps them together."""
    junit = a.build / "Testing" / "ladder-junit.xml"
    junit.unlink(missing_ok=True)
    cmd = ["ctest", "--output-on-failure", "--parallel", str(a.parallel), "--output-junit", str(junit),
           *a.ctest_args]
    sys.stdout.flush()
    status = subprocess.run(cmd, cwd=a.build).returncode
    print_skipped(junit)
    return status


def skipped_reasons(junit):
    """{reason: [test, ...]} of the tests a CTest JUnit file reports skipped."""
    reasons = {}
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        if case.find("skipped") is None:
            continue
        m = SKIP_REASON.search(case.findtext("system-out") or "")
        reason = (m.group(1) or NO_GPU) if m else f"see its output: ctest -R '^{case.get('name')}$' -V"
        reasons.setdefault(reason, []).append(case.get("name"))
    return reasons


def print_skipped(junit):
    if not junit.exists():
        return
    reasons = skipped_reasons(junit)
    if reasons:
        print(f"ladder: {sum(len(t) for t in reasons.values())} tests skipped:")
        for reason, tests in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
            print(f"  {len(tests):3d} because {reason}: {', '.join(tests[:3])}{', ...' if len(tests) > 3 else ''}")
    sys.stdout.flush()
