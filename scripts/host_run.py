"""Runs a stage's own kernels on the host and reads back what its threads did.

The stage file's device code (its kernels, device functions, constants and `using` lines) is pasted, as it is, after
scripts/host/cuda_host.hpp (what it models and logs). Only `__shared__` declarations are rewritten, into arrays that
log; `#line` keeps the stage file's line numbers in the log. Which kernels there are, and 08's tiles, are read from the
stage file (entries()). The host functions but main (the launcher, blocks_per_sm) are pasted too, each `<<<...>>>`
launch rewritten for scripts/host/runtime.hpp, so the entry "launcher" runs the launches the stage's launcher makes.

  run(stage, entry, **options) -> Trace       one run's log and results (scripts/host/driver.hpp lists the options)"""
import contextlib
import functools
import hashlib
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

from .stages import ROOT

HOST = ROOT / "scripts" / "host"
CXX = os.environ.get("CXX", "g++")
HOST_RUN_LIMIT = 20  # seconds: one host run sums at most a few thousand floats, in well under one
NEVER_ENDS = "a loop that never ends, or a barrier not every thread of the block reaches"
SHOWN_AS = {}  # stage -> the file its host-run messages name, while stage_text() holds a reader's file

SHARED = re.compile(r"(extern\s+)?__shared__\s+([\w:]+)\s+(\w+)((?:\s*\[[^\]]*\])*)\s*;")
LAUNCH = re.compile(r"([\w:]+(?:<[^<>;]*>)?)\s*<<<(.*?)>>>\s*\(", re.S)
COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
DEFINE = re.compile(r"^[ \t]*#[ \t]*define\b(?:.*\\\n)*.*", re.M)  # a macro, its continued lines too
BRACKETS = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}
# What the host run does not model: a file that uses one is refused by name, and the GPU checks still run (volatile:
# the pre-Volta idiom, racecheck's; a namespace block: one item here, whose functions the rewriting does not reach).
UNMODELLED = re.compile(r"\b(__activemask|__match_(?:any|all)_sync|__syncthreads_(?:or|and|count)|__nanosleep|clock64|"
                        r"clock|__globaltimer|asm|this_grid|grid_group|coalesced_threads|coalesced_group|"
                        r"labeled_partition|binary_partition|memcpy_async|this_cluster|cluster_group|invoke_one|"
                        r"inclusive_scan|exclusive_scan|volatile|namespace(?=\s*\w*\s*\{))\b")

class HostRunError(Exception):
    """The stage's code did not build or run on the host; the message names the stage."""

class HostRunUnmodelled(HostRunError):
    """A file using something the host run does not model: not a failure of the file, a check not run."""

@contextlib.contextmanager
def stage_text(stage, text, shown_as=None):
    """Within the block, host runs read a copy of the stage's directory and common/ whose stage file holds text (a
    reader's version of it, or a planted drift); shown_as: the file the messages name, where the text came from one."""
    global ROOT
    with tempfile.TemporaryDirectory() as tmp:
        for part in (stage, "common"):
            shutil.copytree(ROOT / part, pathlib.Path(tmp) / part)
        stage_path(stage, tmp).write_text(text)
        saved, ROOT = ROOT, pathlib.Path(tmp)
        if shown_as:
            SHOWN_AS[stage] = str(shown_as)
        try:
            yield
        finally:
            ROOT = saved
            SHOWN_AS.pop(stage, None)

def stage_path(stage, root=None):
    """The stage's .cu file, under root (default: ROOT, which stage_text() may point at an edited copy)."""
    return next((pathlib.Path(root or ROOT) / stage).glob("*.cu"))

# ---- the stage file's device code, unchanged but for its __shared__ declarations ---------------------------------

def _shared(m):
    extern, kind, name, dims = m.groups()
    if extern:
        return f'auto {name} = ladder_host::dynamic_shared<{kind}>("{name}");'
    sizes = re.findall(r"\[([^\]]*)\]", dims)
    return f'auto {name} = ladder_host::shared<{", ".join([kind, *sizes])}>("{name}");'

def top_level_items(text):
    """(first line number, text) of each top-level declaration: from a line at brace depth 0 to the line that
    brings the depth back to 0 and ends it. Comments and preprocessor lines between items are dropped."""
    items, start, depth, lines = [], None, 0, text.splitlines()
    for number, line in enumerate(lines, 1):
        code = re.sub(r"//.*", "", line)
        if start is None:
            if not code.strip() or code.lstrip().startswith("#"):
                continue
            start = number
        depth += code.count("{") - code.count("}")
        if depth == 0 and code.rstrip().endswith(("}", ";")):
            items.append((start, "\n".join(lines[start - 1:number])))
            start = None
    return items

