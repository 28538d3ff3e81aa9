"""The reader's commands: run (the ladder and the GEMM rung), test (CTest, then why tests were skipped), diff (the code
a stage adds) and try (a stage changed, beside the original)."""
import collections
import difflib
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree

from .results import all_pass, common_args, fmt_num, git_commit, meta_from, run_binary, save, say, table
from .stages import (GEMM, REDUCE, REGIMES, ROOT, STAGES, StageError, UsageProblem, binary, combine_stage, combines,
                     regime_args, resolve_stage, stage_file)
from .values import check_try_constant, check_try_option


def run_combines(stage):
    """A stage with several combine strategies runs its default (the first) beside the fastest deterministic one."""
    return list(dict.fromkeys([combines(stage)[0], "last-block"]))


# ---- run ---------------------------------------------------------------------------------------------

def ladder_rows(a):
    rows = []
    for i, stage in enumerate(REDUCE, 1):
        say(f"[{i}/{len(STAGES)}] {stage}")
        combine = ["--combine", ",".join(run_combines(stage))] if len(combines(stage)) > 1 else []
        r, _ = run_binary(a.build, stage, ["-n", a.size, *regime_args(stage), *combine, *common_args(a)])
        rows.extend(r)
    return rows


CPU = "cpu_baseline"  # the CPU's sums of the same input and the copy of it to the GPU (cpu_baseline/sum.cpp)


def cpu_rows(a):
    say(f"[cpu] {CPU}: the CPU's float loop, every core, and the copy of the input to the GPU")
    r, _ = run_binary(a.build, CPU, ["-n", a.size, "--seed", str(a.seed), "--input", a.input, "--device", str(a.device)])
    return r


def cpu_stage_row(ladder, stage):
    """The stage's row the CPU is compared with: its default combine, in the stream regime where it has one."""
    mine = [r for r in ladder if r["stage"] == stage and r["combine"] == run_combines(stage)[0]]
    return next((r for r in mine if r["regime"] == "stream"), mine[0])


def cpu_lines(cpu, ladder):
    """The CPU beside the ladder: the loop, every core, the copies, and the first and last reduce stages alone and
    after the pageable copy (the two medians added: the kernel cannot start before its input is there). Each sum's
    relative error against the oracle beside its check ('*': its float result was not judged, its bound being too
    loose to say anything; the exact check carried the verdict). Returns (headers, body); shared by ./ladder run and
    the docs."""
    if (cpu[0]["n"], cpu[0]["seed"], cpu[0]["input"]) != (ladder[0]["n"], ladder[0]["seed"], ladder[0]["input"]):
        raise StageError(f"the CPU rows (n = {cpu[0]['n']}) and the ladder's (n = {ladder[0]['n']}) are not of the same input")
    by = {r["row"]: r for r in cpu}
    copy = by["copy"]

    def line(name, threads, r, ms, check=None):
        error = "-" if r.get("reference") in (None, "") else f"{float(r['abs_error']) / abs(float(r['reference'])):.1e}"
        return [name, threads, (check or r["check"]) + ("*" if r.get("float_check") == "skipped" else ""), error, ms]

    body = [line("CPU float loop, 1 thread", by["loop"]["threads"], by["loop"], float(by["loop"]["ms_median"])),
            line("CPU float loop, every core", by["all_cores"]["threads"], by["all_cores"],
                 float(by["all_cores"]["ms_median"])),
            line("copy to the GPU (pageable memory)", "-", copy, float(copy["ms_median"])),
            line("copy to the GPU (pinned memory)", "-", by["copy_pinned"], float(by["copy_pinned"]["ms_median"]))]
    for stage in (REDUCE[0], combine_stage()):  # the first rung, and the last of the reduction
        r = cpu_stage_row(ladder, stage)
        name = f"{stage}" + ("" if r["combine"] == "relaunch" else f" ({r['combine']})") + f", {r['regime']} regime"
        body += [line(f"{name}: the kernel", "-", r, float(r["ms_median"])),
                 line(f"{name}: copy + kernel", "-", r, float(r["ms_median"]) + float(copy["ms_median"]),
                      "PASS" if all_pass([r, copy]) else "FAIL")]
    loop_ms, n_bytes = body[0][-1], int(copy["bytes"])
    for cells in body:
        ms = cells.pop()
        cells += [f"{ms:.3f}", f"{n_bytes / (ms * 1e6):.1f}", f"{loop_ms / ms:.1f}"]
    return ["the same input", "threads", "check", "rel. error", "ms", "GB/s", "x loop"], body


