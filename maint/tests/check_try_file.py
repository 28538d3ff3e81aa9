"""./ladder try STAGE mine.cu, as a reader runs it, on the planted copies below: a correct copy passes what it can run
(exit 77 without a GPU, 0 on one); a lost element, a race, a wrong tail, a read past the input, a mask that leaves
out its lane, a shuffle not every lane reaches, a renamed kernel and a file naming another stage fail, naming the
check; a file that does not compile fails with the compiler's message naming it (check_cli.py has a missing file
refused). Built in LADDER_BUILD; the first case runs the ./ladder driver, the others its Python side. Every case runs
with the GPU hidden; --correct runs the correct copy through every GPU check, on a GPU."""
import concurrent.futures
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

from maint.tests import verdict
from scripts.stages import ROOT, binary, build_dir, ladder_stages, stage_file
from scripts.tries import build_copies, own_copy

# Planted copies of one stage: (name, edit, exit statuses allowed, texts the report must hold); docs/own.md shows two.
STAGE = "05_shuffle"
ORIGINAL = (ROOT / STAGE / "reduce.cu").read_text()
CASES = [
    ("correct", lambda t: t, (0, 77), ["PASS     host run", "machine code"]),  # PASS where a disassembler is
    ("lost_element", lambda t: t.replace("i < n; i += stride) sum += in[i]", "i + 1 < n; i += stride) sum += in[i]"),
     (1,), ["FAIL     host run", "the host run sums 2016, the input 2080", "ladder try: failed"]),
    ("race", lambda t: t.replace("  __syncthreads();\n  if (warp == 0)", "  if (warp == 0)"),
     (1,), ["FAIL     host run", "which no thread of this block has written yet", "ladder try: failed"]),
    ("wrong_tail", lambda t: t.replace("lane < blockDim.x / 32 ?", "lane <= blockDim.x / 32 ?"),
     (1,), ["FAIL     host run", "past its end", "ladder try: failed"]),
    ("loop_past_end", lambda t: t.replace("i < n; i += stride) sum += in[i]", "i <= n; i += stride) sum += in[i]"),
     (1,), ["FAIL     host run", "thread 0 brought a NaN to the sum, though the input holds none"]),
    ("mask_leaves_lane", lambda t: t.replace("__shfl_down_sync(0xffffffffu", "__shfl_down_sync(0x0000ffffu"),
     (1,), ["FAIL     host run", "thread 16 calls a warp operation with the mask 0x0000ffff"]),
    ("shuffle_in_branch", lambda t: t.replace("  v = warp_reduce(v);", "  if (lane < 16) v = warp_reduce(v);"),
     (1,), ["FAIL     host run", "threads from 0 at a warp operation at line"]),
    ("not_on_the_host", lambda t: t.replace("  v = warp_reduce(v);", "  if (__any_sync(0xffffffffu, v != v)) v = 0.0f;"
     "\n  v = warp_reduce(v);"), (77,), ["not run  host run", "cannot build", "__any_sync"]),  # a limit of the host run
    ("index_product_32_bits", lambda t: t.replace("blockIdx.x * std::size_t{blockDim.x}", "blockIdx.x * blockDim.x"),
     (1,), ["FAIL     host run", "`blockIdx.x * blockDim.x` multiplies two 32-bit values"]),
    ("no_semicolon", lambda t: t.replace("v = warp_reduce(v);", "v = warp_reduce(v)"),
     (1,), ["error: expected a \";\"", "FAIL     build", "ladder try: failed 1 check"]),
    ("renamed_kernel", lambda t: t.replace("reduce_kernel", "my_kernel").replace(
        "i < n; i += stride) sum += in[i]", "i + 1 < n; i += stride) sum += in[i]"),
     (1,), ["FAIL     host run", "finds no kernel reduce_kernel", "ladder try: failed"]),
    ("another_stage", lambda t: t.replace('"05_shuffle"', '"04_warp_unroll"'),
     (1,), ["FAIL     host run", "does not name 05_shuffle"]),
]

def ladder(args, cwd, driver):
    command = [str(ROOT / "ladder")] if driver else [sys.executable, "-m", "scripts.ladder"]
    env = {**os.environ, "LADDER_CWD": cwd, "PYTHONPATH": str(ROOT)}
    return subprocess.run([*command, "try", "--build", str(build_dir().resolve()), *args], capture_output=True,
                          text=True, cwd=cwd, env=env)

