"""./ladder try: copies of a stage with a constant, an option or an experiment's patch changed, built under
<build>/try/ and run beside the stage as it is; the table the docs show too."""
import collections
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

from ..cli import say
from ..cmake_calls import write_calls
from .results import all_pass, fmt_num, gemm_args, git_commit, meta_from, run_args, run_binary, save, size_args, table
from .stages import (ROOT, StageError, UsageProblem, binary, constants, launch_options, ladder_stages, role,
                     regime_args, resolve, stage_file)


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
    if name.startswith("-"):  # checked by the stage program itself, once it is built (check_option)
        return Change("option", name, values, None)
    return Change("constant", name, check_constant(stage, name, values), None)


def check_option(stage, option, values):
    """An option ./ladder try varies: one of the stage's launch options (its --describe says which), each value
    checked by the stage program itself."""
    varied = launch_options(stage)
    if option not in varied:
        raise UsageProblem(f"try {stage} {option}=...: ./ladder try varies {', '.join(varied)} of {stage} (or a "
                           "constant of its file, NAME=v1,v2, or an experiment's patch)")
    for v in values:
        try:
            resolve(stage, [option, v])
        except UsageProblem as e:
            raise UsageProblem(f"try {stage} {option}={v}: {e}") from None


# A constant ./ladder try changes is a count in the kernel (loads in flight, ...): a whole number from 1 to 64.
# Zero or a negative count does not compile; much more than 64 only spills registers.
CONSTANT_RANGE = (1, 64)


def check_constant(stage, name, values):
    """The values to build a copy for: all but the file's own (the stage as it is runs that one)."""
    found = constants(stage)
    if name not in found:
        patches = sorted(p.name for p in (ROOT / "docs" / "experiments" / stage).glob("*.patch"))
        have = f"its constants: {', '.join(found)}" if found else \
            "it has none: vary one of its options (--option=v1,v2)" + \
            (f" or try one of its experiments ({', '.join(patches)})" if patches else "")
        raise UsageProblem(f"try {stage} {name}=...: {stage}/{stage_file(stage).name} has no constant {name} "
                           f"({have})")
    lo, hi = CONSTANT_RANGE
    for v in values:
        if not v.isdigit() or not lo <= int(v) <= hi:
            raise UsageProblem(f"try {stage} {name}={v}: {name} is a count (the file says {name} = {found[name]}): "
                               f"give whole numbers from {lo} to {hi}")
    own = found[name].strip()
    others = [v for v in values if not (own.isdigit() and int(v) == int(own))]
    if not others:
        raise UsageProblem(f"try {stage} {name}={','.join(values)}: the file says {name} = {own} already, so "
                           f"there is nothing to compare: give other values")
    return others


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
                if len(paths) == 1 and owner in ladder_stages() else ""
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


def build_copies(a, stage, copies):
    """Writes each (target, source text, note) copy of a stage file under <build>/try/<target>/, lists it in
    <build>/try/variants.json and, as CMake calls, variants.cmake (which the top CMakeLists.txt includes; earlier
    copies whose files still exist stay listed) and builds the targets; returns their executables."""
    src = stage_file(stage)
    listing = a.build / "try" / "variants.json"
    entries = {target: (path, note) for target, path, note in
               (json.loads(listing.read_text()) if listing.exists() else []) if pathlib.Path(path).exists()}
    for target, text, note in copies:
        path = a.build / "try" / target / src.name
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        note = re.sub(r"[^\w .,=+()/-]", "_", note)  # it becomes a C string (the program's note): nothing to escape
        entries[target] = (path.as_posix(), note)
    listing.write_text(json.dumps([[t, *e] for t, e in entries.items()], indent=1) + "\n")
    write_calls(a.build / "try" / "variants.cmake", "Generated by ./ladder try: copies of stage files, changed.",
                [("ladder_add_variant", t, *e) for t, e in entries.items()])
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
    if role(stage) == "gemm":
        return gemm_args(a)
    return [*size_args(a), *regime_args(stage), *run_args(a)]


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
    print_try(stage, name, rows, role(stage) == "gemm")
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
