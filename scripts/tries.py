"""./ladder try: a stage with a constant, an option or an experiment's patch changed, built as a copy under
<build>/try/ and run beside the stage as it is; or the reader's own version of the stage file, put through what the
stage itself must pass, each check with the command that repeats it.

The reader's file, without a GPU: the build, the machine-code rules (scripts/sass.py) and the host runs of its kernels
and launcher (scripts/host_checks.py). With one: also the stage's default run in every regime and combine, its
--self-test full, the sanitizers the stage's own tests run (scripts/sanitize.py), and the timing beside the stage."""
import collections
import concurrent.futures
import fcntl
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

from . import host_checks, host_run, sanitize
from .run import gemm_args, run_args, size_args
from .stages import (CALLER, CONSTANT_TYPE, ROOT, StageError, UsageProblem, all_pass, binary, combines, constants,
                     describe, fmt_num, ladder_stages, meta_from, regime_args, resolve_stage, role,
                     run_binary, save, say, shown, stage_file, table)

Change = collections.namedtuple("Change", "kind name values path")  # kind: constant, option, patch or file

def parse_change(stage, spec):
    """What ./ladder try changes, checked against the stage file before anything is built: 'NAME=v1,v2' (a constant),
    '--option=v1,v2' (a stage option, which the program checks), 'path/to/name.patch' (an experiment) or
    'path/to/mine.cu' (the reader's own version of the stage file)."""
    if spec.endswith(".patch"):  # relative to where ./ladder was called from, else to the repository
        if not (found := [b / spec for b in (CALLER, ROOT) if (b / spec).is_file()]):
            raise UsageProblem(f"'{spec}': no such patch (experiments live in docs/experiments/<stage>/)")
        path = found[0].resolve()
        patched_text(stage, path)
        return Change("patch", path.stem, [], path)
    if spec.endswith(".cu"):
        path = CALLER / spec
        if not path.is_file():
            raise UsageProblem(f"try {stage} {spec}: no such file (give your version of {stage_file(stage).name}, "
                               f"relative to where you run ./ladder)")
        return Change("file", path.stem, [], path.resolve())
    if "=" not in spec:
        hint = f" (write it as {spec}=v1,v2)" if spec.startswith("--") else ""
        raise UsageProblem(f"try {stage} {spec}: not NAME=v1,v2 (a constant of the stage file), --option=v1,v2, "
                           f"path/to/experiment.patch or path/to/mine.cu{hint}")
    name, text = spec.split("=", 1)
    values = list(dict.fromkeys(v.strip() for v in text.split(",") if v.strip()))  # each value once, in order
    if not name or not values:
        raise UsageProblem(f"try {stage} {spec}: names no {'constant or option' if not name else 'values'}")
    if name.startswith("-"):
        return Change("option", name, values, None)
    found = constants(stage)
    if name not in found:
        patches = sorted(p.name for p in (ROOT / "docs" / "experiments" / stage).glob("*.patch"))
        have = f"its constants: {', '.join(found)}" if found else \
            "it has none: vary one of its options (--option=v1,v2)" + \
            (f" or try one of its experiments ({', '.join(patches)})" if patches else "")
        raise UsageProblem(f"try {stage} {name}=...: {stage}/{stage_file(stage).name} has no constant {name} "
                           f"({have})")
    for v in values:  # a count: the constants try may change are loads in flight, unroll factors, pads
        if not re.fullmatch("[0-9]+", v) or not 1 <= int(v) <= 64:
            raise UsageProblem(f"try {stage} {name}={v}: {name} is a count (the file says {name} = {found[name]}): "
                               "give whole numbers from 1 to 64")
    own = found[name].strip()  # copies of the others, in decimal, each once: C++ would read 010 as octal 8
    others = list(dict.fromkeys(str(int(v)) for v in values if not (own.isdigit() and int(v) == int(own))))
    if not others:
        raise UsageProblem(f"try {stage} {name}={','.join(values)}: the file says {name} = {own} already, so "
                           f"there is nothing to compare: give other values")
    return Change("constant", name, others, None)

def git_apply(args, cwd):
    """git apply in a scratch directory, never in a repository around it."""
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(pathlib.Path(cwd).parent)}
    try:
        return subprocess.run(["git", "apply", *args], cwd=cwd, env=env, capture_output=True, text=True)
    except FileNotFoundError:
        raise UsageProblem("git is needed to apply an experiment's patch (apt-get install git)") from None