# The corpus: files readers write, each an edit of a stage file: (name, stage, [(text, replacement)]).
LOOP = "i < n; i += stride) sum += in[i];"
STRIDE = "  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;\n"
WARP = "v += __shfl_down_sync(0xffffffffu, v, offset);"
CG = ("""__device__ float block_reduce(float v, float* smem) {
  const cg::thread_block block = cg::this_thread_block();
  const cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  v = cg::reduce(warp, v, cg::plus<float>());
  if (warp.thread_rank() == 0) smem[warp.meta_group_rank()] = v;
  block.sync();
  if (warp.meta_group_rank() == 0)
    v = cg::reduce(warp, warp.thread_rank() < block.num_threads() / 32 ? smem[warp.thread_rank()] : 0.0f,
                   cg::plus<float>());
  return v;
}
""")
CORRECT = [
    ("cooperative_groups", "05_shuffle", [('#include "reduce_stage.hpp"\n', '#include <cooperative_groups.h>\n'
      '#include <cooperative_groups/reduce.h>\n\n#include "reduce_stage.hpp"\n\nnamespace cg = cooperative_groups;\n'),
     ("__device__ float block_reduce(float v, float* smem) {\n  const unsigned lane = threadIdx.x % 32, warp = "
      "threadIdx.x / 32;\n  v = warp_reduce(v);\n  if (lane == 0) smem[warp] = v;\n  __syncthreads();\n  if (warp == "
      "0) v = warp_reduce(lane < blockDim.x / 32 ? smem[lane] : 0.0f);\n  return v;\n}\n", CG)]),
    ("shfl_xor", "05_shuffle", [(WARP, "v += __shfl_xor_sync(0xffffffffu, v, offset);")]),
    ("shfl_sync", "05_shuffle", [(WARP, "v += __shfl_sync(0xffffffffu, v, (threadIdx.x + offset) % 32);")]),
    ("atomic_ref", "07_multiblock", [("if (threadIdx.x == 0) atomicAdd(out, sum);", "if (threadIdx.x == 0) "
      "cuda::atomic_ref<float, cuda::thread_scope_device>(*out).fetch_add(sum, cuda::memory_order_relaxed);")]),
    ("double_accumulator", "02_grid_stride", [("  float sum = 0.0f;\n", "  double acc = 0.0;\n"),
     (LOOP, "i < n; i += stride) acc += in[i];"), ("  sum = block_reduce(sum, smem);",
                                                   "  const float sum = block_reduce(static_cast<float>(acc), smem);")]),
    ("ldg_input", "06_float4", [("v[k] = body[i + k * stride];", "v[k] = __ldg(&body[i + k * stride]);")]),
    ("lambda_launcher", "03_padding", [("    const auto grid =\n", "    auto blocks = [&](std::size_t count) {\n"
      "      return std::min<std::size_t>(ladder::ceil_div<std::size_t>(count, launch.block), launch.grid_limit);\n"
      "    };\n    const auto grid =\n"), ("static_cast<unsigned>(std::min<std::size_t>(ladder::ceil_div<std::size_t>(n, "
      "launch.block), launch.grid_limit));", "static_cast<unsigned>(blocks(n));")]),
    ("template_launcher", "04_warp_unroll", [("// n values -> one partial sum", "template <typename T>\nT blocks_for(T "
      "count, T block) {\n  return (count + block - 1) / block;\n}\n\n// n values -> one partial sum"),
     ("ladder::ceil_div<std::size_t>(n, launch.block)", "blocks_for<std::size_t>(n, launch.block)")]),
    ("half_the_grid", "02_grid_stride", [("  return blocks;\n", "  return blocks > 1 ? blocks / 2 : 1;  // half the "
                                         "blocks an SM holds: a smaller grid, each thread loops longer\n")]),
    ("fmaf", "02_grid_stride", [(LOOP, "i < n; i += stride) sum = fmaf(in[i], 1.0f, sum);")]),
    ("tile_loop_by_two", "08_gemm_tiled", [("for (int k = 0; k < kTile; ++k) sum += a_tile[ty][k] * b_tile[k][tx];",
      "for (int k = 0; k < kTile; k += 2) sum += a_tile[ty][k] * b_tile[k][tx] + a_tile[ty][k + 1] * "
      "b_tile[k + 1][tx];")]),
    ("unused_variable", "07_multiblock", [("  float sum = 0.0f;\n  std::size_t i = tid;",
                                           "  float sum = 0.0f;\n  int unused = 0;\n  std::size_t i = tid;")]),
    ("index_widened", "02_grid_stride", [("std::size_t{gridDim.x} *", "(unsigned long long)gridDim.x *"),
                                          ("blockIdx.x * std::size_t{blockDim.x}", "1ull * blockIdx.x * blockDim.x")]),
    ("debug_print", "05_shuffle", [('#include "reduce_stage', '#include <cassert>\n#include <cstdio>\n#include "reduce_stage'),
     (STRIDE, STRIDE + '  assert(blockDim.x % 32 == 0);\n  if (threadIdx.x + blockIdx.x == 0) printf("n = %llu ", '
      '(unsigned long long)n);\n')]),
    ("launch_bounds", "02_grid_stride", [("__global__ void reduce_kernel(", "__global__ void __launch_bounds__(1024) "
                                          "reduce_kernel(")]),
    ("index_macro", "03_padding", [("__device__ unsigned padded(unsigned i) { return i + i / 32; }",
                                    "#define PADDED(i) ((i) + (i) / 32)"), ("smem[padded(tid)]", "smem[PADDED(tid)]"),
                                   ("smem[padded(index)] += smem[padded(index + s)]", "smem[PADDED(index)] += "
                                    "smem[PADDED(index + s)]")]),
    ("pointer_named_otherwise", "01_naive", [("float* smem) {", "float* sdata) {"), ("  smem[tid] = v;", "  sdata[tid] "
     "= v;"), ("smem[index] += smem[index + s]", "sdata[index] += sdata[index + s]"),
     ("return smem[0];", "return sdata[0];")]),
    ("template_block", "04_warp_unroll", [("__global__ void reduce_kernel(", "template <unsigned kBlock>\n__global__ "
      "void reduce_kernel("), ("std::size_t{gridDim.x} * blockDim.x;", "std::size_t{gridDim.x} * kBlock;"),
     ("(&blocks, reduce_kernel,", "(&blocks, reduce_kernel<1024>,"),
     ("reduce_kernel<<<grid, launch.block, smem_bytes(launch.block), stream>>>(in, n, dst);", "switch (launch.block) {\n"
      + "".join(f"      case {b}: reduce_kernel<{b}><<<grid, {b}, smem_bytes({b}), stream>>>(in, n, dst); break;\n"
                for b in (64, 128, 256, 512)) + "      default: reduce_kernel<1024><<<grid, 1024, smem_bytes(1024), "
      "stream>>>(in, n, dst);\n    }")]),
]
# A wrong one: (name, stage, edits, the reason on a GPU, the reason without one, or None where only the GPU shows it)
WRONG = [
    ("never_ends", "02_grid_stride", [(LOOP, "i < n; i += (n > 4096 && blockIdx.x == 0) ? 0 : stride) sum += in[i];")],
     "did not finish within", "did not finish within"),
    ("index_32_bits", "02_grid_stride", [("for (std::size_t i = blockIdx.x", "for (unsigned i = blockIdx.x")],
     "is 32 bits", "is 32 bits"),
    ("head_not_clamped", "06_float4", [("head = to_boundary < n ? to_boundary : n;", "head = to_boundary;")],
     *["outside its memory"] * 2),
    ("ticket_before_store", "07_multiblock", [("      partials[blockIdx.x] = sum;\n", ""), ("== gridDim.x - 1;\n    }",
     "== gridDim.x - 1;\n      partials[blockIdx.x] = sum;\n    }")], *["takes the grid's last ticket"] * 2),
    ("two_pass_not_deterministic", "07_multiblock", [(
        "      reduce_kernel<Combine::kTwoPass><<<1, launch.block, smem, stream>>>(launch.partials[0], grid, out, "
        "nullptr, nullptr);\n", "      CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float), stream));\n      reduce_kernel"
        "<Combine::kAtomic><<<ladder::ceil_div(grid, launch.block), launch.block, smem, stream>>>(launch.partials[0], "
        "grid, out, nullptr, nullptr);\n")], "a deterministic launch must give the same bits", None),
]

