#!/usr/bin/env python3
"""The host runs behind the stage pages' pictures and counts (scripts/host_run.py, maint/block_requests.py), held to
the kernels' machine code and to Nsight Compute. No GPU: it compiles each stage's device code with the host compiler
and reads the committed docs/results/ncu.csv, ncu_source.csv and sass_*.txt (which maint/tests/check_saved_sass.py
holds to the current kernels).

  1. sums: every kernel of every reduce stage, run on the host, adds each element once: the sum is exact at input
     offsets 0-3, at awkward n, at several block sizes and grids and with the threads run in either order (a lost
     or doubled element, a read outside the input, a read of a shared word no thread wrote fails here); every
     tiled GEMM's C equals the product at edge shapes and several steps along K; stages whose pages say their
     block_reduce() is another's have it word for word;
  2. machine code: the facts the host run's requests rely on (block_requests.COMPILED) hold in sass_<stage>.txt;
     lane 0's shuffles (kind and distance) are those of the SASS, in order; the float4 loads a thread has in
     flight in the main loop are as many as the SASS issues before its first add;
  3. per line: for every profiled launch, each source line's shared-memory instructions, wavefronts and ideal
     wavefronts equal Nsight Compute's source counters (summed over the line's SASS instructions) exactly;
  4. aggregate: the bank conflicts lie within block_requests.TOLERANCE of the aggregate counters;
  5. planted drifts: kernel edits, each in a copy of the project, and edits of the analysis must fail 1-3 with a
     message that names the stage and the line or step; a comment-only edit must pass.

  python3 -m maint.tests.check_thread_models [--cxx COMPILER] [--stage STAGE | --drifts STAGE]
"""
import argparse
import collections
import csv
import os
import re
import sys
from unittest import mock

from maint import block_requests as br
from scripts import host_run
from scripts.host_checks import gemm_problems, sum_problems
from scripts.stages import ROOT, reduce_stages

RESULTS = ROOT / "docs" / "results"
# Stages whose pages say their block_reduce() is another's, word for word.
SAME_BLOCK_REDUCE = {"02_grid_stride": "01_naive", "06_float4": "05_shuffle", "07_multiblock": "05_shuffle"}
SHFL = re.compile(r"SHFL\.(DOWN|UP|BFLY|IDX) PT, R\d+, R\d+, (0x[0-9a-f]+), 0x1f")

# Kernel drifts, each in a copy of its stage: (stage, what, old, new[, k]): old becomes new (its k-th occurrence only)
KERNEL_DRIFTS = [
    ("03_padding", "03's padding i / 16", "i + i / 32", "i + i / 16"),
    ("04_warp_unroll", "04's padding i / 16", "i + i / 32", "i + i / 16"),
    ("04_warp_unroll", "04's unrolled steps indexed s * tid", "index = 2 * s * tid;", "index = s * tid;", 1),
    ("04_warp_unroll", "04's unrolled steps without padding", "smem[padded(index)] += smem[padded(index + s)]",
     "smem[index] += smem[index + s]", 1),
    *((stage, f"{stage[:2]}'s tid transposed", "tid = threadIdx.x;",
       "tid = threadIdx.x % 32 * (blockDim.x / 32) + threadIdx.x / 32;") for stage in ("01_naive", "02_grid_stride")),
    ("06_float4", "06's shuffle offsets reversed", "for (int offset = 16; offset > 0; offset /= 2)",
     "for (int offset = 1; offset < 32; offset *= 2)"),
    ("05_shuffle", "05's shuffle stopping at offset 2", "offset > 0;", "offset > 2;"),
    ("07_multiblock", "07 with __shfl_xor_sync", "__shfl_down_sync(", "__shfl_xor_sync("),
    ("08_gemm_tiled", "08's kPad 1 -> 2", ", 1>(A, B, C", ", 2>(A, B, C"),
    ("07_multiblock", "07's kLoadsInFlight 2", "kLoadsInFlight = 4;", "kLoadsInFlight = 2;"),
    ("07_multiblock", "07's head boundary from the wrong end", "(16 - reinterpret_cast<std::uintptr_t>(in) % 16) % 16",
     "reinterpret_cast<std::uintptr_t>(in) % 16", 0),
    ("06_float4", "06's batch condition one batch short", "i + (kLoadsInFlight - 1) * stride < vectors",
     "i + kLoadsInFlight * stride < vectors - stride"),
    ("08_gemm_tiled", "08 without its first __syncthreads()", "    __syncthreads();  // the tiles are complete\n", ""),
    ("08_gemm_tiled", "08 without its second __syncthreads()", "__syncthreads();  // everyone is done", "// everyone is done"),
    ("01_naive", "01 storing only non-zero values", "  smem[tid] = v;\n", "  if (v != 0.0f) smem[tid] = v;\n"),
    ("06_float4", "06's tail reading one element too many", "if (tid < tail)", "if (tid <= tail)"),
    ("02_grid_stride", "02 writing one float past its block sums", "out[blockIdx.x] = sum;\n",
     "out[blockIdx.x] = sum;\n  if (blockIdx.x == 0 && threadIdx.x == 0) out[gridDim.x] = 0;\n"),
    ("07_multiblock", "07's atomic combine needing block 0 first", "if (threadIdx.x == 0) atomicAdd(out, sum);",
     "if (threadIdx.x == 0) { if (blockIdx.x == 0) *out = sum; else atomicAdd(out, sum); }"),
    # the launcher's own: the host run goes through it (scripts/host/runtime.hpp)
    ("07_multiblock", "07's two-pass second launch with 1024 threads and the first's shared memory",
     "<<<1, launch.block, smem, stream>>>(launch.partials[0]", "<<<1, 1024, smem, stream>>>(launch.partials[0]"),
    ("07_multiblock", "07's one-block launch with half the threads it needs", "4 * kOneBlockLoads), 32) * 32);",
     "4 * kOneBlockLoads), 32) * 16);"),
]
COMMENT_ONLY = ("03_padding", "comments added to 03's block_reduce, on a line of their own and after the code",
                "  smem[padded(tid)] = v;\n", "  // each thread stores its value first\n  smem[padded(tid)] = v;  // one\n")
