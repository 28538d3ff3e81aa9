"""The intrinsics readers reach for, in the host run: the combine stage's file, edited to use each family (cache-hinted
loads and stores, atomics and their scopes, fences, cuda::atomic_ref, votes, warp reductions, shuffles with masks,
cooperative groups), still sums every element once on the host; an edit that loses sums fails; one the host run does
not model is refused naming it, the reader's file and line. Every file of ./ladder try's corpus (check_try_file.py)
gets the verdict of try's host checks: the correct ones pass, the wrong ones fail with their reason."""
import concurrent.futures
import sys

from maint.tests import check_try_file, verdict
from scripts import host_run, tries
from scripts.host_checks import kernel_problems, launcher_problems
from scripts.stages import combine_stage

TICKET = ("      cuda::atomic_ref<unsigned, cuda::thread_scope_device> counter(*ticket);\n"
          "      is_last = counter.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;\n")
WARP = "v += __shfl_down_sync(0xffffffffu, v, offset);"
READ = "total += __ldcg(&partials[b]);"
ATOMIC = "atomicAdd(out, sum);"

# (what the edit uses, [(text, its replacement)]): each must leave the sum right on the host.
RUNS = [
    ("__ldg, __ldcs, __ldca", [(READ, "total += __ldg(&partials[b]) + __ldcs(&partials[b]) * 0.0f + "
                                      "__ldca(&partials[b]) * 0.0f;")]),
    *[(f"atomicAdd_{scope}", [(ATOMIC, f"atomicAdd_{scope}(out, sum);")]) for scope in ("system", "block")],
    ("__stcg", [("partials[blockIdx.x] = sum;", "__stcg(&partials[blockIdx.x], sum);")]),
    ("auto for an element of shared memory", [("if (warp == 0) v = warp_reduce(lane < blockDim.x / 32 ? smem[lane] : "
     "0.0f);", "if (warp == 0) {\n    auto w = smem[lane % (blockDim.x / 32)];\n    w *= lane < blockDim.x / 32;\n"
     "    v = warp_reduce(w);\n  }")]),
    ("__threadfence, atomic_thread_fence and atomicInc", [(TICKET, "      __threadfence();\n      cuda::atomic_thread_"
     "fence(cuda::memory_order_acq_rel, cuda::thread_scope_device);\n      is_last = atomicInc(ticket, gridDim.x - 1) "
     "== gridDim.x - 1;\n")]),
    ("atomicCAS, __threadfence_system", [(TICKET, "      __threadfence_system();\n"
                                                  "      unsigned seen = *ticket, old = seen;\n"
                                                  "      do { seen = old; old = atomicCAS(ticket, seen, seen + 1); }"
                                                  " while (old != seen);\n"
                                                  "      is_last = seen == gridDim.x - 1;\n")]),
    ("atomicExch, __threadfence_block, cuda::atomic_ref of block scope",
     [(TICKET, "      __threadfence_block();\n"
               "      cuda::atomic_ref<unsigned, cuda::thread_scope_block> counter(*ticket);\n"
               "      is_last = counter.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;\n"),
      ("*ticket = 0;  // ready for the next launch", "atomicExch(ticket, 0u);")]),
    ("__shfl_sync, __shfl_up_sync", [(WARP, "v += __shfl_sync(0xffffffffu, v, (threadIdx.x + offset) % 32) * "
                                            "(threadIdx.x % 32 + offset < 32 ? 1.0f : 0.0f) + 0.0f * "
                                            "__shfl_up_sync(0xffffffffu, v, offset);")]),
    ("cooperative groups: tiled_partition<32> and <16>, reduce with plus and greater, a tile's sync",
     [("  for (int offset = 16; offset > 0; offset /= 2) " + WARP,
       "  namespace cg = cooperative_groups;\n"
       "  const auto warp = cg::tiled_partition<32>(cg::this_thread_block());\n"
       "  const auto half = cg::tiled_partition<16>(cg::this_thread_block());\n"
       "  half.sync();\n"
       "  v = cg::reduce(warp, v, cg::plus<float>()) + 0.0f * cg::reduce(half, v, cg::greater<float>());")]),
    ("__shfl_xor_sync, __ballot_sync, __reduce_add_sync, __syncwarp(mask)",
     [(WARP, "v += __shfl_xor_sync(0xffffffffu, v, offset) * (__ballot_sync(0xffffffffu, 1) != 0u ? 1.0f : 0.0f);\n"
             "  __syncwarp(0xffffffffu);\n"
             "  if (__reduce_add_sync(0xffffffffu, 1u) == 0u) v = 0.0f;")]),
]
# An intrinsic that loses sums: the host run must see it.
LOSES = ("atomicExch for atomicAdd", [(ATOMIC, "atomicExch(out, sum);")])
# What the host run does not model: refused, naming it, the file and the line.
REFUSED = [("__activemask", [(WARP, "v += __shfl_down_sync(__activemask(), v, offset);")]),
           ("this_grid", [(WARP, "v += __shfl_down_sync(0xffffffffu, v, offset) * cg::this_grid().size();")]),
           ("__syncthreads_or", [(WARP, "v += __shfl_down_sync(0xffffffffu, v, offset) * __syncthreads_or(1);")]),
           ("volatile", [(WARP, "v += __shfl_down_sync(0xffffffffu, v, offset) + 0.0f * *(volatile float*)&v;")])]

