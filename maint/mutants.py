"""Planted bugs: copies of real stage files with one realistic bug each, made from the current files whenever ./maint/do
builds. Each must be reported FAIL by its stage's default check (exit 1, with `says` printed), flagged by racecheck (a
missing barrier), or refused in its machine code by scripts/sass.py on the CPU (an ordering or scope one GPU hides)."""
import concurrent.futures
import pathlib
import re
import shlex
import subprocess
import sys
from typing import NamedTuple

from scripts import sanitize
from scripts.stages import ROOT, NoGpu, StageError, say

class Mutant(NamedTuple):
    name: str    # mutant_<name> is the program
    stage: str   # the stage whose file is copied
    args: str    # the stage's default check, at a size and launch where the bug matters
    expect: str  # "fail", "racecheck" or "sass", as above ("sass": no GPU needed, args unused)
    find: str    # text that occurs exactly once in the stage file (or a tuple of such texts)
    replace: str  # what it becomes (a tuple: what each of them becomes)
    bug: str     # the bug, in words
    fill: bool = False  # it reads shared memory it never wrote: its verdict rests on the NaN fill (the GPU to itself)
    says: str = "FAIL"  # what its output must hold (the check that catches it, where only one can)

# Lines of 07's file that several planted bugs edit.
MEMSET = "      CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float), stream));  // the blocks add into *out\n"
FLOAT4_ADD = "    for (int k = 0; k < kLoadsInFlight; ++k) sum += (v[k].x + v[k].y) + (v[k].z + v[k].w);\n"