def edited(stage, edits):
    text = stage_file(stage).read_text()
    for find, replace in edits:
        assert text.count(find) == 1, f"`{find[:60]}` is not once in {stage}'s file: update the corpus"
        text = text.replace(find, replace)
    return text

def expectations(gpu):
    """The planted copies of 05 as this machine runs them: (name, stage, text, exits allowed, texts the report has)."""
    disassembler = shutil.which("nvdisasm") or any((build_dir() / "tools").glob("nvidia/*/bin/nvdisasm"))
    print(f"on a GPU: {'yes' if gpu else 'no'}; a disassembler: {'yes' if disassembler else 'no'}")
    cases = []
    for name, edit, allowed, wanted in CASES:
        if name == "correct":
            wanted = [wanted[0], ("PASS     " if disassembler else "not run  ") + "machine code"]
            if gpu:
                allowed, wanted = (0,), [*wanted, "PASS     --self-test full",
                                         "PASS     compute-sanitizer --tool racecheck",
                                         "PASS     timing beside the stage's own", "passed everything"]
        cases.append((name, STAGE, edit(ORIGINAL), allowed, wanted))
    return cases

def corpus(gpu):
    """The corpus in the form of expectations(): a correct file passes all it can run (exit 77 without a GPU), a wrong
    one fails with its reason (./maint/do measure --part own runs it on a GPU)."""
    cases = [(name, stage, edited(stage, edits), (0,) if gpu else (77,),
              ["ladder try: passed everything" if gpu else "ladder try: passed the"]) for name, stage, edits in CORRECT]
    for name, stage, edits, on_gpu, without in WRONG:
        reason = on_gpu if gpu else without
        cases.append((name, stage, edited(stage, edits), (1,) if reason else (77,), [reason] if reason else []))
    return cases