def _shared_pointers(item, names, text):
    """`T* p` parameters of a __device__ function that a __shared__ array of the file reaches, named as one or passed
    one by a call in the file: what the array decays to, so a pointer that logs."""
    head = item.split("{", 1)[0]
    if "__device__" not in head or not names or not (f := re.search(r"(\w+)\s*\((.*)\)", head, re.S)):
        return item
    calls = re.finditer(rf"\b{f[1]}\s*\(([^()]*)\)", text)
    passed = {i for call in calls for i, arg in enumerate(call[1].split(",")) if arg.strip() in names}
    out = head  # the head with those parameters rewritten
    for i, param in enumerate(_top_level_split(f[2])):
        if i in passed or re.search(rf"\*\s*(?:{'|'.join(names)})$", param):
            out = out.replace(param, re.sub(r"\b([\w:]+)\s*\*\s*(\w+)$", r"ladder_host::View<\1, 0> \2", param), 1)
    return out + item[len(head):]

def device_code(text, path, launcher=False):
    """The stage's device code, kernels and what they use, with #line so logged lines are the stage file's; with
    launcher, its host functions too (main left out), each launch rewritten for runtime.hpp."""
    names = [m.group(3) for m in SHARED.finditer(text)]
    keep = [f'#line {text.count(chr(10), 0, m.start()) + 1} "{path}"\n{m[0]}' for m in DEFINE.finditer(text)]  # macros
    for number, item in top_level_items(text):
        if re.search(r"\bint main\(", item):
            continue
        host_only = "<<<" in item or "CUDA_CHECK" in item
        wanted = re.search(r"__(device|global)__|^constexpr |^using |^namespace \w+ = |smem_bytes\(", item, re.M)
        if launcher and (host_only or not wanted):
            keep.append(f'#line {number} "{path}"\n{host_launches(item)}')
        elif wanted and not host_only:
            refuse_unmodelled(item, number, path)
            keep.append(f'#line {number} "{path}"\n{SHARED.sub(_shared, _shared_pointers(item, names, text))}')
    return _auto_elements("\n".join(keep))

def _auto_elements(code):
    """`auto x = smem[i]`: an element of a shared array (or pointer) there is a proxy that logs, and auto would copy
    the proxy, which writes through; the element's type holds the value, as auto does on a GPU."""
    types = {n: t for t, n in re.findall(r"View<([\w:]+), 0> (\w+)", code)}
    types.update(re.findall(r"auto (\w+) = ladder_host::(?:dynamic_)?shared<([\w:]+)", code))
    return re.sub(r"\bauto(\s+\w+\s*=\s*)(\w+)(?=\s*\[)", lambda m: types.get(m[2], "auto") + m[1] + m[2], code)

def refuse_unmodelled(item, first_line, path):
    """HostRunUnmodelled naming the first use in item of what the host run does not model: its file, line and text."""
    blanked = COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), item)  # comments out, lines kept
    for offset, line in enumerate(blanked.split("\n")):
        if found := UNMODELLED.search(line):
            where = f"{path}:{first_line + offset}: `{item.split(chr(10))[offset].strip()}`"
            raise HostRunUnmodelled(f"the host run does not model `{found.group(1)}` ({where}); the GPU checks "
                                    "still run")

def _closing(text, start):
    """The index just past the bracket that closes the one at text[start]."""
    depth = 0
    for i in range(start, len(text)):
        depth += BRACKETS.get(text[i], 0)
        if depth == 0:
            return i + 1
    raise HostRunError("the host run cannot find the end of a launch's arguments")

def _top_level_split(text):
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += BRACKETS.get(c, 0)
        if c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    return parts + [text[start:].strip()]

def host_launches(item):
    """A host function with each `kernel<<<grid, block[, smem[, stream]]>>>(args)` as
    `ladder_host::launch([&] { kernel(args); }, grid, block[, smem[, stream]])` (runtime.hpp)."""
    while (m := LAUNCH.search(item)):
        end = _closing(item, m.end() - 1)
        config, call = ", ".join(_top_level_split(m.group(2))), f"{m.group(1)}{item[m.end() - 1:end]}"
        item = f"{item[:m.start()]}ladder_host::launch([&] {{ {call}; }}, {config}){item[end:]}"
    return item

def launcher_name(text):
    """The launcher main() hands to the harness: run_reduce_stage's or run_gemm_stage's fourth argument."""
    code = COMMENT.sub("", text)
    if not (m := re.search(r"\brun_(?:reduce|gemm)_stage\(", code)):
        return None
    args = _top_level_split(code[m.end():_closing(code, m.end() - 1) - 1])
    return args[3] if len(args) > 3 and re.fullmatch(r"\w+", args[3]) else None

