"""The host runs behind the stage pages' pictures and counts (maint/block_requests.py), held, with no GPU, to the
committed docs/results/ (ncu.csv, ncu_source.csv, sass_*.txt):
  1. sums (scripts/host_checks.py), and the block_reduce()s the pages call another's are it word for word;
  2. machine code: block_requests.COMPILED holds; lane 0's shuffles and the float4 loads in flight are the SASS's;
  3. per line: shared-memory instructions, wavefronts and ideal wavefronts equal ncu's source counters exactly;
  4. planted drifts: kernel and analysis edits fail 1-3 naming the stage; a comment-only edit passes.
"""
import argparse
import collections
import csv
import re
import sys
from unittest import mock

from maint import block_requests as br
from maint.tests import verdict
from scripts import host_checks, host_run
from scripts.stages import ROOT, reduce_stages

RESULTS = ROOT / "docs" / "results"
SAME_BLOCK_REDUCE = {"02_grid_stride": "01_naive", "06_float4": "05_shuffle", "07_multiblock": "05_shuffle"}
SHFL = re.compile(r"SHFL\.(DOWN|UP|BFLY|IDX) PT, R\d+, R\d+, (0x[0-9a-f]+), 0x1f")
# Kernel drifts, each in a copy of its stage: (stage, old, new[, k]): old becomes new (only its k-th occurrence).
KERNEL_DRIFTS = [
    ("03_padding", "i + i / 32", "i + i / 16"), ("04_warp_unroll", "i + i / 32", "i + i / 16"),
    ("04_warp_unroll", "index = 2 * s * tid;", "index = s * tid;", 1),  # in the unrolled steps
    ("04_warp_unroll", "smem[padded(index)] += smem[padded(index + s)]", "smem[index] += smem[index + s]", 1),
    *((s, "tid = threadIdx.x;", "tid = threadIdx.x % 32 * (blockDim.x / 32) + threadIdx.x / 32;")  # transposed
      for s in ("01_naive", "02_grid_stride")),
    ("06_float4", "offset = 16; offset > 0; offset /= 2", "offset = 1; offset < 32; offset *= 2"),
    ("05_shuffle", "offset > 0;", "offset > 2;"), ("07_multiblock", "__shfl_down_sync(", "__shfl_xor_sync("),
    ("08_gemm_tiled", ", 1>(A, B, C", ", 2>(A, B, C"), ("07_multiblock", "kLoadsInFlight = 4;", "kLoadsInFlight = 2;"),
    ("07_multiblock", "(16 - reinterpret_cast<std::uintptr_t>(in) % 16) % 16",  # the head's boundary from the wrong end
     "reinterpret_cast<std::uintptr_t>(in) % 16", 0),
    ("06_float4", "i + (kLoadsInFlight - 1) * stride < vectors", "i + kLoadsInFlight * stride < vectors - stride"),
    ("08_gemm_tiled", "    __syncthreads();  // the tiles are complete\n", ""),
    ("08_gemm_tiled", "__syncthreads();  // everyone", "// everyone"),
    ("01_naive", "  smem[tid] = v;\n", "  if (v != 0.0f) smem[tid] = v;\n"),
    ("06_float4", "if (tid < tail)", "if (tid <= tail)"),
    ("02_grid_stride", "out[blockIdx.x] = sum;\n", "out[blockIdx.x] = sum;\n  if (blockIdx.x == 0 && threadIdx.x == 0) "
     "out[gridDim.x] = 0;\n"),
    ("07_multiblock", "atomicAdd(out, sum);", "{ if (blockIdx.x == 0) *out = sum; else atomicAdd(out, sum); }"),
    # the launcher's own (the host run goes through it): the second pass of two-pass, the one-block launch
    ("07_multiblock", "<<<1, launch.block, smem, stream>>>(", "<<<1, 1024, smem, stream>>>("),
    ("07_multiblock", "kOneBlockLoads), 32) * 32);", "kOneBlockLoads), 32) * 16);"),
]
COMMENT_ONLY = ("03_padding", "  smem[padded(tid)] = v;\n", "  // a comment\n  smem[padded(tid)] = v;  // and one\n")
# Analysis drifts: (what, object, attribute, its drifted value, the stages whose lines must then differ).
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

def line_problems(stage=None):  # each row of ncu.csv the host runs are held to (a KeyError where one is missing)
    rows, source = {(r["stage"], r["variant"]): r for r in read("ncu.csv")}, read("ncu_source.csv")
    return [p for key in br.PROFILED if stage in (None, key[0]) for c in br.compare_lines(rows[key], source)
            for p in c.problems()]