def print_cpu(cpu, ladder):
    first = cpu[0]
    print(f"\nThe CPU ({first['cpu']}) on the same {first['n']} floats, and the copy a kernel waits for when its input "
          f"starts on the host; median of {first['reps']} reps\n")
    print(table(*cpu_lines(cpu, ladder)))
    print("  copy + kernel: the pageable copy's median and the kernel's added (a kernel cannot start before its input has "
          "arrived); pinned: from page-locked memory (cudaMallocHost); x loop: the float loop's time / the row's")
    print("  rel. error: |sum - oracle| / oracle; check *: the float result was not judged (its bound would exceed 0.1% of "
          "the sum, so it says nothing) and the exact check carried the verdict. The CPU rows are the baseline: a FAIL "
          "there is the float loop's, shown, and sets cpu_baseline's exit status, not this command's")


def gemm_rows(a):
    say(f"[{len(STAGES)}/{len(STAGES)}] {GEMM}")
    r, _ = run_binary(a.build, GEMM, ["--size", a.gemm_size, "--pad", "both", "--reps", str(a.gemm_reps),
                                      "--seed", str(a.seed), "--input", a.input, "--device", str(a.device),
                                      "--flush", a.flush])
    return r


def ladder_lines(rows):
    """The comparison, one line per stage (and per combine where a stage runs several), both regimes side by
    side. Returns (headers, body, cub) with cells as strings; shared by ./ladder run and the docs.

    x prev compares a regime's time with the previous stage's in the same regime; 01 runs only the tree
    regime (one element per thread), so 02's stream column is compared with 01's one launch, marked '*'."""
    lines = {}
    for r in rows:
        lines.setdefault((r["stage"], r["combine"]), {})[r["regime"]] = r
    body, prev_stage, prev, current = [], None, {}, {}
    for (stage, combine), by in lines.items():
        if stage != prev_stage:
            prev, current, prev_stage = current, {}, stage
        label = stage if combine == "relaunch" else f"{stage} ({combine})"
        cells = [label, "PASS" if all_pass(by.values()) else "FAIL"]  # every row's own verdict, none judged here
        for regime in REGIMES:
            r = by.get(regime)
            if r is None:
                cells += ["-", "-", "-", "-", "-"]
                continue
            ms = float(r["ms_median"])
            base = prev.get(regime) or (prev.get("tree") if regime == "stream" else None)
            mark = "*" if regime == "stream" and base is not None and base["regime"] == "tree" else ""
            cells += [f"{ms:.3f}", fmt_num(r["gbps"], ".0f"), fmt_num(r["pct_peak"], ".1f"),
                      fmt_num(r.get("pct_read", "nan"), ".1f"),
                      "-" if base is None else f"{float(base['ms_median']) / ms:.2f}{mark}"]
        stream = by.get("stream") or by.get("tree")
        cells.append(fmt_num(stream["x_cub"], ".2f") + ("*" if stream["regime"] == "tree" else ""))
        body.append(cells)
        for regime, r in by.items():
            current.setdefault(regime, r)  # the stage's first combine is what the next stage compares with
    headers = ["stage", "check", "stream ms", "GB/s", "% peak", "% read", "x prev", "tree ms", "GB/s", "% peak",
               "% read", "x prev", "x CUB"]
    return headers, body, reference_lines(rows)


def reference_lines(rows):
    """CUB, the read-only kernel and the device-to-device copy, each the median over the stages' runs (each
    stage times them again in its own process): {name: {ms, gbps, pct_peak, pct_read}}."""
    n, peak = int(rows[0]["n"]), float(rows[0]["peak_gbps"])
    read_ms = statistics.median(float(r.get("read_ms_median", "nan")) for r in rows)
    out = {}
    for name, field, bytes_moved in [("cub", "cub_ms_median", 4 * n), ("read", "read_ms_median", 4 * n),
                                     ("copy", "copy_ms_median", 8 * n)]:
        if field not in rows[0]:
            continue  # results from before the reference was timed
        ms = statistics.median(float(r[field]) for r in rows)
        gbps = bytes_moved / (ms * 1e6)
        out[name] = {"ms": ms, "gbps": gbps, "pct_peak": 100 * gbps / peak, "pct_read": 100 * read_ms / ms}
    return out