MUTANTS = [
    Mutant("01_bound", "01_naive", "--check-only -n 1000003", "fail",
           "float sum = i < n ? in[i] : 0.0f;", "float sum = i + 1 < n ? in[i] : 0.0f;",
           "off-by-one bound: the last element of every pass is dropped"),
    Mutant("01_barrier", "01_naive", "--check-only -n 4097 --block 256", "racecheck",
           "    if (index < blockDim.x) smem[index] += smem[index + s];\n    __syncthreads();\n",
           "    if (index < blockDim.x) smem[index] += smem[index + s];\n",
           "missing barrier: the tree's __syncthreads() removed"),
    Mutant("02_stride_skip", "02_grid_stride", "--check-only", "fail",
           "i < n; i += stride) sum += in[i];", "i < n; i += 2 * stride) sum += in[i];",
           "skipped grid-stride step: every other stride of the input is never read (n = 2^28)"),
    Mutant("02_stride_double", "02_grid_stride", "--check-only -n 2^24", "fail",
           "const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;",
           "const std::size_t stride = std::size_t{gridDim.x} * blockDim.x / 2;",
           "doubled grid-stride step: a stride of half the grid, so most elements are added twice"),
    Mutant("02_never_ends", "02_grid_stride", "--check-only -n 2^20", "fail",
           "i < n; i += stride) sum += in[i];", "i < n; i += (blockIdx.x == 0 && i > 4096) ? 0 : stride) sum += in[i];",
           "a loop that never ends: block 0 stops advancing past element 4096", says="did not finish within"),
    Mutant("03_tree_short", "03_padding", "--check-only -n 2^24 --regime tree", "fail",
           "for (unsigned s = 1; s < blockDim.x; s *= 2) {", "for (unsigned s = 1; s < blockDim.x / 2; s *= 2) {",
           "tree one step short: the second half of every block is lost"),
    Mutant("04_syncwarp", "04_warp_unroll", "--check-only -n 4097 --regime tree", "racecheck",
           "      if (step < 5) __syncwarp();  // the next step reads what this step's lanes wrote\n", "",
           "missing barrier: the __syncwarp() between the unrolled warp steps removed"),
    Mutant("04_warp_steps", "04_warp_unroll", "--check-only -n 2^24 --regime tree --block 128", "fail",
           "for (int step = 0; step < 6; ++step, s *= 2) {", "for (int step = 0; step < 5; ++step, s *= 2) {",
           "one warp step short: the last addition of every block is missing"),
    Mutant("05_shuffle_offset", "05_shuffle", "--check-only -n 2^24", "fail",
           "for (int offset = 16; offset > 0; offset /= 2)", "for (int offset = 8; offset > 0; offset /= 2)",
           "shuffle starts at offset 8: lanes 16-31 of every warp are dropped"),
    Mutant("05_warp_count", "05_shuffle", "--check-only -n 2^20 --regime tree", "fail",
           "lane < blockDim.x / 32 ? smem[lane]", "lane < blockDim.x / 64 ? smem[lane]",
           "wrong warp count: the sums of the second half of the warps are dropped"),
    Mutant("06_tail", "06_float4", "--check-only -n 268435459", "fail",
           "  if (tid < tail) sum += in[n - tail + tid];\n", "",
           "dropped tail: the last n % 4 elements are never added (n = 2^28 + 3)"),
    Mutant("06_head", "06_float4", "--check-only -n 2^24 --offset 1", "fail",
           "  if (tid < head) sum += in[tid];\n", "",
           "dropped head: the elements before the first 16-byte boundary are never added"),
    Mutant("06_head_early", "06_float4", "--check-only -n 2^24 --offset 1", "fail",
           "  if (tid < head) sum += in[tid];", "  if (tid < head) sum += in[tid - 1];",
           "head read one element early: the first thread reads in[-1], the float before the input"),
    Mutant("06_overread", "06_float4", "--check-only -n 1000003", "fail",
           "  if (tid < tail) sum += in[n - tail + tid];", "  if (tid <= tail) sum += in[n - tail + tid];",
           "over-read: the tail reads one element past the end, in[n]"),
    Mutant("07_atomic_block0", "07_multiblock",
           "--check-only --combine atomic --regime tree --block 64 -n 2^30", "fail",
           "if (threadIdx.x == 0) atomicAdd(out, sum);",
           "if (threadIdx.x == 0 && blockIdx.x == 0) atomicAdd(out, sum);",
           "lost blocks (atomic): only block 0 adds its sum (n = 2^30, 16.7 million blocks)"),
    Mutant("07_twopass_lost", "07_multiblock", "--check-only --combine two-pass -n 2^24", "fail",
           "(launch.partials[0], grid, out, nullptr, nullptr)", "(launch.partials[0], grid - 1, out, nullptr, nullptr)",
           "lost block (two-pass): the second pass reads one partial sum too few"),
    Mutant("07_lastblock_lost", "07_multiblock", "--check-only --combine last-block -n 2^24", "fail",
           "for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x)",
           "for (unsigned b = threadIdx.x; b + 1 < gridDim.x; b += blockDim.x)",
           "lost block (last-block): the last block adds one partial sum too few"),
    Mutant("02_partial_overread", "02_grid_stride", "--check-only -n 2^24", "fail",
           "    in = dst;\n    n = grid;\n", "    in = dst;\n    n = grid + 1;\n",
           "one partial sum too many: every pass after the first reads one float past the live partial sums"),
    Mutant("05_input_bf16", "05_shuffle", "", "fail",
           "i < n; i += stride) sum += in[i];",
           "i < n; i += stride) sum += __uint_as_float((__float_as_uint(in[i]) + 0x8000u) & 0xffff0000u);",
           "input read as bf16: every element rounded to 8 significant bits before it is added, and the block sums "
           "too, which the relaunch passes read through the same loop (default run)"),
    Mutant("06_round_partials", "06_float4", "", "fail",
           "  sum = block_reduce(sum, smem);\n", "  sum = block_reduce(rintf(sum), smem);\n",
           "partial sums rounded to integers: each thread's sum goes through rintf() before the block tree (default "
           "run)"),
    Mutant("07_input_bf16", "07_multiblock", "", "fail", FLOAT4_ADD,
           "    for (int k = 0; k < kLoadsInFlight; ++k) {\n      auto bf16 = [](float x) { return "
           "__uint_as_float((__float_as_uint(x) + 0x8000u) & 0xffff0000u); };\n      sum += (bf16(v[k].x) + "
           "bf16(v[k].y)) + (bf16(v[k].z) + bf16(v[k].w));\n    }\n",
           "input read as bf16: the float4 loads of the main loop rounded to 8 significant bits, the block sums kept "
           "in float (default run)"),
    Mutant("07_memset_warm", "07_multiblock", "", "fail", MEMSET,
           "      static int calls = 0;  // the memset 'saved' once the results have been checked\n      if (calls++ "
           "< 5) CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float), stream));\n",
           "memset skipped after the first five calls (the checked ones): every warm-up and timed launch adds into a "
           "stale *out, which only the checks of the warm-up and timed launches see (default run)"),
    Mutant("07_one_block_threads", "07_multiblock", "--check-only -n 1029", "fail",
           "ladder::ceil_div<std::size_t>(ladder::ceil_div<std::size_t>(n, 4 * kOneBlockLoads), 32) * 32",
           "ladder::ceil_div<std::size_t>(n / (4 * kOneBlockLoads), 32) * 32",
           "one-block launch sized with n / 16 rounded down: at n = 1029 its 64 threads cover 1024 floats, and the "
           "float4 in[1024..1027] is never read"),
    Mutant("07_one_block_guard", "07_multiblock", "--check-only -n 1000", "fail",
           "v[k] = i < vectors ? body[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);", "v[k] = body[i];",
           "one-block kernel without its bound: the threads past the last float4 read beyond the input"),
    Mutant("07_ticket_reset", "07_multiblock", "--check-only --input exact --combine last-block -n 2^24", "fail",
           "        *ticket = 0;  // ready for the next launch\n", "",
           "ticket never reset: from the second launch on no block draws the last ticket, *out is never written"),
    Mutant("07_memset_once", "07_multiblock", "", "fail", MEMSET,
           "      static int calls = 0;  // the memset 'saved' after the first two calls\n      if (calls++ < 2) "
           "CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float), stream));\n",
           "memset skipped after the first two calls: from the third launch on the blocks add into a stale *out "
           "(default run)"),
    Mutant("07_fadd_rz", "07_multiblock", "", "fail", FLOAT4_ADD,
           "    for (int k = 0; k < kLoadsInFlight; ++k) sum = __fadd_rz(sum, (v[k].x + v[k].y) + (v[k].z + "
           "v[k].w));\n",
           "main loop adds with round-toward-zero (__fadd_rz): every partial sum leans low, which neither the exact "
           "input nor the probe shows (their sums never round); only the float bound sees it (default run)"),
    Mutant("06_truncated_partials", "06_float4", "", "fail",
           "  sum = block_reduce(sum, smem);\n",
           "  sum = block_reduce(__uint_as_float(__float_as_uint(sum) & 0xFFFFFF80u), smem);\n",
           "thread sums cut to 16 mantissa bits before the block tree: a partial sum kept in a lower precision that "
           "the probe's 13-bit values pass through unharmed; the exact input's wider partial sums and the float "
           "bound do not (default run)"),
    Mutant("07_stale_shared", "07_multiblock", "--check-only -n 1000", "fail",
           "if (warp == 0) v = warp_reduce(lane < blockDim.x / 32 ? smem[lane] : 0.0f);",
           "if (warp == 0) v = warp_reduce(smem[lane]);",
           "warp 0 reads all 32 per-warp slots without its lane < warps guard: 30 of them were never written in this "
           "launch (64 threads), and pass where stale shared memory happens to be 0; NaN in every SM's shared memory "
           "before each checked launch shows it", fill=True),
    Mutant("07_memset_mid", "07_multiblock", "", "fail", MEMSET,
           "      static int calls = 0;  // the memset 'saved' once, in the middle of the timed repetitions\n      "
           "if (calls++ != 30) CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float), stream));\n",
           "memset skipped once, on the 21st of the 50 timed repetitions: that launch adds into a stale *out, which "
           "only a check of every timed launch sees (default run)"),
    Mutant("07_grid_misreported", "07_multiblock", "", "fail",
           "  return {grid, launch.block};\n", "  return {1, launch.block};\n",
           "first launch misreported as one block: the error bound would be computed for another summation; the "
           "harness sees the launched grid in the captured graph and refuses the report (default run)"),
    Mutant("08_fma_rz", "08_gemm_tiled", "--check-only --size 64", "fail",
           "for (int k = 0; k < kTile; ++k) sum += a_tile[ty][k] * b_tile[k][tx];",
           "for (int k = 0; k < kTile; ++k) sum = __fmaf_rz(a_tile[ty][k], b_tile[k][tx], sum);",
           "multiply-adds rounded toward zero at K = 64: every element is within its own bound, but the errors all "
           "lean one way; the centring test over the elements sees it"),
    Mutant("08_k_tile", "08_gemm_tiled", "--check-only --size 1000", "fail",
           "for (int k0 = 0; k0 < K; k0 += kTile) {", "for (int k0 = 0; k0 + kTile <= K; k0 += kTile) {",
           "missed K tile: the last, partial tile of K is skipped (K = 1000)"),
    Mutant("08_edge_row", "08_gemm_tiled", "--check-only", "fail",
           "a_tile[ty][tx] = row < M && k0 + tx < K", "a_tile[ty][tx] = row < M - 1 && k0 + tx < K",
           "edge row: the last row of A is loaded as zeros (4096 x 4096 x 4096, where the oracle samples)"),
    Mutant("08_one_element", "08_gemm_tiled", "--check-only", "fail",
           "C[std::size_t(row) * N + col] = sum;",
           "C[std::size_t(row) * N + col] = row == M / 2 && col == N / 3 ? sum + 1.0f : sum;",
           "one wrong element of C, off by 1, at a size where the oracle samples (4096 x 4096 x 4096)"),
    Mutant("08_tf32_a", "08_gemm_tiled", "", "fail",
           "? A[std::size_t(row) * K + (k0 + tx)] : 0.0f;",
           "? __uint_as_float((__float_as_uint(A[std::size_t(row) * K + (k0 + tx)]) + 0x1000u) & 0xffffe000u) : 0.0f;",
           "A read as TF32: the tile loads of A rounded to 10 mantissa bits, as a tensor-core path would (default "
           "run; within the float bound, so only the probe of A sees it)"),
    Mutant("08_tf32_b", "08_gemm_tiled", "", "fail",
           "? B[std::size_t(k0 + ty) * N + col] : 0.0f;",
           "? __uint_as_float((__float_as_uint(B[std::size_t(k0 + ty) * N + col]) + 0x1000u) & 0xffffe000u) : 0.0f;",
           "B read as TF32: the tile loads of B rounded to 10 mantissa bits (default run; within the float bound, so "
           "only the probe of B sees it)"),
    Mutant("08_cached", "08_gemm_tiled", "--check-only --size 1000", "fail",
           "          cudaStream_t stream) {\n  if (launch.tile == 16) {",
           "          cudaStream_t stream) {\n  static const float* last = nullptr;  // a 'result cache': the same "
           "operands again, so C is still right\n  if (A == last) return;\n  last = A;\n  if (launch.tile == 16) {",
           "a result cache: the launcher skips the product when called again with the same A, as if C still held it"),
    Mutant("08_barrier", "08_gemm_tiled", "--check-only --size 100", "racecheck",
           "    __syncthreads();  // everyone is done with them before the next tiles overwrite them\n", "",
           "missing barrier: the tiles are overwritten while other threads still read them"),
    Mutant("08_store_rows", "08_gemm_tiled", "--check-only --size 100", "fail",
           "if (row < M && col < N) C[std::size_t(row) * N + col] = sum;",
           "if (col < N) C[std::size_t(row) * N + col] = sum;",
           "the row guard of the store dropped: the threads of the last row of blocks past row M - 1 store their "
           "sums (0) after the end of C, which nothing reads, so every element of C stays right (M = 100)",
           says="where the launch may not write"),
    Mutant("08_rate_copy", "08_gemm_tiled", "--size 1024 --pad off --reps 3 --warmup 1", "fail",
           ("          cudaStream_t stream) {\n  if (launch.tile == 16) {",
            "  LADDER_CHECK_LAUNCH();\n}\n\nint main"),
           ("          cudaStream_t stream) {\n  static const float *kept_a = nullptr, *kept_b = nullptr;  // a "
            "'result cache': the same operands and\n  static int kept_m = 0, kept_n = 0, kept_k = 0;  // shape as "
            "the last call get the C it made, copied\n  static float* kept_c = nullptr;\n  const std::size_t bytes = "
            "std::size_t(M) * N * sizeof(float);\n  if (A == kept_a && B == kept_b && M == kept_m && N == kept_n && "
            "K == kept_k) {\n    CUDA_CHECK(cudaMemcpyAsync(C, kept_c, bytes, cudaMemcpyDeviceToDevice, stream));\n  "
            "  return;\n  }\n  if (launch.tile == 16) {",
            "  LADDER_CHECK_LAUNCH();\n  CUDA_CHECK(cudaFree(kept_c));\n  CUDA_CHECK(cudaMalloc(&kept_c, bytes));\n  "
            "CUDA_CHECK(cudaMemcpyAsync(kept_c, C, bytes, cudaMemcpyDeviceToDevice, stream));\n  kept_a = A, kept_b "
            "= B, kept_m = M, kept_n = N, kept_k = K;\n}\n\nint main"),
           "a result cache that keeps C right: called again with the operands and shape of the last call, the "
           "launcher copies that call's C instead of computing it, so every timed launch gives the checked C's bits "
           "at a rate no GPU reaches", says="above the theoretical peak"),
    Mutant("02_write_past", "02_grid_stride", "--check-only -n 2^20", "fail",
           "  if (threadIdx.x == 0) out[blockIdx.x] = sum;\n",
           "  if (threadIdx.x == 0) out[blockIdx.x] = sum;\n  if (blockIdx.x == 0 && threadIdx.x == 0) "
           "out[gridDim.x] = 0.0f;\n",
           "a write one float past the live output: thread 0 of block 0 also stores 0 at out[gridDim.x], past the "
           "block sums (and past *out on the last pass), which no launch reads, so every sum stays right",
           says="where the launch may not write"),
    Mutant("02_rate_cache", "02_grid_stride", "-n 2^26 --regime stream", "fail",
           ("// Shared memory of one block.\n",
            "  unsigned first_grid = 0;  // the first launch's blocks, for the report\n"),
           ("__device__ float kept_sum;  // the sum the last direct call made\n__global__ void keep_sum(float* out, "
            "bool store) {\n  if (store) kept_sum = *out; else *out = kept_sum;\n}\n\n// Shared memory of one "
            "block.\n",
            "  static bool inner = false;  // a direct call (not captured into a graph: a timing loop's) on the "
            "input,\n  static const float* kept_in = nullptr;  // size and grid of the last one sums one block of "
            "the input\n  static std::size_t kept_n = 0;  // and copies that call's sum\n  static unsigned "
            "kept_limit = 0;\n  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;\n  "
            "CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));\n  if (capture == cudaStreamCaptureStatusNone && "
            "!inner) {\n    if (in == kept_in && n == kept_n && launch.grid_limit == kept_limit) {\n      "
            "reduce_kernel<<<1, launch.block, smem_bytes(launch.block), stream>>>(in, launch.block, "
            "launch.partials[0]);\n      keep_sum<<<1, 1, 0, stream>>>(out, false);\n      return {1, "
            "launch.block};\n    }\n    inner = true;\n    const ladder::FirstLaunch f = reduce(in, n, out, launch, "
            "stream);\n    inner = false;\n    keep_sum<<<1, 1, 0, stream>>>(out, true);\n    kept_in = in;\n    "
            "kept_n = n;\n    kept_limit = launch.grid_limit;\n    return f;\n  }\n  unsigned first_grid = 0;  // "
            "the first launch's blocks, for the report\n"),
           "a result kept between calls: a call not captured into a graph, on the input and grid of the previous "
           "such call, sums one block of the input and copies that call's sum, so every result stays right while the "
           "timed launches skip the input", says="above the theoretical peak"),
    Mutant("07_ticket_relaxed", "07_multiblock", "", "sass",
           "cuda::memory_order_acq_rel", "cuda::memory_order_relaxed",
           "relaxed ticket (last-block): no release before the ticket, no acquire after it, so the last block may "
           "read partial sums not yet visible (one GPU hides it)"),
    Mutant("07_partials_ldg", "07_multiblock", "", "sass",
           "__ldcg(&partials[b])", "__ldg(&partials[b])",
           "partial sums read with __ldg (last-block): through the non-coherent path, which need not see what the "
           "other blocks of the same launch wrote"),
    Mutant("07_atomic_block", "07_multiblock", "", "sass",
           "atomicAdd(out, sum);", "atomicAdd_block(out, sum);",
           "block-scope atomic (atomic): atomicAdd_block is atomic only among one block's threads, yet every block "
           "adds into *out"),
]

