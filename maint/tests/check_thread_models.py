#!/usr/bin/env python3
"""The host runs behind the stage pages' pictures and counts (scripts/host_run.py, maint/block_requests.py),
held to the kernels' machine code and to Nsight Compute. No GPU: it compiles each stage's device code with the
host compiler and reads the committed docs/results/ncu.csv, ncu_source.csv and sass_*.txt (which
maint/tests/check_saved_sass.py holds to the current kernels).

  1. sums: every kernel of every reduce stage, run on the host, adds each element once: the sum is exact at input
     offsets 0-3, at awkward n, at several block sizes and grids and with the threads run in either order (a lost
     or doubled element, a read outside the input, a read of a shared word no thread wrote fails here); every
     tiled GEMM's C equals the product at edge shapes and several steps along K; stages whose pages say their
     block_reduce() is another's have it word for word;
  2. machine code: the facts the host run's requests rely on (block_requests.COMPILED) hold in sass_<stage>.txt;
     each lane's shuffles (kind and distance) are those of the SASS, in order; the float4 loads a thread has in
     flight in the main loop are as many as the SASS issues before its first add;
  3. per line: for every profiled launch, each source line's shared-memory instructions, wavefronts and ideal
     wavefronts equal Nsight Compute's source counters (summed over the line's SASS instructions) exactly;
  4. aggregate: the bank conflicts lie within block_requests.TOLERANCE of the aggregate counters;
  5. planted drifts: kernel edits, each in a copy of the project, and edits of the analysis must fail 1-3 with a
     message that names the stage and the line or step; a comment-only edit must pass.

  python3 -m tests.check_thread_models [--cxx COMPILER] [--stage STAGE | --drifts STAGE]   (CTest: one of each per
                                                                                           stage, and one across)
"""
import argparse
import csv
import os
import pathlib
import re
import sys
from unittest import mock

ROOT = pathlib.Path(__file__).resolve().parents[2]
RESULTS = ROOT / "docs" / "results"
from maint import block_requests as br
from scripts import host_run
from scripts.host_checks import gemm_problems, sum_problems
from scripts.stages import reduce_stages


def read(name):
    with open(RESULTS / name, newline="") as f:
        return list(csv.DictReader(f))


def ncu_row(stage, variant):
    return next(r for r in read("ncu.csv") if r["stage"] == stage and r["variant"] == variant)


# ---- 1. the sums: scripts/host_checks.py ------------------------------------------------------------------------

# ---- 2. the machine code ------------------------------------------------------------------------------------------

def sass_functions(stage):
    """The saved SASS, one list of instruction lines per function (each starts again at /*0000*/)."""
    functions = []
    for line in (RESULTS / f"sass_{stage}.txt").read_text().splitlines():
        if line.startswith("/*0000*/"):
            functions.append([])
        if functions:
            functions[-1].append(line)
    return functions


SHFL = re.compile(r"SHFL\.(DOWN|UP|BFLY|IDX) PT, R\d+, R\d+, (0x[0-9a-f]+), 0x1f")
KINDS = {0: "DOWN", 1: "UP", 2: "BFLY", 3: "IDX"}


def host_shuffles(stage, block=64):
    """Lane 0's shuffles in block 0 of the stage's first kernel: [(kind, the lane it read: for lane 0 the distance,
    or the lane mask of a butterfly)]."""
    t = host_run.run(stage, host_run.kernel_entries(stage)[0], block=block, n=block)
    return [(KINDS[kind], abs(src)) for b, tid, phase, kind, src, value, result in t.shuffles if b == 0 and tid == 0]


def shuffle_problems(stage):
    host = host_shuffles(stage)
    out = []
    for f, lines in enumerate(sass_functions(stage)):
        sass = [(m.group(1), int(m.group(2), 16)) for m in map(SHFL.search, lines) if m]
        sass = sass[:len(host)] if len(sass) >= len(host) else sass  # the divergent fallback repeats them
        for step, (mine, theirs) in enumerate(zip(host, sass), 1):
            if mine != theirs:
                out.append(f"{stage}: shuffle step {step} of lane 0 is SHFL.{mine[0]} by {mine[1]} in the host run, "
                           f"SHFL.{theirs[0]} by {theirs[1]} in function {f + 1} of sass_{stage}.txt")
                break
        else:
            if len(sass) != len(host):
                out.append(f"{stage}: {len(host)} shuffles in the host run, {len(sass)} in function {f + 1} of "
                           f"sass_{stage}.txt")
    return out