REFERENCE_NAMES = {"cub": "CUB DeviceReduce::Sum", "read": "read-only kernel (speed of light)",
                   "copy": "cudaMemcpy device to device (read + write)"}


def print_ladder(rows):
    first = rows[0]
    n = int(first["n"])
    print(f"\ncuda-ladder on {first['device']} ({first['sms']} SMs, {float(first['peak_gbps']):.0f} GB/s theoretical), "
          f"driver {first['driver']}, runtime {first['runtime']}")
    print(f"float sum of n = {n} floats ({n * 4 / 1e9:.2f} GB, input '{first['input']}', seed {first['seed']}); median "
          f"of {first['reps']} reps, L2 flush before each: {first['l2_flush']}")
    print("stream regime: a grid that fills the GPU (from the occupancy API), many elements per thread; "
          "tree regime: one element per thread, grid = n / block\n")
    headers, body, refs = ladder_lines(rows)
    for key, ref in refs.items():
        body.append([REFERENCE_NAMES[key], "-", f"{ref['ms']:.3f}", f"{ref['gbps']:.0f}", f"{ref['pct_peak']:.1f}",
                     f"{ref['pct_read']:.1f}" if key != "copy" else "-", "-", "-", "-", "-", "-", "-",
                     "1.00" if key == "cub" else "-"])
    print(table(headers, body))
    grids = {r["stage"]: r for r in rows if r["regime"] == "stream"}
    if grids:
        r = next(iter(grids.values()))
        per_stage = ", ".join(f"{s[:2]} {g['grid']}" for s, g in grids.items())
        print(f"\n  stream grid: {per_stage} blocks of {r['block']} threads ({r['sms']} SMs x the blocks per SM "
              f"the occupancy API gives each kernel)")
    print("  check: PASS = every check of the run passed: the exact check (dyadic values whose sum is exact in float, "
          "three launches), the precision probe, the float result within the bound of the launch's own summation "
          "shape, and every warm-up and timed launch, CUB's and the read-only kernel's too (docs/method.md, \"What "
          "a PASS proves\"); the memory-model bugs one GPU hides are the machine-code test's (tests/check_sass.py)")
    print("  % read: GB/s over the read-only kernel's, timed in the same process: how close the stage is to what "
          "this GPU reaches reading the same bytes (the copy counts bytes read and written)")
    print("  x prev: the previous stage's time / this one's, in the same regime (*: against 01, which runs only the "
          "tree regime); x CUB: CUB's time in the same run / the stage's stream time (*: 01's tree time; above 1 is "
          "faster than CUB)")


def print_gemm(rows):
    r0 = rows[0]
    print(f"\nGEMM {r0['m']} x {r0['n']} x {r0['k']} (float, row-major); cuBLAS: {r0['cublas_math']}\n")
    out = []
    for r in rows:
        name = f"tiled {r['tile']}x{int(r['tile']) + (1 if r['pad'] else 0)}" + (" (padded)" if r["pad"] else "")
        out.append([name, r["check"], fmt_num(r["ms_median"], ".3f"), fmt_num(r["gflops"], ".0f"),
                    fmt_num(r["pct_cublas"], ".1f"), fmt_num(r["x_naive"], ".2f")])
    out.append(["naive", r0["naive_check"], fmt_num(r0["naive_ms_median"], ".3f"), fmt_num(r0["naive_gflops"], ".0f"),
                f"{100 * float(r0['cublas_ms_median']) / float(r0['naive_ms_median']):.1f}", "1.00"])
    out.append(["cuBLAS", r0["cublas_check"], fmt_num(r0["cublas_ms_median"], ".3f"), fmt_num(r0["cublas_gflops"], ".0f"),
                "100.0", f"{float(r0['naive_ms_median']) / float(r0['cublas_ms_median']):.2f}"])
    print(table(["kernel", "check", "ms", "GFLOP/s", "% cuBLAS", "x naive"], out))