# The CPU baseline's planted bugs: each must fail its check (exit 1, FAIL); all but the copy's run on the CPU.
CPU_MUTANTS = [
    Mutant("cpu_chunk_floor", "cpu_baseline", "--no-copy -n 1000003 --threads 7 --reps 1", "fail",
           "const std::size_t chunk = (n + threads - 1) / threads;", "const std::size_t chunk = n / threads;",
           "chunks rounded down: the all-cores sum drops the last n mod threads elements"),
    Mutant("cpu_int_sum", "cpu_baseline", "--no-copy -n 4097 --reps 1", "fail",
           "  float sum = 0.0f;\n  for", "  int sum = 0;\n  for",
           "an int accumulator: every addition drops the fraction"),
    Mutant("cpu_static_sum", "cpu_baseline", "--no-copy -n 4097 --reps 3", "fail",
           "  float sum = 0.0f;\n  for", "  static float sum = 0.0f;\n  for",
           "a static accumulator: each call adds onto the previous call's sum"),
    Mutant("cpu_copy_short", "cpu_baseline", "-n 1000003 --reps 1", "fail",
           "CUDA_CHECK(cudaMemcpy(device.get(), from, n * sizeof(float), cudaMemcpyHostToDevice));",
           "CUDA_CHECK(cudaMemcpy(device.get(), from, (n - 1) * sizeof(float), cudaMemcpyHostToDevice));",
           "the copy one float short: the GPU's last element is whatever the allocation held"),
]