def host_loads_in_flight(stage, threads=64):
    """The float4 loads one thread copies into its array before it reuses the array's first slot."""
    t = host_run.run(stage, host_run.kernel_entries(stage)[0], block=threads, n=4 * threads * 40)
    mine = [dest for b, tid, phase, how, region, element, dest in t.loads if b == 0 and tid == 0 and how == "assign"]
    return mine[1:].index(mine[0]) + 1 if mine and mine[0] in mine[1:] else len(mine)


def sass_loads_in_flight(lines):
    """The longest run of 128-bit global loads with no FADD between them."""
    best = run = 0
    for line in lines:
        if "LDG.E.128" in line:
            run += 1
            best = max(best, run)
        elif "FADD" in line:
            run = 0
    return best


def loads_problems(stage):
    host = host_loads_in_flight(stage)
    return [f"{stage}: a thread of the host run has {host} float4 loads in flight, function {f + 1} of "
            f"sass_{stage}.txt issues {n} before its first add"
            for f, n in enumerate(map(sass_loads_in_flight, sass_functions(stage))) if n != host]


def facts_problems(stage):
    lines = (RESULTS / f"sass_{stage}.txt").read_text().splitlines()
    return [f"sass_{stage}.txt no longer shows: {text}" for text, holds in br.COMPILED.get(stage, []) if not holds(lines)]


# Stages whose pages say their block_reduce() is another's, word for word.
SAME_BLOCK_REDUCE = {"02_grid_stride": "01_naive", "06_float4": "05_shuffle", "07_multiblock": "05_shuffle"}


def function_text(stage, signature="__device__ float block_reduce"):
    text = host_run.stage_path(stage).read_text()
    start = text.index(signature)
    return text[start:text.index("\n}\n", start)]


def same_problems():
    return [f"{stage}'s block_reduce() is no longer {same}'s word for word, as its page says"
            for stage, same in SAME_BLOCK_REDUCE.items() if function_text(stage) != function_text(same)]


def machine_code_problems(stage):
    out = facts_problems(stage)
    if stage in reduce_stages() and host_shuffles(stage):  # the stages whose kernels shuffle, as their host runs show
        out += shuffle_problems(stage)
    if stage in reduce_stages() and host_loads_in_flight(stage):  # and those that keep float4 loads in flight
        out += loads_problems(stage)
    return out


# ---- 3 and 4. the profiler ----------------------------------------------------------------------------------------

def line_problems(stage=None, compiled=True):
    source = read("ncu_source.csv")
    return [p for s, v in br.PROFILED if stage in (None, s)
            for c in br.compare_lines(ncu_row(s, v), source, compiled) for p in c.problems()]


def aggregate_problems(stage=None):
    return [p for s, v in br.PROFILED if stage in (None, s) for c in br.compare(ncu_row(s, v)) for p in c.problems()]


def stage_problems(stage):
    """Everything checks 1-3 say about one stage."""
    sums = sum_problems(stage) if stage in reduce_stages() else gemm_problems(stage)
    return sums + machine_code_problems(stage) + line_problems(stage)


# ---- 5. planted drifts --------------------------------------------------------------------------------------------

def nth(text, old, new, k):
    """text with the k-th (0-based) occurrence of old replaced by new."""
    at = -1
    for _ in range(k + 1):
        at = text.index(old, at + 1)
    return text[:at] + new + text[at + len(old):]