def entries(text):
    """[(name, call, dynamic shared bytes, gemm)] of the kernels in a stage file: what the driver can launch."""
    out, kernel = [], r"__global__\s+{0}void\s+{0}(\w+)\(".format(r"(?:__launch_bounds__\([^)]*\)\s*)?")
    defined = {m[1]: re.search(r"template\s*<[^>]*>\s*$", text[:m.start()]) for m in re.finditer(kernel, text)}
    if "reduce_kernel" in defined and "template <Combine kCombine>" not in text:  # a template: through the launcher
        out.append(("reduce", None if defined["reduce_kernel"] else "reduce_kernel(a.in, a.n, a.out)", "smem_bytes(b)",
                    False))
    for combine in dict.fromkeys(re.findall(r"reduce_kernel<Combine::k(\w+)>", text)):
        dashed = re.sub(r"(?<!^)([A-Z])", r"-\1", combine).lower()  # as the options say it: TwoPass -> two-pass
        out.append((dashed, f"reduce_kernel<Combine::k{combine}>(a.in, a.n, a.out, a.partials, a.ticket)",
                    "smem_bytes(b)", False))
    if "one_block_kernel" in defined:
        out.append(("one-block", "one_block_kernel(a.in, static_cast<unsigned>(a.n), a.out)", "0", False))
    for tile, pad in tiles(text):
        out.append((f"tiled-{tile}-{pad}", f"gemm_kernel<{tile}, {pad}>(a.A, a.B, a.C, a.M, a.N, a.K)", "0", True))
    return out

def tiles(text):
    """08's (kTile, kPad) instantiations, as the launcher names them."""
    return [tuple(map(int, t)) for t in dict.fromkeys(re.findall(r"launch_tiled<(\d+), (\d+)>", text))]

def combine_names():
    """The Combine enum's values in order, as the options name them: kCombineNames of common/reduce_stage.hpp."""
    text = (pathlib.Path(ROOT) / "common" / "reduce_stage.hpp").read_text()
    return re.findall(r'"([\w-]+)"', re.search(r"kCombineNames\[\] = \{([^}]*)\}", text)[1])

def ladder_types():
    """What the kernels and launchers name of common/reduce_stage.hpp and gemm_stage.hpp (Combine, ReduceLaunch,
    FirstLaunch, GemmLaunch, ceil_div), pasted as they are."""
    found = []
    for header in ("reduce_stage.hpp", "gemm_stage.hpp"):
        text = (ROOT / "common" / header).read_text()
        found += re.findall(r"^(?:enum class|struct) (?!\w*Stage\b)\w+ \{.*?^\};|^template <typename T>\n__host__ "
                            r"__device__ constexpr T ceil_div.*?$", text, re.M | re.S)
    return "namespace ladder {\n" + "\n".join(found) + "\n}  // namespace ladder\n"

def program(text, path, launcher=True):
    """The host run's program: the kernels as entries, and (launcher) the entry "launcher", the stage's own."""
    table = [f'{{"{name}", [](ladder_host::Args& a) {{ {call}; }}, [](unsigned b) -> std::size_t {{ (void)b; return '
             f'{smem}; }}, {"true" if gemm else "false"}}}' for name, call, smem, gemm in entries(text) if call]
    if name := (launcher_name(text) if launcher else None):
        gemm = "run_gemm_stage" in text
        call = (f"{name}(a.A, a.B, a.C, a.M, a.N, a.K, a.gemm, nullptr)" if gemm
                else f"{name}(a.in, a.n, a.out, a.launch, nullptr)")
        table.append(f'{{"launcher", [](ladder_host::Args& a) {{ {call}; }}, nullptr, {str(gemm).lower()}}}')
    return (f'#include "cuda_host.hpp"\n#include "runtime.hpp"\n{ladder_types()}{device_code(text, path, bool(name))}\n'
            f'#include "driver.hpp"\n'
            f"int main(int argc, char** argv) {{\n  ladder_host::main(argc, argv, {{\n    "
            f"{','.join(chr(10) + '    ' + t for t in table).lstrip()}}});\n}}\n")

@functools.lru_cache(maxsize=None)
def _build(source):
    command = [CXX, "-std=c++17", "-O1", "-Wall", "-Wextra", "-Wno-unknown-pragmas"]  # keyed, with the headers' text
    digest = hashlib.sha256(" ".join([*command, source, *(p.read_text() for p in sorted(HOST.glob("*.hpp")))]).encode())
    directory = pathlib.Path(tempfile.gettempdir()) / "cuda-ladder-host-run"
    directory.mkdir(exist_ok=True)
    exe = directory / digest.hexdigest()[:16]
    warnings = exe.with_suffix(".warnings")
    if not exe.exists():  # built under a name of this process's own, then renamed: tests run in parallel
        mine, src = directory / f"{exe.name}.{os.getpid()}", directory / f"{exe.name}.{os.getpid()}.cpp"
        src.write_text(source)
        build = subprocess.run([*command, "-I", str(HOST), "-o", str(mine), str(src)], capture_output=True, text=True)
        src.unlink()
        if build.returncode:
            return None, build.stderr
        warnings.write_text(build.stderr)
        os.replace(mine, exe)
    if warnings.exists() and warnings.read_text().strip():  # shown, not failed: the GPU build only warns too
        print(f"host run: the host build of the device code warns:\n{warnings.read_text().strip()}", file=sys.stderr)
    return exe, ""