def patched_text(stage, patch):
    """The stage file with the patch applied by git apply (in a scratch copy; the stage file stays as it is).
    UsageProblem, in git's words, if the patch changes another file or no longer applies."""
    target = f"{stage}/{stage_file(stage).name}"
    error = lambda text: "; ".join(l.removeprefix("error: ").strip() for l in text.splitlines() if l.strip())  # noqa
    with tempfile.TemporaryDirectory() as tmp:
        numstat = git_apply(["--numstat", str(patch)], tmp)
        paths = [line.split("\t")[-1] for line in numstat.stdout.splitlines()]
        if numstat.returncode != 0 or not paths:
            raise UsageProblem(f"try {stage} {shown(patch)}: git apply reads no patch in it: "
                               f"{error(numstat.stderr) or 'no diff'}")
        if paths != [target]:
            owner = paths[0].split("/")[0]
            suggestion = f": it is an experiment of {owner} (./ladder try {owner[:2]} {shown(patch)})" \
                if len(paths) == 1 and owner in ladder_stages() else ""
            raise UsageProblem(f"try {stage} {shown(patch)}: the patch changes {', '.join(paths)}, not {target}"
                               f"{suggestion}")
        copy = pathlib.Path(tmp) / target
        copy.parent.mkdir(parents=True)
        copy.write_text(stage_file(stage).read_text())
        proc = git_apply([str(patch)], tmp)
        if proc.returncode != 0:
            raise UsageProblem(f"try {stage} {shown(patch)} does not apply to {target} as it is now; git apply says: "
                               f"{error(proc.stderr)}")
        return copy.read_text()

def variant_target(stage, name):
    return f"try_{stage[:2]}_{re.sub(r'[^A-Za-z0-9]', '_', name)}"

def build_copies(build, stage, copies):
    """Each (target, source text, note) copy of a stage file written to <build>/try/<target>/ (the top CMakeLists.txt
    makes a program of each, so CMake configures again where one is new) and built: their executables, or StageError."""
    fcntl.flock(lock := open(pathlib.Path(build) / ".lock", "w"), fcntl.LOCK_EX)  # as build.build() holds it
    new = False
    for target, text, note in copies:
        folder = pathlib.Path(build) / "try" / target
        new |= not (folder / "note.txt").exists()
        folder.mkdir(parents=True, exist_ok=True)
        for name, content in ((stage_file(stage).name, text), ("note.txt", re.sub(r"[^\w .,=+()/-]", "_", note))):
            if not (folder / name).exists() or (folder / name).read_text() != content:
                (folder / name).write_text(content)
    targets = [target for target, _, _ in copies]
    if new and subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build)], stdout=subprocess.DEVNULL).returncode:
        raise StageError(f"CMake could not configure {build} with the copies of {stage} (its errors are above)")
    if subprocess.run(["cmake", "--build", str(build), "--target", *targets], stdout=sys.stderr).returncode != 0:
        raise StageError(f"the copies of {stage} did not build (the compiler's errors are above)")
    return [str(pathlib.Path(build) / "try" / "bin" / t) for t in targets]