# (what, stage, edit of the stage file's text)
KERNEL_DRIFTS = [
    ("03's padding i / 16", "03_padding", lambda t: t.replace("i + i / 32", "i + i / 16")),
    ("04's padding i / 16", "04_warp_unroll", lambda t: t.replace("i + i / 32", "i + i / 16")),
    ("04's unrolled steps indexed s * tid", "04_warp_unroll",
     lambda t: nth(t, "const unsigned index = 2 * s * tid;", "const unsigned index = s * tid;", 1)),
    ("04's unrolled steps without padding", "04_warp_unroll",
     lambda t: nth(t, "smem[padded(index)] += smem[padded(index + s)]", "smem[index] += smem[index + s]", 1)),
    ("01's tid transposed", "01_naive", lambda t: t.replace(
        "const unsigned tid = threadIdx.x;", "const unsigned tid = threadIdx.x % 32 * (blockDim.x / 32) + threadIdx.x / 32;")),
    ("02's tid transposed", "02_grid_stride", lambda t: t.replace(
        "const unsigned tid = threadIdx.x;", "const unsigned tid = threadIdx.x % 32 * (blockDim.x / 32) + threadIdx.x / 32;")),
    ("06's shuffle offsets reversed", "06_float4",
     lambda t: t.replace("for (int offset = 16; offset > 0; offset /= 2)", "for (int offset = 1; offset < 32; offset *= 2)")),
    ("05's shuffle stopping at offset 2", "05_shuffle", lambda t: t.replace("offset > 0;", "offset > 2;")),
    ("07 with __shfl_xor_sync", "07_multiblock", lambda t: t.replace("__shfl_down_sync(", "__shfl_xor_sync(")),
    ("08's kPad 1 -> 2", "08_gemm_tiled", lambda t: t.replace("<16, 1>", "<16, 2>").replace("<32, 1>", "<32, 2>")),
    ("07's kLoadsInFlight 2", "07_multiblock",
     lambda t: t.replace("constexpr int kLoadsInFlight = 4;", "constexpr int kLoadsInFlight = 2;")),
    ("07's head boundary from the wrong end", "07_multiblock", lambda t: nth(
        t, "(16 - reinterpret_cast<std::uintptr_t>(in) % 16) % 16 / 4", "reinterpret_cast<std::uintptr_t>(in) % 16 / 4", 0)),
    ("06's batch condition one batch short", "06_float4",
     lambda t: t.replace("i + (kLoadsInFlight - 1) * stride < vectors", "i + kLoadsInFlight * stride < vectors - stride")),
]
KERNEL_DRIFTS += [
    ("08 without its first __syncthreads()", "08_gemm_tiled",
     lambda t: t.replace("    __syncthreads();  // the tiles are complete\n", "", 1)),
    ("08 without its second __syncthreads()", "08_gemm_tiled",
     lambda t: t.replace("    __syncthreads();  // everyone is done with them", "    // everyone is done with them", 1)),
    ("01 storing only non-zero values", "01_naive", lambda t: t.replace(
        "  smem[tid] = v;\n", "  if (v != 0.0f) smem[tid] = v;\n", 1)),
    ("06's tail reading one element too many", "06_float4", lambda t: t.replace("if (tid < tail)", "if (tid <= tail)")),
    ("02 writing one float past its block sums", "02_grid_stride", lambda t: t.replace(
        "  if (threadIdx.x == 0) out[blockIdx.x] = sum;\n",
        "  if (threadIdx.x == 0) out[blockIdx.x] = sum;\n"
        "  if (blockIdx.x == 0 && threadIdx.x == 0) out[gridDim.x] = 0;\n", 1)),
    ("07's atomic combine needing block 0 first", "07_multiblock", lambda t: t.replace(
        "    if (threadIdx.x == 0) atomicAdd(out, sum);  // *out was zeroed before the launch\n",
        "    if (threadIdx.x == 0) {  // block 0 sets *out, the others add to it\n"
        "      if (blockIdx.x == 0) *out = sum; else atomicAdd(out, sum);\n    }\n", 1)),
]
# The launcher's own drifts: the host run goes through the launcher (scripts/host/runtime.hpp)
KERNEL_DRIFTS += [
    ("07's two-pass second launch with 1024 threads and the first's shared memory", "07_multiblock", lambda t: t.replace(
        "<<<1, launch.block, smem, stream>>>(launch.partials[0], grid, out", "<<<1, 1024, smem, stream>>>("
        "launch.partials[0], grid, out", 1)),
    ("07's one-block launch with half the threads it needs", "07_multiblock", lambda t: t.replace(
        "4 * kOneBlockLoads), 32) * 32);", "4 * kOneBlockLoads), 32) * 16);", 1)),
]
COMMENT_ONLY = ("comments added to 03's block_reduce, on a line of their own and after the code", "03_padding",
                lambda t: t.replace("  smem[padded(tid)] = v;\n", "  // each thread stores its value first\n"
                                    "  smem[padded(tid)] = v;  // one word per thread\n", 1))