# Analysis drifts: (what, object, attribute, its drifted value, the stages whose lines must then differ)
ANALYSIS_DRIFTS = [
    ("01's final read in every thread, as the source reads it", br, "compiled_requests", lambda s, reqs, *_: reqs,
     ["01_naive"]),
    ("a broadcast counted as a conflict (lanes per bank, not words)", br.Request, "wavefronts", lambda r: max(
        max(collections.Counter(w % br.BANKS for _, w in r.lanes).values()), r.conflict_free()),
     ["05_shuffle", "08_gemm_tiled"]),
    ("a 128-bit load always 4 wavefronts (no pairing)", br.Request, "conflict_free", lambda r: 1 if r.width == 1 else 4,
     ["08_gemm_tiled"]),
    ("01's predicated tree taken as branched", br, "PREDICATED", set(), ["01_naive"]),
]


def read(name):
    with open(RESULTS / name, newline="") as f:
        return list(csv.DictReader(f))


def profiled_rows(stage=None):
    rows = {(r["stage"], r["variant"]): r for r in read("ncu.csv")}
    return [rows[p] for p in br.PROFILED if stage in (None, p[0])]


def machine_code_problems(stage):
    """Check 2 of one stage."""
    sass = (RESULTS / f"sass_{stage}.txt").read_text()
    out = [f"sass_{stage}.txt no longer shows: {fact}" for fact, holds in br.COMPILED.get(stage, []) if not holds(sass)]
    if stage not in reduce_stages():
        return out
    functions = enumerate(sass.split("/*0000*/")[1:], 1)  # each function's instructions start again at /*0000*/
    run = host_run.run(stage, host_run.kernel_entries(stage)[0], block=64, n=64)
    host = [(("DOWN", "UP", "BFLY", "IDX")[kind], abs(src))  # lane 0: the distance, or the lane mask of a butterfly
            for b, tid, _, kind, src, *_ in run.shuffles if (b, tid) == (0, 0)]
    run = host_run.run(stage, host_run.kernel_entries(stage)[0], block=64, n=4 * 64 * 40)
    slots = [dest for b, tid, _, how, *_, dest in run.loads if (b, tid, how) == (0, 0, "assign")]
    in_flight = slots[1:].index(slots[0]) + 1 if slots and slots[0] in slots[1:] else len(slots)  # till a slot's reuse
    for f, code in functions if host or in_flight else ():
        sass_shuffles = [(m[1], int(m[2], 16)) for m in SHFL.finditer(code)][:len(host)]  # a fallback repeats them
        wrong = next((i for i, pair in enumerate(zip(host, sass_shuffles)) if pair[0] != pair[1]), None)
        if host and wrong is not None:
            out.append(f"{stage}: shuffle step {wrong + 1} of lane 0 is SHFL.{host[wrong][0]} by {host[wrong][1]} in the "
                       f"host run, SHFL.{sass_shuffles[wrong][0]} by {sass_shuffles[wrong][1]} in function {f} of "
                       f"sass_{stage}.txt")
        elif host and len(sass_shuffles) != len(host):
            out.append(f"{stage}: {len(host)} shuffles in the host run, {len(sass_shuffles)} in function {f} of "
                       f"sass_{stage}.txt")
        sass_in_flight = max(part.count("LDG.E.128") for part in code.split("FADD"))  # 128-bit loads before an add
        if in_flight and sass_in_flight != in_flight:
            out.append(f"{stage}: a thread of the host run has {in_flight} float4 loads in flight, function {f} of "
                       f"sass_{stage}.txt issues {sass_in_flight} before its first add")
    return out


