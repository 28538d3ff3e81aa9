"""What the pages quote from the project's own files rather than from the result tables: the stages' code and
diffs, the saved machine code, the sanitizers' and ./ladder try's saved reports, and the build's settings. A quote of
code the files no longer hold fails the rendering, so a sentence that quotes a kernel follows it."""
import difflib
import itertools
import re

from ..tests.check_try_file import CASES, ORIGINAL, STAGE
from maint import block_requests as br, gemm_stage
from scripts.stages import describe, stage_file
from scripts.build import MIN_CMAKE
from .base import and_list, cpp_number, DocsError, one_match, pow2, result_text, ROOT, rows, state

def quoted(text, source, whose):  # `text`, where source (spaces ignored) holds it
    if re.sub(r"\s+", "", text) not in re.sub(r"\s+", "", source):
        raise DocsError(f"a page quotes `{text}` from {whose}, which no longer holds it: update the sentence")
    return f"`{text}`"
def code(stage, text): return quoted(text, re.sub(r"//[^\n]*|/\*.*?\*/", "", stage_file(stage).read_text(), flags=re.S), stage)
def patch_code(stage, name, text):  # a quote of the lines an experiment's patch adds
    patch = ROOT / "docs" / "experiments" / stage / f"{name}.patch"
    added = "".join(l[1:] for l in patch.read_text().splitlines() if l.startswith("+") and not l.startswith("+++"))
    return quoted(text, added, f"{patch.name}'s added lines")
def padded(tile):  # '16×17', while the stage's code pads the tile by one
    code(gemm_stage(), f"launch_tiled<{tile}, 1>")
    return f"{tile}×{int(tile) + 1}"
def excerpt(stage, start, end, through=False):
    """A stage file from the first line holding `start` to the first after it holding `end` (and that line, through)."""
    lines = stage_file(stage).read_text().splitlines()
    a = next(i for i, l in enumerate(lines) if start in l)
    b = next(i for i in range(a, len(lines)) if end in lines[i]) + (1 if through else 0)
    return "```cuda\n" + "\n".join(lines[a:b]).rstrip("\n") + "\n```"
def flag_list(stage, without=None):  # the options `stage --help` lists, as code; with `without`: those it does not list
    def listed(program): return [o["flags"][-1] for o in describe(program)["options"] if o["group"]]
    return [f"`{flag}`" for flag in listed(stage) if flag not in (listed(without) if without else [])]

# ---- the machine code ./maint/do profile saved (docs/results/sass_<stage>.txt) ------------------------------------
def sass_lines(stage):  # a stage not profiled yet: its page says so where it would quote the machine code
    note = f"{stage}: no docs/results/sass_{stage}.txt (./maint/do profile on a GPU)"
    return result_text(f"sass_{stage}.txt", note).splitlines()
def sass_span(stage, start, end, last=False):  # from the first instruction holding start to the first (last) holding end
    lines = sass_lines(stage)
    a = next(i for i, l in enumerate(lines) if start in l)
    after = [i for i in range(a + 1, len(lines)) if end in lines[i]]
    return lines[a:(after[-1] if last else after[0]) + 1]
def sass(stage, start, end, last=False): return "```\n" + "\n".join(sass_span(stage, start, end, last)) + "\n```"
def loads_per_iteration(stage): return sum("LDG" in l for l in sass_span(stage, "LDG", "BRA"))  # in the grid-stride loop
def lds_predicated(stage): return br.predicated("\n".join(sass_lines(stage)))  # @P LDS, not a branch around them
def gemm_lds(stage, tile, pad):
    """The shared-load instructions of one tiled-kernel instantiation, by width: '16 `LDS` and 4 `LDS.128`'."""
    widths = br.lds_widths("\n".join(sass_lines(stage)))[int(tile), int(pad)]
    return " and ".join(f"{v} `{k}`" for k, v in sorted(widths.items()))

# ---- the sanitizers' and ./ladder try's saved reports --------------------------------------------------------------
def racecheck(): return "```\n" + (state.results / "racecheck.txt").read_text().strip() + "\n```"