def source(stage):
    return next(p for p in sorted((ROOT / stage).iterdir()) if p.suffix in (".cu", ".cpp"))

def edits(m):
    """The (find, replace) pairs of a planted bug: one, or several in one file."""
    return list(zip(m.find, m.replace)) if isinstance(m.find, tuple) else [(m.find, m.replace)]

def stale(m, text=None):
    """Why the planted bug's text is not in its file exactly once, or None."""
    text = source(m.stage).read_text() if text is None else text
    if (bad := next((n for n in (text.count(find) for find, _ in edits(m)) if n != 1), None)) is not None:
        return f"{m.name}: its text occurs {bad} times in {source(m.stage).relative_to(ROOT)}, not once"

def folder(build, m):  # a program under maint/mutants/ (maint/CMakeLists.txt); the machine-code ones under maint/sass/
    return pathlib.Path(build) / "maint" / ("sass" if m.expect == "sass" else "mutants") / f"mutant_{m.name}"

def write_copies(build):
    """Every planted bug's copy of its stage file and note (for --version), written where changed; none where stale."""
    for m in MUTANTS + CPU_MUTANTS:
        text = source(m.stage).read_text()
        if stale(m, text):
            continue
        for find, replace in edits(m):
            text = text.replace(find, replace)
        out = folder(build, m)
        out.mkdir(parents=True, exist_ok=True)
        files = {source(m.stage).name: f"// Mutant {m.name}, made from {m.stage}: {m.bug}.\n" + text}
        if m.expect != "sass":
            files["note.txt"] = re.sub(r"[^\w .,=+()/-]", "_", f"a copy of {m.stage} with a planted bug ({m.name})")
        for name, content in files.items():
            if not (out / name).exists() or (out / name).read_text() != content:
                (out / name).write_text(content)