def cmd_try(a):
    stage = resolve_stage(a.stage)
    change = parse_change(stage, a.change)
    if change.kind == "file":
        return try_file(a, stage, change.path)
    runs, name, text = [("as in the file", binary(stage), [])], change.name, stage_file(stage).read_text()
    if change.kind == "patch":
        variants = [(f"{name} (the patch)", patched_text(stage, change.path))]
        say(f"ladder: building {stage} with {shown(change.path)}")
        runs.append((variants[0][0], build_copies(a.build, stage, [(variant_target(stage, name), variants[0][1],
                     f"a copy of {stage} with {change.path.name} applied (./ladder try)")])[0], []))
        meta = {"patch": shown(change.path)}
    elif change.kind == "option":  # each value checked by the stage program itself, before anything runs
        launch = [flag for o in describe(stage)["options"] if o["group"] == "Launch" for flag in o["flags"]]
        if name not in launch:  # the others it sets itself (--regime, -n, --format) or would not compare
            raise UsageProblem(f"try {stage} {name}=...: try varies how the stage is launched: {', '.join(launch)}")
        for v in change.values:
            describe(stage, (name, v), f"try {stage} {name}={v}")
        variants, meta = [(f"{stage} (the options change only how it is launched)", text)], {}
        runs += [(f"{name} {v}", binary(stage), [name, v]) for v in change.values]
    else:
        pattern = re.compile(rf"^(constexpr\s+{CONSTANT_TYPE}\s+{re.escape(name)}\s*=\s*)([^;]+)(;.*)$", re.M)
        original = pattern.search(text)[2].strip()
        say(f"ladder: building {len(change.values)} variant(s) of {stage} with {name} = {', '.join(change.values)} "
            f"(the file says {original}: the stage as it is runs that one)")
        variants, meta = [(f"{name} = {v}", pattern.sub(lambda m, v=v: m[1] + v + m[3], text, count=1))
                          for v in change.values], {}
        paths = build_copies(a.build, stage, [(variant_target(stage, f"{name}_{v}"), vt,
                                               f"a copy of {stage} with {name} = {v} (./ladder try)")
                                              for v, (_, vt) in zip(change.values, variants)])
        runs[0] = (f"{name} = {original} (the file)", runs[0][1], [])
        runs += [(label, p, []) for (label, _), p in zip(variants, paths)]
    print(f"\nladder try {stage}: the host runs of each variant (no GPU needed)", flush=True)
    verdicts = [(label, *host_verdict(stage, variant)) for label, variant in variants]
    for label, status, detail in verdicts:
        print(f"  {status:8} host run of {label}" + (f"\n           {detail}" if status != PASS else ""), flush=True)
    judged = all(status != FAIL for _, status, _ in verdicts)
    if subprocess.run([binary(stage), "--list-devices"], capture_output=True).returncode == 77:
        say("ladder: no usable GPU, so nothing was run or timed; the host runs above judged every variant")
        return 77 if judged else 1
    status = run_variants(a, stage, name, runs, **meta)
    return status if judged else 1

def host_verdict(stage, text, path=None):
    """(PASS, FAIL or NOT_RUN, the first problem or why not run) of the host checks of the stage holding text; their
    messages name path where it is given (a reader's file)."""
    with host_run.stage_text(stage, text, path):
        try:
            found = host_checks.problems(stage)
        except host_run.HostRunUnmodelled as e:
            return NOT_RUN, str(e)
        except host_run.HostRunError as e:
            found = [str(e)]
    return (FAIL, found[0]) if found else (PASS, "")

def run_variants(a, stage, name, runs, **meta):
    """Runs each (label, executable, extra arguments), prints them side by side and saves them."""
    base = gemm_args(a) if role(stage) == "gemm" else [*size_args(a), *regime_args(stage), *run_args(a)]
    rows = []
    for label, exe, extra in runs:
        r, _ = run_binary(stage, [*base, *extra], exe=exe)
        say(f"      {stage}: {label}")
        rows += [{**row, "variant": label} for row in r]
    print(f"\n{stage} with {name} changed, on {rows[0]['device']}; median of {rows[0]['reps']} reps, L2 flush: "
          f"{rows[0]['l2_flush']}\n")
    print(table(*try_lines(rows, role(stage) == "gemm")))
    print("\n  x file: the unchanged stage's time / the variant's, in the same regime (above 1: the variant is faster)")
    if a.save:
        save(a.save, f"try_{stage}_{name.lstrip('-')}", rows, {**meta_from(rows[0]), **meta})
    return 0 if all_pass(rows) else 1

def try_lines(rows, is_gemm):
    """One line per variant (and regime): (headers, body), for ./ladder try and the docs."""
    key = "pad" if is_gemm else "regime"
    base = {r[key]: float(r["ms_median"]) for r in rows if r["variant"] == rows[0]["variant"]}
    if is_gemm:
        return ["variant", "kernel", "check", "ms", "GFLOP/s", "% cuBLAS", "x file"], [
            [r["variant"], f"tiled {r['tile']}" + (" padded" if r["pad"] == "true" else ""), r["check"],
             f"{float(r['ms_median']):.3f}", fmt_num(r["gflops"], ".0f"), fmt_num(r["pct_cublas"], ".1f"),
             f"{base.get(r['pad'], base[rows[0]['pad']]) / float(r['ms_median']):.2f}"] for r in rows]  # pad vs none
    return ["variant", "regime", "grid", "check", "ms", "GB/s", "% peak", "x file", "x CUB"], [
        [r["variant"], r["regime"], r["grid"], r["check"], f"{float(r['ms_median']):.4f}", fmt_num(r["gbps"], ".0f"),
         fmt_num(r["pct_peak"], ".1f"), f"{base[r['regime']] / float(r['ms_median']):.2f}", fmt_num(r["x_cub"], ".2f")]
        for r in rows]