def machine_code_problems(stage):
    sass, entry = (RESULTS / f"sass_{stage}.txt").read_text(), host_run.kernel_entries(stage)[0]
    out = [f"sass_{stage}.txt no longer shows: {fact}" for fact, holds in br.COMPILED.get(stage, []) if not holds(sass)]
    if stage not in reduce_stages():
        return out
    shuffles = br.run(stage, entry, block=64, n=64).shuffles
    host = [(("DOWN", "UP", "BFLY", "IDX")[kind], abs(src))  # lane 0's: the distance, or the lane mask of a butterfly
            for b, tid, _, kind, src, *_ in shuffles if (b, tid) == (0, 0)]
    slots = [dest for b, tid, _, how, *_, dest in br.run(stage, entry, block=64, n=4 * 64 * 40).loads
             if (b, tid, how) == (0, 0, "assign")]
    in_flight = slots[1:].index(slots[0]) + 1 if slots and slots[0] in slots[1:] else len(slots)  # till it reuses one
    for f, code in enumerate(sass.split("/*0000*/")[1:], 1):  # each function starts again at /*0000*/
        theirs = [(m[1], int(m[2], 16)) for m in SHFL.finditer(code)][:len(host)]  # a fallback path repeats them
        if host and theirs != host:
            out.append(f"{stage}: lane 0's shuffles (kind, lane or mask) are {host} in the host run, {theirs} in "
                       f"function {f} of sass_{stage}.txt")
        loads = max(part.count("LDG.E.128") for part in code.split("FADD"))  # 128-bit loads with no add between
        if in_flight and loads != in_flight:
            out.append(f"{stage}: a thread of the host run has {in_flight} float4 loads in flight, function {f} of "
                       f"sass_{stage}.txt issues {loads} before its first add")
    return out

def stage_problems(stage, profiled=True):  # checks 1-3 of one stage (1 alone where it is not profiled yet)
    sums = host_checks.problems(stage)
    return sums + machine_code_problems(stage) + line_problems(stage) if profiled else sums

def drifted(stage, old, new, k=None):
    """Checks 1-3 of the stage with one edit: old becomes new (only its k-th occurrence)."""
    text = host_run.stage_path(stage).read_text()
    at = [m.start() for m in re.finditer(re.escape(old), text)]
    edited = text.replace(old, new) if k is None else text[:at[k]] + new + text[at[k] + len(old):]
    assert edited != text, f"the drift {old!r} -> {new!r} changes nothing in {stage}"
    with host_run.stage_text(stage, edited):
        try:
            return stage_problems(stage)
        except host_run.HostRunError as e:
            return [str(e)]

def caught(what, found):
    print(f"  drift: {what}: {'caught: ' + found[0][:300] if found else 'MISSED'}")
    return found

def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--stage", help="check this stage (checks 1-3); without it, the checks across stages")
    p.add_argument("--drifts", metavar="STAGE", help="the planted drifts of this stage, each of which must fail")
    a = p.parse_args()
    problems = []
    if a.stage:
        profiled = (RESULTS / f"sass_{a.stage}.txt").exists()  # else ./maint/do profile has not measured it yet
        problems = stage_problems(a.stage, profiled)
        print(f"{a.stage}: {'sums, machine code, lines' if profiled else 'sums (not profiled yet)'}: "
              f"{len(problems)} problems")
    for stage, old, new, *k in (d for d in KERNEL_DRIFTS if d[0] == a.drifts):
        what = f"{stage}: {old.strip()!r} -> {new.strip()!r}"
        found = caught(what, drifted(stage, old, new, *k))
        if not found or not all(stage in p for p in found):
            problems.append(f"the planted drift {what} passes, or a message does not name the stage: {found}")
    if not (a.stage or a.drifts):  # the checks across stages: the shared block_reduce(), the analysis drifts, comments
        texts = {s: host_run.stage_path(s).read_text() for s in {*SAME_BLOCK_REDUCE, *SAME_BLOCK_REDUCE.values()}}
        block_reduce = {s: t[t.index("__device__ float block_reduce"):].split("\n}\n")[0] for s, t in texts.items()}
        problems = [f"{stage}'s block_reduce() is no longer {same}'s word for word, as its page says"
                    for stage, same in SAME_BLOCK_REDUCE.items() if block_reduce[stage] != block_reduce[same]]
        for what, target, name, value, stages in ANALYSIS_DRIFTS:
            with mock.patch.object(target, name, value):
                if not caught(what, [p for s in stages for p in line_problems(s)]):
                    problems.append(f"the planted drift '{what}' passes the checks")
        problems += [f"comments added to 03's block_reduce: {p}" for p in drifted(*COMMENT_ONLY)]
    return verdict("thread_models", problems, "the host runs agree with the counters and the machine code" +
                   ("; every planted drift is caught" if a.drifts else ""))

if __name__ == "__main__":
    sys.exit(main())