def executable(stage, launcher=False):
    """The stage's host-run program, with its launcher where that builds on the host (else the kernels alone);
    launcher=True: the launcher is needed, and HostRunUnmodelled says why it is not there."""
    path = stage_path(stage)
    text = path.read_text()
    shown = SHOWN_AS.get(stage, f"{stage}/{path.name}")
    exe, errors = _build(program(text, shown))
    why = next((line for line in errors.splitlines() if "error" in line), "").strip()
    if exe is None and launcher_name(text) and (kernels := _build(program(text, shown, launcher=False))[0]):
        if not launcher:
            return kernels
        raise HostRunUnmodelled(f"the host run cannot run the launcher of {shown} on the host ({why}); the GPU "
                                "checks still run")
    if exe is None and stage in SHOWN_AS:  # a reader's file, which nvcc compiled: what the host run cannot model
        raise HostRunUnmodelled(f"the host run cannot build {shown} on the host ({why}); the GPU checks still run")
    if exe is None:
        raise HostRunError(f"{shown}: its device code does not build on the host:\n{errors}")
    if launcher and not launcher_name(text):
        raise HostRunUnmodelled(f"the host run finds no launcher handed to the harness in {shown}'s main(); the GPU "
                                "checks still run")
    return exe

# ---- one run, and its log ------------------------------------------------------------------------------------------

@dataclass
class Trace:
    log: str  # the run's every line (cuda_host.hpp says what each holds): the pictures read the rest
    results: dict = field(default_factory=dict)  # {(region, element): value}
    readers: dict = field(default_factory=dict)  # {element: [global thread, ...]}
    sums: dict = field(default_factory=dict)  # {element: the result with only that element 1}
    outside: set = field(default_factory=set)  # the threads that brought a NaN to a sum: a read outside the input

WORDS = {"block": "block {}", "grid": "grid {}", "n": "n = {}", "offset": "offset {}", "combine": "{}",
         "reverse": "threads run last to first", "launches": "{} launches", "order": "blocks run {}",
         "blocks": "blocks run {}", "limit": "grid limit {}", "tile": "tile {}", "pad": "pad {}", "m": "M = {}",
         "k": "K = {}"}
PLAIN = {"blocks": ["", "last to first", "shuffled"], "reverse": [None, ""]}

def run(stage, entry, **options):
    options = tuple(sorted((k, ",".join(map(str, v)) if isinstance(v, (list, tuple)) else v)
                           for k, v in options.items()))
    return _trace(executable(stage, entry == "launcher"), stage, entry, options)

@functools.lru_cache(maxsize=256)
def _trace(exe, stage, entry, options):
    """The run's trace, parsed once (callers read a Trace and change none of it): its results, and the sums and
    readers of the runs with one element 1."""
    said = ", ".join(WORDS[k].format(PLAIN[k][int(v)] if k in PLAIN else v) for k, v in options  # in a reader's words
                     if k in WORDS and v not in (0, "0", None) and not (k == "launches" and str(v) == "1"))
    where = f"{SHOWN_AS.get(stage, stage)} (its {entry}, {said})"
    try:
        done = subprocess.run([str(exe), entry, *(f"{k}={v}" for k, v in options)], capture_output=True, text=True,
                              timeout=HOST_RUN_LIMIT)
    except subprocess.TimeoutExpired:
        raise HostRunError(f"{where}: the host run did not finish within {HOST_RUN_LIMIT} s: {NEVER_ENDS}") from None
    if done.returncode:
        why = done.stderr.strip().removeprefix("host run: ").replace(f"{exe.name}: ", "") or (
            f"killed by signal {-done.returncode} (a read or write outside its memory)" if done.returncode < 0
            else f"exit status {done.returncode}")
        raise HostRunError(f"{where}: {why}")
    t = Trace(done.stdout)
    for line in done.stdout.splitlines():
        kind, *f = line.split()
        if kind == "R":
            t.results[(f[0], int(f[1]))] = float(f[2])
        elif kind == "E":  # a run with only element f[0] 1: its sum, and each thread:first value not 0
            t.sums[int(f[0])] = float(f[1])
            t.readers[int(f[0])] = [int(x.split(":")[0]) for x in f[2:]]
            t.outside.update(int(x.split(":")[0]) for x in f[2:] if "nan" in x)
    return t

def kernel_entries(stage):  # those the driver can launch by themselves
    return [name for name, call, *_ in entries(stage_path(stage).read_text()) if call]