def corpus_problems(case):
    """One file of the corpus through the host checks, as ./ladder try runs them: what went otherwise."""
    name, stage, edits = case[:3]
    want, text = {w[0]: w[4] for w in check_try_file.WRONG}.get(name), check_try_file.edited(stage, edits)
    if not_it := tries.not_this_stage(stage, text):  # as ./ladder try judges it first
        return [f"corpus {name}: ./ladder try would not take it as a version of {stage}: {not_it}"]
    status, detail = tries.host_verdict(stage, text, f"{name}.cu")
    if (status != tries.PASS) if want is None else (status != tries.FAIL or want not in detail):
        return [f"corpus {name}: the host checks say {status}, not {'FAIL: ' + want if want else 'PASS'}: {detail[:800]}"]
    return []

def edit_problems(kind, name, edits):
    """A correct edit ("runs") must pass, one that loses sums ("loses") fail, one the host run does not model
    ("refused") be refused naming it, the reader's file and line (as ./ladder try hands it a reader's file)."""
    stage, text = combine_stage(), check_try_file.edited(combine_stage(), edits)
    try:
        with host_run.stage_text(stage, text, "mine.cu" if kind == "refused" else None):
            found = kernel_problems(stage) or launcher_problems(stage)
    except host_run.HostRunUnmodelled as e:
        if kind != "refused":
            return [f"{name}: the host run did not run it: {str(e)[:1500]}"]
        line = next(n for n, words in enumerate(text.split("\n"), 1) if name in words)
        if f"`{name}" not in str(e) or f"mine.cu:{line}: `" not in str(e):
            return [f"{name}: refused, but without naming it, the reader's file and line {line}: {e}"]
        return []
    except host_run.HostRunError as e:
        return [f"{name}: the host run did not run it ({kind}): {str(e)[:1500]}"]
    wrong = {"runs": bool(found), "loses": not found, "refused": True}[kind]
    return [f"{name} ({kind}): the host run said {found[:1] or 'nothing wrong'}"] if wrong else []

def main():
    """Every file in a process of its own, side by side (the host run's builds are the time)."""
    corpus = [*check_try_file.CORRECT, *(w[:3] for w in check_try_file.WRONG if w[4])]
    with concurrent.futures.ProcessPoolExecutor() as pool:
        jobs = [pool.submit(corpus_problems, case) for case in corpus]
        edits = [("runs", *r) for r in RUNS] + [("loses", *LOSES)] + [("refused", *r) for r in REFUSED]
        jobs += [pool.submit(edit_problems, *job) for job in edits]
        problems = [p for job in jobs for p in job.result()]
    return verdict("host_intrinsics", problems, f"{len(RUNS)} files using the intrinsics readers reach for ran right "
                   f"on the host, the one that loses sums through atomicExch failed, {len(REFUSED)} were refused by "
                   f"name, and the {len(corpus)} files of the try corpus the host run can judge got their verdicts")

if __name__ == "__main__":
    sys.exit(main())