def main():
    only = sys.argv[1:]  # --correct: the planted correct copy, on a GPU; or the names of the cases to run
    if "--correct" not in only:  # every case with the GPU hidden: their reports rest on the host run
        os.environ["CUDA_VISIBLE_DEVICES"] = "-1"
    problems = []
    gpu = subprocess.run([binary(ladder_stages()[0]), "--list-devices"], capture_output=True).returncode != 77
    if "--correct" in only and not gpu:
        print("SKIPPED: no usable GPU: the correct copy's GPU checks are not run (try_file ran every case without one)")
        return 77
    cases = [c for c in expectations(gpu) if not only or c[0] in only or ("--correct" in only and c[0] == "correct")]
    with tempfile.TemporaryDirectory() as tmp:
        for name, stage, text, *_ in cases:
            assert name == "correct" or text != (ROOT / STAGE / "reduce.cu").read_text(), f"{name} changes nothing"
            (pathlib.Path(tmp) / f"{name}.cu").write_text(text)
        # Built together first (those that compile), then tried side by side: the builds are most of the time.
        built = [own_copy(STAGE, pathlib.Path(tmp) / f"{c[0]}.cu") for c in cases if "FAIL     build" not in c[4]]
        build_copies(build_dir().resolve(), STAGE, built)
        with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
            runs = list(pool.map(lambda i: ladder([STAGE[:2], f"{cases[i][0]}.cu"], tmp, driver=i == 0),
                                 range(len(cases))))
        for (name, stage, text, allowed, wanted), done in zip(cases, runs):
            path = pathlib.Path(tmp) / f"{name}.cu"
            out = done.stdout + done.stderr
            missing = [w for w in wanted if w not in out]
            if name == "no_semicolon" and f"{path}(" not in out:
                missing.append(f"the compiler's message naming {path}")
            ok = done.returncode in allowed and not missing
            print(f"{name} ({stage}): exit {done.returncode}, {'ok' if ok else f'WRONG; missing: {missing}'}")
            if not ok:
                problems.append(f"{name}: exit {done.returncode} (want {allowed}), missing {missing}\n{out[-3000:]}")
    return verdict("try_file", problems, "every file ended as expected")

if __name__ == "__main__":
    sys.exit(main())