def cmd_run(a):
    started = time.time()
    rows = ladder_rows(a)
    grows = [] if a.no_gemm or GEMM is None else gemm_rows(a)
    cpu = cpu_rows(a)
    print_ladder(rows)
    print_cpu(cpu, rows)
    if grows:
        print_gemm(grows)
    print(f"\n  {len(REDUCE) + (1 if grows else 0)} stages in {time.time() - started:.1f} s")
    if a.save:
        save(a.save, "ladder", rows, {**meta_from(rows[0]), "commit": git_commit()})
        save(a.save, "cpu", cpu)
        if grows:
            save(a.save, f"gemm_{a.gemm_size}", grows)
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
    """A pair ./ladder diff shows: two adjacent reduce stages, as the stage pages show them; UsageProblem otherwise,
    naming the pairs that exist."""
    pairs = list(zip(REDUCE, REDUCE[1:]))
    if (before, after) in pairs:
        return
    listing = "the pairs are " + ", ".join(f"{a[:2]} {b[:2]}" for a, b in pairs)
    if before == after:
        why = "a stage against itself shows nothing"
    elif (after, before) in pairs:
        why = f"B is the stage after A: ./ladder diff {after[:2]} {before[:2]}"
    elif before not in REDUCE or after not in REDUCE:
        gemm = before if before not in REDUCE else after
        why = f"{gemm} is not a rung of the reduction, so no page diffs it with another stage"
    else:
        why = "the pages diff adjacent stages, one technique at a time"
    raise UsageProblem(f"diff {before[:2]} {after[:2]}: {why}; {listing}")


def cmd_diff(a):
    print(stage_diff(resolve_stage(a.before), resolve_stage(a.after)))
    return 0


# ---- try: a variant of a stage beside the original ---------------------------------------------------

Change = collections.namedtuple("Change", "kind name values patch")  # kind: constant, option or patch


def find_patch(spec):
    """A patch path as the reader gave it: relative to where ./ladder was called from, else to the repository."""
    path = pathlib.Path(spec)
    for base in (pathlib.Path(os.environ.get("LADDER_CWD", ".")), ROOT):
        if (base / path).is_file():
            return (base / path).resolve()
    raise UsageProblem(f"'{spec}': no such patch (experiments live in docs/experiments/<stage>/)")


def parse_change(stage, spec):
    """What ./ladder try changes in the stage, checked against the stage file before anything is built:
    'NAME=v1,v2' (a constant), '--option=v1,v2' (a stage option), 'path/to/name.patch' (an experiment) or
    'path/to/mine.cu' (the reader's own version of the stage file)."""
    if spec.endswith(".patch"):
        path = find_patch(spec)
        patched_text(stage, path)
        return Change("patch", path.stem, [], path)
    if spec.endswith(".cu"):
        path = pathlib.Path(os.environ.get("LADDER_CWD", ".")) / spec
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
        raise UsageProblem(f"try {stage} {spec}: names no values")
    if name.startswith("-"):
        check_try_option(stage, name, values)
        return Change("option", name, values, None)
    return Change("constant", name, check_try_constant(stage, name, values), None)


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
    with tempfile.TemporaryDirectory() as tmp:
        numstat = git_apply(["--numstat", str(patch)], tmp)
        paths = [line.split("\t")[-1] for line in numstat.stdout.splitlines()]
        if numstat.returncode != 0 or not paths:
            raise UsageProblem(f"try {stage} {shown(patch)}: git apply reads no patch in it: "
                               f"{git_error(numstat.stderr) or 'no diff'}")
        if paths != [target]:
            owner = paths[0].split("/")[0]
            suggestion = f": it is an experiment of {owner} (./ladder try {owner[:2]} {shown(patch)})" \
                if len(paths) == 1 and owner in STAGES else ""
            raise UsageProblem(f"try {stage} {shown(patch)}: the patch changes {', '.join(paths)}, not {target}"
                               f"{suggestion}")
        copy = pathlib.Path(tmp) / target
        copy.parent.mkdir(parents=True)
        copy.write_text(stage_file(stage).read_text())
        proc = git_apply([str(patch)], tmp)
        if proc.returncode != 0:
            raise UsageProblem(f"try {stage} {shown(patch)} does not apply to {target} as it is now; git apply says: "
                               f"{git_error(proc.stderr)}")
        return copy.read_text()