# ---- the reader's own file ------------------------------------------------------------------------------------------

PASS, FAIL, NOT_RUN = "PASS", "FAIL", "not run"
Check = collections.namedtuple("Check", "name status detail command")
STAGE_FAILURE = re.compile(r"^(?:[\w.-]+: )?\s*((?:FAIL|error)\b.*)$", re.M)
FLOOR_S = 30  # the least time a check on the GPU is given; a sanitizer's run, 4 times as much
WIDE_N = 2 ** 32 + 3  # past what a 32-bit index holds: 16 GiB of floats

def why_failed(text, status):
    """What a failed run printed that says why: compute-sanitizer's first report, the stage's first FAIL line or
    error, or else the last line it printed."""
    found = (sanitize.REPORT.search(text) if status == 99 else None) or STAGE_FAILURE.search(text)
    last = next((line.strip() for line in reversed(text.splitlines()) if line.strip()), "")
    line = found[1].strip() if found else (f"exit status {status}: {last}" if last else
                                           f"exit status {status}, and it printed nothing")
    return ("compute-sanitizer: " if status == 99 else "") + line[:300]

class Report(list):
    """The report, on stdout, one line per check as it ends (progress and the compiler went to stderr)."""

    def add(self, c):
        self.append(c)
        print(f"  {c.status:8} {c.name}" + (f"\n           {c.detail}" if c.detail else "")
              + (f"\n           $ {c.command}" if c.command and c.status != PASS else ""), flush=True)

    def end(self, gpu):
        """Exit 1 on any failure, 77 only where there is no GPU, else 0 (naming what was not run, and why)."""
        failed = [c for c in self if c.status == FAIL]
        skipped = [c for c in self if c.status == NOT_RUN]
        if failed:
            print(f"ladder try: failed {len(failed)} check{'s' * (len(failed) > 1)} of {len(self)}: "
                  + ", ".join(c.name.split(":")[0] for c in failed))
            return 1
        if not gpu:
            print(f"ladder try: passed the {len(self) - len(skipped)} checks it could run; no usable GPU here, "
                  "so nothing ran on one (exit 77)")
            return 77
        print(f"ladder try: passed everything ({len(self)} checks)" if not skipped else
              f"ladder try: passed every check it ran ({len(self) - len(skipped)})" + "".join(
                  f"; not run: {c.name.split(':')[0]} ({c.detail})" for c in skipped))
        return 0

def timed(name, cmd, limit, shown_cmd):
    """The check of running cmd: PASS on exit 0, else FAIL with why; stopped past limit seconds, which says so."""
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return Check(name, FAIL, f"did not finish within {limit:.0f} s: {host_run.NEVER_ENDS} ({name})", shown_cmd)
    return Check(name, PASS if done.returncode == 0 else FAIL,
                 why_failed(done.stdout + done.stderr, done.returncode) if done.returncode else "", shown_cmd)

def not_this_stage(stage, text):
    """Why the file is not a version of this stage (it must name the stage and hold every kernel the stage file has:
    otherwise a renamed kernel or another stage's file would pass an empty run), or None."""
    kernels = host_run.entries(stage_file(stage).read_text())
    missing = [e for e in kernels if e[0] not in {name for name, *_ in host_run.entries(text)}]
    if f'"{stage}"' not in text:
        return f"the file does not name {stage} (its main() names the stage it runs)"
    if missing:
        return (f"the host run finds no kernel {missing[0][1].split('(')[0]} as the stage file spells it (the kernels it "
                f"runs: {', '.join(m[0] for m in kernels)})")