def line_problems(stage=None):
    """Check 3, of one stage or of all."""
    source = read("ncu_source.csv")
    return [p for row in profiled_rows(stage) for c in br.compare_lines(row, source) for p in c.problems()]


def stage_problems(stage, profiled=True):
    """Checks 1-3 of one stage (1 alone for a stage not profiled yet)."""
    sums = sum_problems(stage) if stage in reduce_stages() else gemm_problems(stage)
    return sums + (machine_code_problems(stage) + line_problems(stage) if profiled else [])


def drifted(stage, what, old, new, k=None):
    """What checks 1-3 say of the stage with one edit: old becomes new (its k-th occurrence only)."""
    text = host_run.stage_path(stage).read_text()
    at = [m.start() for m in re.finditer(re.escape(old), text)]
    edited = text.replace(old, new) if k is None else text[:at[k]] + new + text[at[k] + len(old):]
    assert edited != text, f"the drift '{what}' changes nothing in {stage}"
    with host_run.stage_text(stage, edited):
        try:
            return stage_problems(stage)
        except host_run.HostRunError as e:
            return [str(e)]


def caught(kind, what, found):
    print(f"  {kind} drift: {what}: {'caught: ' + found[0][:300] if found else 'MISSED'}")
    return found


def check_stage(stage):
    profiled = (RESULTS / f"sass_{stage}.txt").exists()  # else ./maint/do profile has not measured it yet
    problems = stage_problems(stage, profiled)
    print(f"{stage}: {'sums, machine code, lines' if profiled else 'sums (not profiled yet)'}: {len(problems)} problems")
    return problems


def check_drifts(stage):
    """The planted kernel drifts of one stage: each must fail checks 1-3, naming the stage."""
    return [f"the planted drift '{what}' passes the checks, or a message does not name {stage}: {found}"
            for where, what, *edit in KERNEL_DRIFTS if where == stage
            for found in [caught("kernel", what, drifted(stage, what, *edit))]
            if not found or not all(stage in p for p in found)]


def block_reduce(stage):
    text = host_run.stage_path(stage).read_text()
    return text[text.index("__device__ float block_reduce"):].split("\n}\n")[0]


def check_across():
    """What holds across stages: the shared block_reduce(), the aggregate counters, the analysis drifts (each must
    fail) and a comment-only edit (which must pass)."""
    problems = [f"{stage}'s block_reduce() is no longer {same}'s word for word, as its page says"
                for stage, same in SAME_BLOCK_REDUCE.items() if block_reduce(stage) != block_reduce(same)]
    for c in (c for row in profiled_rows() for c in br.compare(row)):
        print(f"  {c.stage:15} {c.variant:13} {c.op}: conflict-free {c.host['ideal']:>12,} host "
              f"{c.measured['ideal']:>12,} ncu; conflicts {c.host['conflicts']:>11,} host "
              f"{c.measured['conflicts']:>11,} ncu ({100 * c.excess:+.2f}%)")
        problems += c.problems()
    for what, target, name, value, stages in ANALYSIS_DRIFTS:
        with mock.patch.object(target, name, value):
            if not caught("analysis", what, [p for s in stages for p in line_problems(s)]):
                problems.append(f"the planted drift '{what}' passes the checks")
    return problems + [f"{COMMENT_ONLY[1]}: {p}" for p in drifted(*COMMENT_ONLY)]


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