def git_error(text):
    """git's error lines, as one line."""
    return "; ".join(line.removeprefix("error: ").strip() for line in text.splitlines() if line.strip())


def constant_variant(text, name, value):
    """The stage source with `constexpr <type> NAME = ...;` set to value, and the value the file gives it."""
    pattern = re.compile(r"^(constexpr\s+[\w:]+\s+" + re.escape(name) + r"\s*=\s*)([^;]+)(;.*)$", re.M)
    original = pattern.search(text).group(2).strip()
    return pattern.sub(lambda m: m.group(1) + value + m.group(3), text, count=1), original


VARIANT = re.compile(r'^ladder_add_variant\((\S+) (\S+) "[^"]*"\)$')


def build_copies(a, stage, copies):
    """Writes each (target, source text, note) copy of a stage file under <build>/try/<target>/, lists it in
    <build>/try/variants.cmake (which the top CMakeLists.txt includes; earlier copies whose files still exist stay
    listed) and builds the targets; returns their executables."""
    src = stage_file(stage)
    listing = a.build / "try" / "variants.cmake"
    entries = [line for line in (listing.read_text().splitlines() if listing.exists() else [])
               if VARIANT.match(line) and pathlib.Path(VARIANT.match(line).group(2)).exists()]
    for target, text, note in copies:
        path = a.build / "try" / target / src.name
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        entries = [e for e in entries if VARIANT.match(e).group(1) != target]
        note = re.sub(r"[^\w .,=+()/-]", "_", note)  # a CMake string, quoted: nothing it would expand
        entries.append(f'ladder_add_variant({target} {path.as_posix()} "{note}")')
    listing.write_text("\n".join(["# Generated by ./ladder try: copies of stage files, changed.", *entries]) + "\n")
    targets = [target for target, _, _ in copies]
    configure = subprocess.run(["cmake", "-S", str(ROOT), "-B", str(a.build)], stdout=subprocess.DEVNULL)
    if configure.returncode != 0:
        raise StageError(f"CMake could not configure {a.build} with the copies of {stage} (its errors are above)")
    if subprocess.run(["cmake", "--build", str(a.build), "--target", *targets], stdout=sys.stderr).returncode != 0:
        raise StageError(f"the copies of {stage} did not build (the compiler's errors are above)")
    return [a.build / "try" / "bin" / t for t in targets]


def variant_target(stage, name, value=None):
    text = name if value is None else f"{name}_{value}"
    return f"try_{stage[:2]}_{re.sub(r'[^A-Za-z0-9]', '_', text)}"


def patch_target(stage, patch):
    return variant_target(stage, pathlib.Path(patch).stem)


def build_variants(a, stage, name, values):
    """Builds a copy of the stage for each value of the constant name (parse_change left out the file's own: the stage
    as it is runs that one); returns their paths and the file's value."""
    text = stage_file(stage).read_text()
    original = constant_variant(text, name, values[0])[1]
    copies = [(variant_target(stage, name, v), constant_variant(text, name, v)[0],
               f"a copy of {stage} with {name} = {v} (./ladder try)") for v in values]
    say(f"ladder: building {len(copies)} variant(s) of {stage} with {name} = {', '.join(values)} "
        f"(the file says {original}: the stage as it is runs that one)")
    return build_copies(a, stage, copies), original


def shown(path):
    """A path as a page or message shows it: relative to the repository when it is inside it."""
    path = pathlib.Path(path)
    return str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


def build_patch_variant(a, stage, patch_path):
    """Applies an experiment's patch to a copy of the stage file under <build>/try/ and builds it."""
    variant = patched_text(stage, patch_path)
    say(f"ladder: building {stage} with {shown(patch_path)}")
    note = f"a copy of {stage} with {pathlib.Path(patch_path).name} applied (./ladder try)"
    return build_copies(a, stage, [(patch_target(stage, patch_path), variant, note)])[0]