def gpu_checks(exe, stage, report):
    """The checks on the GPU, each under a time limit of many times the stage's own run of it (a floor of FLOOR_S)."""
    every = [] if role(stage) != "reduce" else [
        *regime_args(stage), *(["--combine", ",".join(combines(stage))] if len(combines(stage)) > 1 else [])]
    runs = [("the default run's checks, every regime and combine", every), ("--self-test full", ["--self-test", "full"])]
    if role(stage) == "reduce":  # an index that wraps at 2^32 shows only past it
        runs.append((f"past 2^32: n = {WIDE_N}, checked like the others", ["--check-only", "-n", str(WIDE_N)]))
    for name, args in runs:
        started = time.time()
        own = subprocess.run([binary(stage), *args], capture_output=True, text=True)
        if own.returncode == 2 and "are free" in own.stderr:  # the GPU has not the memory for it
            report.add(Check(name, NOT_RUN, f"this GPU has not the memory: {why_failed(own.stderr, 2)}", ""))
            continue
        limit = max(FLOOR_S, 20 * (time.time() - started))
        report.add(timed(name, [exe, *args], limit, " ".join(map(shown, [exe, *args]))))
    if not sanitize.program():
        return report.add(Check("compute-sanitizer", NOT_RUN, sanitize.MISSING, ""))
    started = time.time()
    subprocess.run([binary(stage), *sanitize.ARGS], capture_output=True)
    limit = max(4 * FLOOR_S, 200 * (time.time() - started))  # a sanitizer runs the code tens of times slower
    with concurrent.futures.ThreadPoolExecutor(len(sanitize.TOOLS)) as pool:  # side by side, each line as it ends
        cmds = {tool: sanitize.command(exe, tool) for tool in sanitize.TOOLS}
        runs = [pool.submit(timed, f"compute-sanitizer --tool {tool}", cmd, limit,
                            " ".join(map(shown, ["compute-sanitizer", *cmd[1:]]))) for tool, cmd in cmds.items()]
        for done in concurrent.futures.as_completed(runs):
            report.add(done.result())

def own_copy(stage, path):
    """(target, text, note) of the copy a reader's file is built as; #line: the compiler's messages and the machine
    code's lines name the reader's file, not the copy."""
    return (variant_target(stage, f"own_{path.stem}"), f'#line 1 "{path}"\n{path.read_text()}',
            f"{path.name}, a reader's version of {stage} (./ladder try)")

def try_file(a, stage, path):
    text, own = path.read_text(), own_copy(stage, path)
    target = own[0]
    say(f"ladder: building {shown(path)} as a copy of {stage} ({target})")
    print(f"\nladder try {stage} {path}: each check as it ends, and the command that repeats it", flush=True)
    report = Report()
    gpu = subprocess.run([binary(stage), "--list-devices"], capture_output=True).returncode != 77
    try:
        exe = build_copies(a.build, stage, [own])[0]
    except StageError:
        report.add(Check("build", FAIL, f"{path.name} did not compile (the compiler's messages are above, on stderr)",
                         f"cmake --build {a.build} --target {target}"))
        return report.end(gpu)
    repeat = f"./ladder try {stage[:2]} {path}" + ("" if a.build == ROOT / "build" else f" --build {a.build}")
    not_it = not_this_stage(stage, text)
    report.add(Check("build", PASS, "", ""))
    cmd = [sys.executable, "-m", "scripts.sass", "--build", str(a.build),
           str(pathlib.Path(a.build) / "try" / target / stage_file(stage).name)]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    lines = (done.stdout + done.stderr).strip().splitlines()
    report.add(Check("machine code: the orderings and scopes one GPU hides (scripts/sass.py)",
                     {0: PASS, 77: NOT_RUN}.get(done.returncode, FAIL), "; ".join(lines[-3:]),
                     " ".join(["python3", *cmd[1:]])))
    name = "host run: " + ("C equals the product, made by the file's launcher at edge shapes, either thread order"
                           if role(stage) == "gemm" else "every element added once, at awkward sizes, every input "
                           "offset, either thread order, three block orders and a second launch, and through the "
                           "file's launcher with the shared memory and buffers it asks for")
    report.add(Check(name, FAIL, not_it, repeat) if not_it else Check(name, *host_verdict(stage, text, path), repeat))
    if not_it or not gpu:  # not_it: nothing more to learn from running it as this stage
        why = f"the file is not a version of {stage}" if not_it else "no usable GPU here"
        report.add(Check("on a GPU: the default run, --self-test full, past 2^32 elements, the sanitizers and the "
                         "timing", NOT_RUN, why, ""))
        return report.end(gpu)
    gpu_checks(exe, stage, report)
    if all(c.status != FAIL for c in report):
        try:
            ok = run_variants(a, stage, f"own_{path.stem}", [("the stage", binary(stage), []), (path.name, exe, [])])
            report.add(Check("timing beside the stage's own", PASS if ok == 0 else FAIL, "the table above", ""))
        except StageError as e:
            report.add(Check("timing beside the stage's own", FAIL, str(e).splitlines()[-1], ""))
    return report.end(gpu)