def run(m, build):
    """Runs one planted bug as its check does: {mutant, stage, expect, args, exit, verdict, line}."""
    exe = folder(build, m) / source(m.stage).name if m.expect == "sass" else \
        pathlib.Path(build) / "maint" / "mutants" / "bin" / f"mutant_{m.name}"
    if m.expect == "sass":
        cmd = [sys.executable, "-m", "scripts.sass", "--build", str(build), str(exe)]  # caught: exit 1, a rule broken
    elif m.expect == "racecheck":  # the harness's shared-memory fill is not traced
        cmd = [sanitize.program() or "compute-sanitizer", "--tool", "racecheck", "--error-exitcode", "99",
               "--print-limit", "1", str(exe), *shlex.split(m.args), "--no-shared-poison"]
    else:
        cmd = [str(exe), *shlex.split(m.args)]
    if stale(m) or not exe.exists():
        text, status = stale(m) or f"{exe} does not exist (./maint/do builds it)", -1
    else:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        text, status = proc.stdout + proc.stderr, proc.returncode
    if status == 77:  # no GPU, or (sass) no disassembler
        raise (StageError if m.expect == "sass" else NoGpu)(text.strip())
    if m.expect == "sass":
        caught, line = status == 1 and ".cu:" in text, re.sub(r"^\S*/", "", next((l for l in text.splitlines() if ".cu:" in l), ""))
    elif m.expect == "racecheck":
        caught, line = status == 99, next((l for l in text.splitlines() if "RACECHECK SUMMARY" in l), "")
    else:
        caught = status == 1 and m.says in text
        line = next((l.strip() for l in text.splitlines() if l.strip().startswith("FAIL ") or ": FAIL: " in l or
                     ": error: " in l), "")
    line = (line or text.strip()[-200:]).replace("=========", "").replace(str(build), "build").replace(f"{ROOT}/", "")
    return {"mutant": m.name, "stage": m.stage, "expect": m.expect, "args": m.args, "exit": status,
            "verdict": "caught" if caught else "NOT CAUGHT", "line": line.strip()}

def rows(build, gpu=True):
    """Every planted bug's run (without a GPU the machine-code ones), side by side, but those that need the GPU to
    themselves (the shared-memory fill, a rate) one after another at the end."""
    table_ = [m for m in MUTANTS if gpu or m.expect == "sass"]
    side = [m for m in table_ if not (m.fill or "peak" in m.says)]
    alone = [m for m in table_ if m not in side]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        out = dict(zip([m.name for m in side], pool.map(lambda m: run(m, build), side)))
    out.update({m.name: run(m, build) for m in alone})
    for m in table_:
        say(f"      mutant {m.name}: {out[m.name]['verdict']} (exit {out[m.name]['exit']})")
    return [out[m.name] for m in table_]

def cpu_rows(build, gpu=True):
    """The CPU baseline's planted bugs, each run as its check runs it: [(name, caught, what it printed)]."""
    found = [run(m._replace(says="cpu_baseline: FAIL "), build) for m in CPU_MUTANTS if gpu or "--no-copy" in m.args]
    return [(r["mutant"], r["verdict"] == "caught", r["line"]) for r in found]