def try_base_args(a, stage):
    """The arguments every run of ./ladder try passes to the stage (and to its variants)."""
    if stage == GEMM:
        return ["--size", a.gemm_size, "--reps", str(a.gemm_reps), "--seed", str(a.seed), "--device", str(a.device),
                "--flush", a.flush]
    return ["-n", a.size, *regime_args(stage), *common_args(a)]


def cmd_try(a):
    stage = resolve_stage(a.stage)
    change = parse_change(stage, a.change)
    if change.kind == "file":  # a reader's own version of the stage file: scripts/runner/own.py
        from .own import try_file
        return try_file(a, stage, change.patch)
    if change.kind == "patch":
        return try_patch(a, stage, change.patch)
    name, values = change.name, change.values
    runs = [("as in the file", binary(a.build, stage), [])]
    if change.kind == "option":
        runs += [(f"{name} {v}", binary(a.build, stage), [name, v]) for v in values]
    else:
        paths, original = build_variants(a, stage, name, values)
        runs[0] = (f"{name} = {original} (the file)", runs[0][1], [])
        runs += [(f"{name} = {v}", str(p), []) for v, p in zip(values, paths)]
    return run_variants(a, stage, name, runs)


def try_patch(a, stage, patch_path):
    """The stage as in the file beside the stage with an experiment's patch applied, in both regimes."""
    exe = build_patch_variant(a, stage, patch_path)
    name = pathlib.Path(patch_path).stem
    runs = [("as in the file", binary(a.build, stage), []), (f"{name} (the patch)", str(exe), [])]
    return run_variants(a, stage, name, runs, patch=shown(patch_path))


def run_variants(a, stage, name, runs, **meta):
    """Runs each (label, executable, extra arguments) of ./ladder try, prints them side by side and saves them."""
    base = try_base_args(a, stage)
    rows = []
    for label, exe, extra in runs:
        r, _ = run_binary(a.build, stage, [*base, *extra], exe=exe)
        say(f"      {stage}: {label}")
        for row in r:
            row["variant"] = label
        rows.extend(r)
    print_try(stage, name, rows, stage == GEMM)
    if a.save:
        save(a.save, f"try_{stage}_{name.lstrip('-')}", rows, {**meta_from(rows[0]), "commit": git_commit(), **meta})
    return 0 if all_pass(rows) else 1


def experiments():
    """Every experiment kept as a patch: docs/experiments/<stage>/<name>.patch -> [(stage, path)]."""
    base = ROOT / "docs" / "experiments"
    return [(p.parent.name, p) for p in sorted(base.glob("*/*.patch"))] if base.exists() else []


def try_lines(rows, is_gemm):
    """One line per variant (and regime): (headers, body). Shared by ./ladder try and the docs."""
    if is_gemm:
        base = {r["pad"]: float(r["ms_median"]) for r in rows if r["variant"] == rows[0]["variant"]}
        body = [[r["variant"], f"tiled {r['tile']}" + (" padded" if r["pad"] == "true" else ""), r["check"],
                 f"{float(r['ms_median']):.3f}", fmt_num(r["gflops"], ".0f"), fmt_num(r["pct_cublas"], ".1f"),
                 f"{base[r['pad']] / float(r['ms_median']):.2f}"] for r in rows]
        return ["variant", "kernel", "check", "ms", "GFLOP/s", "% cuBLAS", "x file"], body
    base = {r["regime"]: float(r["ms_median"]) for r in rows if r["variant"] == rows[0]["variant"]}
    body = [[r["variant"], r["regime"], r["grid"], r["check"], f"{float(r['ms_median']):.4f}", fmt_num(r["gbps"], ".0f"),
             fmt_num(r["pct_peak"], ".1f"), f"{base[r['regime']] / float(r['ms_median']):.2f}", fmt_num(r["x_cub"], ".2f")]
            for r in rows]
    return ["variant", "regime", "grid", "check", "ms", "GB/s", "% peak", "x file", "x CUB"], body


def print_try(stage, name, rows, is_gemm):
    headers, body = try_lines(rows, is_gemm)
    first = rows[0]
    print(f"\n{stage} with {name} changed, on {first['device']}; median of {first['reps']} reps, L2 flush: "
          f"{first['l2_flush']}\n")
    print(table(headers, body))
    print("\n  x file: the unchanged stage's time / the variant's, in the same regime (above 1: the variant is faster)")


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
