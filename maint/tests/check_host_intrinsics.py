"""The intrinsics readers reach for, in the host run: the combine stage's file, edited to use each family (cache-hinted
loads and stores, atomics and their scopes, fences, cuda::atomic_ref, votes, warp reductions, shuffles with masks,
cooperative groups), still sums every element once on the host; an edit that loses sums fails; one the host run does
not model is refused naming it, the reader's file and line. Every file of ./ladder try's corpus (check_try_file.py)
gets the verdict of try's host checks: the correct ones pass, the wrong ones fail with their reason.
Run: python3 -m maint.tests.check_host_intrinsics"""
import concurrent.futures
import sys

from maint.tests import check_try_file, verdict
from scripts import host_run, tries
from scripts.host_checks import sum_problems
from scripts.stages import combine_stage, stage_file

TICKET = ("      cuda::atomic_ref<unsigned, cuda::thread_scope_device> counter(*ticket);\n"
          "      is_last = counter.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;\n")
WARP = "v += __shfl_down_sync(0xffffffffu, v, offset);"
READ = "total += __ldcg(&partials[b]);"
ATOMIC = "atomicAdd(out, sum);"

# (what the edit uses, [(text, its replacement)]): each must leave the sum right on the host.
RUNS = [
    ("__ldg, __ldcs, __ldca", [(READ, "total += __ldg(&partials[b]) + __ldcs(&partials[b]) * 0.0f + "
                                      "__ldca(&partials[b]) * 0.0f;")]),
    ("atomicAdd_system", [(ATOMIC, "atomicAdd_system(out, sum);")]),
    ("atomicAdd_block", [(ATOMIC, "atomicAdd_block(out, sum);")]),
    ("__threadfence and atomicInc", [(TICKET, "      __threadfence();\n"
                                              "      is_last = atomicInc(ticket, gridDim.x - 1) == gridDim.x - 1;\n")]),
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
           ("this_grid", [(WARP, "v += __shfl_down_sync(0xffffffffu, v, offset) * cg::this_grid().size();")])]

def edited(stage, edits):
    text = stage_file(stage).read_text()
    for find, replace in edits:
        if text.count(find) != 1:
            raise SystemExit(f"host_intrinsics: `{find.strip()}` is not once in {stage}'s file: update this test")
        text = text.replace(find, replace)
    return text

def problems_of(stage, edits, shown_as=None):
    with host_run.stage_text(stage, edited(stage, edits), shown_as):
        return sum_problems(stage)

def corpus_verdict(case):
    """(name, status, detail) of one corpus file through the host checks, as ./ladder try runs them."""
    name, stage, edits = case[:3]
    return name, *tries.host_verdict(stage, check_try_file.edited(stage, edits), f"{name}.cu")

def corpus_problems():
    """The corpus, each file in a process of its own (the host run's builds are the time): what went otherwise."""
    reasons = {name: cpu for name, _, _, _, cpu in check_try_file.WRONG}
    cases = [*check_try_file.CORRECT, *(w[:3] for w in check_try_file.WRONG if w[4])]
    with concurrent.futures.ProcessPoolExecutor() as pool:
        verdicts = list(pool.map(corpus_verdict, cases))
    out = []
    for name, status, detail in verdicts:
        want = reasons.get(name)
        if (status != tries.PASS) if want is None else (status != tries.FAIL or want not in detail):
            out.append(f"corpus {name}: the host checks say {status}, not {'FAIL: ' + want if want else 'PASS'}: "
                       f"{detail[:800]}")
    return out, len(cases)

def main():
    stage = combine_stage()
    problems, corpus = corpus_problems()
    for name, edits in RUNS:
        try:
            found = problems_of(stage, edits)
        except host_run.HostRunError as e:
            found = [str(e)[:1500]]
        problems += [f"{name}: the host run of a correct file failed: {found[0]}"] if found else []
    try:
        if not problems_of(stage, LOSES[1]):
            problems.append(f"{LOSES[0]}: the host run passed a file that loses every block's sum but one")
    except host_run.HostRunError as e:
        problems.append(f"{LOSES[0]}: the host run did not run: {e}")
    for name, edits in REFUSED:  # as ./ladder try hands the host run a reader's file, which its messages name
        try:
            problems_of(stage, edits, "mine.cu")
            problems.append(f"{name}: the host run ran a file using it instead of refusing it by name")
        except host_run.HostRunUnmodelled as e:
            line = next(n for n, text in enumerate(edited(stage, edits).split("\n"), 1) if name in text)
            if f"`{name}" not in str(e) or f"mine.cu:{line}: `" not in str(e):
                problems.append(f"{name}: refused, but without naming it, the reader's file and line {line}: {e}")
        except host_run.HostRunError as e:
            problems.append(f"{name}: not refused by name, but: {str(e)[:800]}")
    return verdict("host_intrinsics", problems, f"{len(RUNS)} files using the intrinsics readers reach for ran right "
                   f"on the host, the one that loses sums through atomicExch failed, {len(REFUSED)} were refused by "
                   f"name, and the {corpus} files of the try corpus the host run can judge got their verdicts")

if __name__ == "__main__":
    sys.exit(main())