def memcheck():
    """./maint/do measure's memcheck runs of 06 (docs/results/memcheck.txt, each run a line "$ <the command>" and its
    "ERROR SUMMARY: N errors"): the commands, the sizes (and offsets) they ran at, and the errors in all."""
    text = result_text("memcheck.txt", "docs/results/memcheck.txt: compute-sanitizer's memcheck of 06")
    runs, command = [], None
    for line in text.splitlines():
        command = line[2:].strip() if line.startswith("$ ") else command
        if m := re.search(r"ERROR SUMMARY: (\d+) error", line):
            runs.append((command, int(m.group(1))))
            command = None
    if not runs or any(c is None for c, _ in runs):
        raise DocsError("docs/results/memcheck.txt: every run must start with '$ <command>' and end with its "
                        "ERROR SUMMARY line")
    sizes = [re.search(r"-n (\S+)", c).group(1) + (f" at offset {m.group(1)}" if (m := re.search(r"--offset (\d+)", c))
                                                   else "") for c, _ in runs]
    return {"commands": "```\n" + "\n".join(c for c, _ in runs) + "\n```", "sizes": ", ".join(sizes),
            "errors": sum(e for _, e in runs)}
def own_diff(name):  # a planted copy of 05 (maint/tests/check_try_file.py) as `diff -u stage_file mine.cu` shows it
    after = next(c[1] for c in CASES if c[0] == name)(ORIGINAL)
    return "```diff\n" + "\n".join(difflib.unified_diff(ORIGINAL.splitlines(), after.splitlines(), f"{STAGE}/"
                                                         f"{stage_file(STAGE).name}", "mine.cu", n=3, lineterm="")) + "\n```"
def own_report(name):  # what ./ladder try printed for the case on the GPU of these results
    text = result_text(f"own_{name}.txt", f"docs/results/own_{name}.txt: ./ladder try on a reader's file")
    return "```text\n" + text.rstrip() + "\n```"
def own_failed(name, tool=None):
    """The checks the case failed; tool=True: those where compute-sanitizer reported the error, False: the others."""
    lines = own_report(name).splitlines()
    return [line.split(None, 1)[1].split(":")[0] for line, after in zip(lines, lines[1:] + [""])
            if line.startswith("  FAIL ") and tool in (None, after.strip().startswith("compute-sanitizer:"))]
def variant_checks(name, variant):  # 'PASS (stream), PASS (tree)': a try result's verdicts for one variant
    return ", ".join(f"{r['check']} ({r.get('regime') or r['tile']})" for r in rows(name) if r["variant"] == variant)

# ---- the build ---------------------------------------------------------------------------------------------------
def build_needs():
    """The oldest CMake ./ladder takes, and the compute capabilities CMake builds for without a GPU
    (cmake/CudaArchitectures.cmake): the oldest, and all as '7.5, 8.0 and 9.0 (plus PTX for newer GPUs)'."""
    m = re.search(r'LADDER_DEFAULT_CUDA_ARCHITECTURES "([^"]+)"', (ROOT / "cmake" / "CudaArchitectures.cmake").read_text())
    archs = m.group(1).split(";")
    ccs = [f"{a.split('-')[0][:-1]}.{a.split('-')[0][-1]}" for a in archs]
    ptx = " (plus PTX for newer GPUs)" if any(not a.endswith("-real") for a in archs) else ""  # no -real: PTX too
    return {"cc": ccs[0], "cmake": MIN_CMAKE, "all": and_list(ccs) + ptx}

# ---- what common/ holds in code rather than in a constant: the flush's multiples and the self-test's lists ---------
def times_l2(function):  # 4 of `inline std::size_t l2_write_bytes(std::size_t l2_bytes) { return 4 * l2_bytes; }`
    return int(one_match("common", rf"\b{function}\(std::size_t (\w+)\) \{{ return (\d+) \* \1; \}}").group(2))
def self_test_plan(field, full):  # the sizes or blocks --self-test full (quick) runs: `sizes = full ? T{...} : T{...}`
    m = one_match("common", rf"\b{field} = full \? \w+\{{([^}}]*)\}}\s*: \w+\{{([^}}]*)\}}")
    return [cpp_number(x, f"the self-test's {field}") for x in m.group(1 if full else 2).split(",")]
def size_list(sizes):  # '1–4, 33, 4097–4100' (runs of four or more as ranges), from 2^20 on 2^k or 2^k+1
    runs = [[n for _, n in run] for _, run in itertools.groupby(enumerate(sizes), lambda p: p[1] - p[0])]
    def one(n): return str(n) if n < 2 ** 20 else f"{pow2(n - 1)}+1" if "^" in pow2(n - 1) else pow2(n)
    return ", ".join(f"{one(r[0])}–{one(r[-1])}" if len(r) > 3 else ", ".join(map(one, r)) for r in runs)