def kernel_drift(stage, edit):
    text = host_run.stage_path(stage).read_text()
    edited = edit(text)
    assert edited != text, f"the drift changes nothing in {stage}"
    with host_run.stage_text(stage, edited):
        try:
            return stage_problems(stage)
        except host_run.HostRunError as e:
            return [str(e)]


def _lanes_not_words(self):
    """Drift: lanes per bank, as if lanes reading one word did not share it."""
    banks = {}
    for _, word in self.lanes:
        banks[word % br.BANKS] = banks.get(word % br.BANKS, 0) + 1
    return max(max(banks.values()), self.conflict_free())


ANALYSIS_DRIFTS = {
    "01's final read in every thread, as the source reads it (compiled=False)":
        lambda: line_problems("01_naive", compiled=False),
    "a broadcast counted as a conflict (lanes per bank, not words)":
        lambda: _patched(br.Request, "wavefronts", _lanes_not_words, lambda: line_problems("05_shuffle")
                         + line_problems("08_gemm_tiled")),
    "a 128-bit load always 4 wavefronts (no pairing)":
        lambda: _patched(br.Request, "conflict_free", lambda self: 1 if self.width == 1 else 4,
                         lambda: line_problems("08_gemm_tiled")),
    "01's predicated tree taken as branched":
        lambda: _patched(br, "PREDICATED", set(), lambda: line_problems("01_naive")),
}


def _patched(target, name, value, check):
    with mock.patch.object(target, name, value):
        return check()


# ---- the tests ------------------------------------------------------------------------------------------------------

def profiled(stage):
    """Whether ./maint/do profile has measured the stage (its machine code is saved): else only its sums are checked."""
    return (RESULTS / f"sass_{stage}.txt").exists()


def check_stage(stage):
    """Checks 1-3 of one stage (1 alone for a stage not profiled yet)."""
    problems = stage_problems(stage) if profiled(stage) else \
        sum_problems(stage) if stage in reduce_stages() else gemm_problems(stage)
    print(f"{stage}: {'sums, machine code, lines' if profiled(stage) else 'sums (not profiled yet)'}: "
          f"{len(problems)} problems")
    return problems


def check_drifts(stage):
    """The planted drifts of one stage: each must fail checks 1-3, naming the stage."""
    problems = []
    for what, where, edit in KERNEL_DRIFTS:
        if where == stage:
            found = kernel_drift(stage, edit)
            print(f"  kernel drift: {what}: {'caught: ' + found[0][:300] if found else 'MISSED'}")
            if not found or not all(stage in p for p in found):
                problems.append(f"the planted drift '{what}' passes the checks, or a message does not name {stage}: "
                                f"{found}")
    return problems


def aggregate_report():
    for stage, variant in br.PROFILED:
        for c in br.compare(ncu_row(stage, variant)):
            print(f"  {stage:15} {variant:13} {c.op}: conflict-free {c.model['conflict_free']:>12,} host "
                  f"{c.conflict_free:>12,.0f} ncu; conflicts {c.model['conflicts']:>11,} host "
                  f"{c.conflicts:>11,.0f} ncu ({100 * c.excess:+.2f}%)")
    return aggregate_problems()


def check_across():
    """What holds across stages: the shared block_reduce(), the aggregate counters, the analysis drifts (each must
    fail) and a comment-only edit (which must pass)."""
    problems = same_problems() + aggregate_report()
    for what, check in ANALYSIS_DRIFTS.items():
        found = check()
        print(f"  analysis drift: {what}: {'caught: ' + found[0][:300] if found else 'MISSED'}")
        if not found:
            problems.append(f"the planted drift '{what}' passes the checks")
    what, stage, edit = COMMENT_ONLY
    problems += [f"{what}: {p}" for p in kernel_drift(stage, edit)]
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cxx", default=os.environ.get("CXX", "g++"), help="the host C++ compiler (default g++)")
    p.add_argument("--stage", help="check this stage (checks 1-3); without it, the checks across stages")
    p.add_argument("--drifts", metavar="STAGE", help="the planted drifts of this stage, each of which must fail")
    a = p.parse_args()
    host_run.CXX = a.cxx
    problems = check_stage(a.stage) if a.stage else check_drifts(a.drifts) if a.drifts else check_across()
    for problem in problems:
        print(f"thread_models: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
