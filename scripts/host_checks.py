"""Checks of a stage's kernels run on the host (host_run.py), which need no GPU: every reduce kernel and launcher adds
each element once, and every tiled GEMM's C is the product. The stage's test <stage>.host_run holds the ladder's own
stages to them; ./ladder try STAGE mine.cu holds a reader's file to them.

  problems(stage) -> [message naming the stage, the kernel and the launch]
  python3 -m scripts.host_checks STAGE     exit 0: none; 1: the problems, printed; 77: what the host run cannot model"""
import concurrent.futures
import random
import re
import sys

from . import host_run
from .build import ncpu
from .stages import combines, regimes, role

# (block, grid, n): one element per thread, a partial block, many elements per thread, and small inputs (2: less than
# a float4 at any offset)
SHAPES = [(64, 1, 64), (128, 1, 97), (64, 3, 1000), (64, 2, 5), (256, 2, 2051), (64, 1, 2)]  # blocks: 64 up
# (offset, threads last to first, launches, blocks): every alignment, the other thread order, a second launch, and
# the blocks run last to first and in a seeded shuffle (a GPU runs them in any order, so a sum that needs block 0 to
# run first is wrong there)
ORDERS = [(o, 0, 1, "") for o in range(4)] + [(1, 1, 1, ""), (0, 0, 2, ""), (0, 0, 1, "last first"),
                                             (0, 0, 1, "shuffled")]
# The kernels that write one result, *out (the others write one partial sum per block): out holds exactly that.
ONE_RESULT = ("atomic", "last-block", "one-block")
# The launcher's runs (in[i] = i % CYCLE + 1, so every sum is a whole number below 2^24, exact in any order): with
# blocks of 64, sizes around each power of two and a block; with blocks of 1024, each multiple of 512 and the size
# past it (07's one-block path at each thread count it picks, and the first size that needs the next).
CYCLE = 1024
LAUNCHER_SIZES = [(64, n) for n in (1, 33, 64, 65, 1000, 1025, 1029, 4097)] + [
    (1024, n) for k in range(1, 33) for n in (512 * k, 512 * k + 1)]
GRID_LIMIT = {"stream": 3, "tree": 2 ** 31 - 1}  # a grid of 3 makes every thread loop
# (m, n, k): one tile, edges in every dimension, several steps along K, and columns of more than two 32-wide tiles
GEMM_SHAPES = [(16, 16, 16), (20, 18, 35), (33, 7, 50), (5, 70, 3)]
WIDE = r"(?:std::)?size_t|(?:unsigned\s+)?long(?:\s+long)?(?:\s+int)?|(?:std::)?u?int64_t|(?:std::)?ptrdiff_t"
NARROW = r"(?:const\s+)?(?:unsigned int|unsigned|int|(?:std::)?u?int32_t)"
# A block's index or the grid's size times the block's, in unsigned 32-bit arithmetic: a thread's index or the grid's
THREADS_32 = (r"\b(?:blockIdx|gridDim)\.[xyz]\s*\*\s*blockDim\.[xyz]\b|"
              r"\bblockDim\.[xyz]\s*\*\s*(?:blockIdx|gridDim)\.[xyz]\b")
# Unless it is 64-bit already: its left operand cast ((size_t)blockIdx.x), or a 64-bit factor before it (1ull, n)
WIDENED = (rf"\(\s*(?:{WIDE})\s*\)(?:\s*\w+\s*\*)?|(?:\b(?:0[xX][0-9a-fA-F]+|\d+)[uU]?[lL]{{1,2}}[uU]?|"
           rf"\b(?:{WIDE})\s*(?:\{{[^{{}}]*\}}|\([^()]*\))|static_cast<\s*(?:{WIDE})\s*>\s*\([^()]*\))\s*\*")

def block_order(blocks, grid, n):
    """The order=... of a host run: [] (first to last), last to first, or shuffled with a seed of the launch's."""
    if blocks == "last first":
        return list(range(grid - 1, -1, -1))
    if blocks == "shuffled":
        return random.Random(grid * 1000003 + n).sample(range(grid), grid)
    return []

def first_failures(runs, message):
    """Each run (group, what, host_run.run's arguments) side by side, a process each: the first message(*what, trace)
    of each group, None where a run is right. A run that fails (one that never ends, say) cancels those not started;
    the first in order that failed is raised, whichever ended first (every run before it ran: they start in order)."""
    pool = concurrent.futures.ThreadPoolExecutor(ncpu())
    futures = [pool.submit(host_run.run, **args) for _, _, args in runs]
    try:
        next((f for f in concurrent.futures.as_completed(futures) if f.exception()), None)
    finally:  # on Ctrl-C too: the runs not started never start
        pool.shutdown(wait=True, cancel_futures=True)
    if failed := next((f.exception() for f in futures if not f.cancelled() and f.exception()), None):
        raise failed
    first = {}  # group: its first message
    for (group, what, _), future in zip(runs, futures):
        if group not in first and (said := message(*what, future.result())):
            first[group] = said
    return list(first.values())

def kernel_problems(stage):
    """Each kernel at each of SHAPES (one-block: on one block, up to 16 elements a thread) in each of ORDERS."""
    host_run.executable(stage)  # built once, before the runs
    tree_only = "stream" not in regimes(stage)  # no grid-stride loop: n / block blocks

    def launch(entry, block, grid, n, offset, reverse, launches, blocks):  # the run's, elements()'s: one launch
        order = {"order": block_order(blocks, grid, n)} if blocks else {}
        return dict(stage=stage, entry=entry, block=block, grid=grid, n=n, offset=offset, reverse=reverse,
                    outs=int(entry in ONE_RESULT), **order)

    def message(entry, block, grid, n, offset, reverse, launches, blocks, t):
        got = t.results[("out", 0)] if entry in ONE_RESULT else sum(t.results[("out", b)] for b in range(grid))
        if got == n * (n + 1) / 2:
            return None
        order = (", threads run last to first" if reverse else "") + (
            ", the second of two launches" if launches > 1 else "") + (
            f", blocks run {blocks} ({','.join(map(str, block_order(blocks, grid, n)))})" if blocks else "")
        return (f"{host_run.SHOWN_AS.get(stage, stage)} (its kernel {entry}), block {block}, grid {grid}, n = {n}, "
                f"offset {offset}{order}: the host run sums {got:.9g}, the input {n * (n + 1) / 2:.9g}"
                + elements(**launch(entry, block, grid, n, offset, reverse, launches, blocks)))
    runs = []
    for entry in host_run.kernel_entries(stage):
        for block, grid, n in SHAPES:
            if entry == "one-block":
                if n > 16 * block:
                    continue
                grid = 1
            elif tree_only:
                grid = -(-n // block)
            runs += [((entry, block, grid, n), (entry, block, grid, n, *order),
                      dict(launch(entry, block, grid, n, *order), launches=order[2], quiet=1))
                     for order in ORDERS if grid > 1 or not order[3]]
    return first_failures(runs, message)

def elements(stage, entry, **launch):
    """Which input elements the launch never adds, or adds more than once, and the threads that bring each to their
    block's sum: a run with only that element 1, for every element."""
    try:
        t = host_run.run(stage, entry, readers=1, **launch)
    except host_run.HostRunError:
        return ""
    if t.outside:  # a NaN, though the input holds none (a launcher's launches number their threads alike)
        who = "a thread" if entry == "launcher" else f"thread{'s' * (len(t.outside) > 1)} " + ", ".join(
            map(str, sorted(t.outside)))
        return (f"; {who} brought a NaN to the sum, though the input holds none: a read outside [in, in + n), or of a "
                "partial sum not written yet (the host run puts NaN in both)")
    wrong = [(e, s) for e, s in sorted(t.sums.items()) if s != 1]
    said = [f"in[{e}] is never added" if s == 0 else f"in[{e}] is added {s:g} times" +
            (f" (by threads {', '.join(map(str, t.readers[e]))})" if t.readers.get(e) else "") for e, s in wrong[:4]]
    return f"; {'; '.join(said)}{f' (and {len(wrong) - 4} more)' if len(wrong) > 4 else ''}" if said else ""

def launcher_problems(stage):
    """The stage's own launcher on the host (runtime.hpp), at the sizes of LAUNCHER_SIZES: blocks of 64 in every
    combine, regime and block order; blocks of 1024 (the sizes of one block's reach) first to last, in the default
    regime and combine, and in the others at the largest of those sizes and the next. Its launches get exactly the
    dynamic shared memory they ask for, and buffers exactly the sizes the harness gives."""
    host_run.executable(stage, launcher=True)
    names = host_run.combine_names()

    def launch(block, n, combine, regime, order):
        return dict(stage=stage, entry="launcher", block=block, grid=-(-n // block), n=n,
                    combine=names.index(combine), limit=GRID_LIMIT[regime], blocks=order, outs=1)

    def message(block, n, combine, regime, order, t):
        got, want = t.results[("out", 0)], sum(i % CYCLE + 1 for i in range(n))
        if got == want:
            return None
        blocks = ("", ", blocks run last to first", ", blocks shuffled")[order]
        return (f"{host_run.SHOWN_AS.get(stage, stage)} (its launcher), block {block}, n = {n}, {combine}, {regime} "
                f"regime{blocks}: the host run sums {got:.9g}, the input {want}"
                + (elements(**launch(block, n, combine, regime, order)) if n <= 2048 else ""))
    runs = []
    for block, n in LAUNCHER_SIZES:
        for combine in combines(stage):
            if block == 64:
                runs += [(block, n, combine, regime, order) for regime in regimes(stage) for order in (0, 1, 2)]
            elif combine == combines(stage)[0] or n > 512 * 31 + 1:
                runs.append((block, n, combine, regimes(stage)[0], 0))
    return first_failures([(r[:4], r, dict(launch(*r), cycle=CYCLE, quiet=1)) for r in runs], message)

def gemm_problems(stage):
    """Every tiled variant's C, made by the stage's own launcher (which sizes the grid and block), against the
    product on the host (A[i] = i + 1, B[i] = -(i + 1): integers, exact)."""
    host_run.executable(stage, launcher=True)

    def message(tile, pad, m, n, k, reverse, t):
        product = lambda i, j: -sum((i * k + x + 1) * (x * n + j + 1) for x in range(k))  # noqa: E731
        wrong = [(i, j) for i in range(m) for j in range(n) if t.results[("C", i * n + j)] != product(i, j)]
        if not wrong:
            return None
        i, j = wrong[0]
        return (f"{host_run.SHOWN_AS.get(stage, stage)} (gemm_kernel<{tile}, {pad}>), M = {m}, N = {n}, K = {k}"
                f"{', threads run last to first' if reverse else ''}: C[{i}][{j}] is "
                f"{t.results[('C', i * n + j)]:.9g} in the host run, {product(i, j)} in the product; {len(wrong)} of "
                f"{m * n} wrong")
    runs = [((tile, pad, m, n, k), (tile, pad, m, n, k, reverse),
             dict(stage=stage, entry="launcher", tile=tile, pad=pad, m=m, n=n, k=k, reverse=reverse, quiet=1))
            for tile, pad in host_run.tiles(host_run.stage_path(stage).read_text()) for m, n, k in GEMM_SHAPES
            for reverse in (0, 1)]
    return first_failures(runs, message)

def problems(stage):
    return index_problems(stage) or (gemm_problems(stage) if role(stage) == "gemm" else
                                     kernel_problems(stage) or launcher_problems(stage))

def index_problems(stage):
    """A 32-bit variable made from, or compared in a loop's condition with, a 64-bit parameter of its function (the
    kernel's n): past 2^32 elements it wraps, and a grid-stride loop on it never ends; and in a reduce stage, a block's
    index or the grid's size times the block's in 32 bits. Read from the file's text, naming the line."""
    out, path = [], host_run.stage_path(stage)
    where = host_run.SHOWN_AS.get(stage, f"{stage}/{path.name}")
    blanked = host_run.COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m[0]), path.read_text())
    for first, item in host_run.top_level_items(blanked):
        head = item.split("{", 1)[0]
        if "__global__" not in head and "__device__" not in head:
            continue
        wide = re.findall(rf"\b(?:{WIDE})\s+(\w+)\s*[,)]", head)
        loops = " ".join(a + b for a, b in re.findall(r"\bfor\s*\([^;]*;([^;]*);|\bwhile\s*\(([^{};]*)\)", item))
        for m in re.finditer(rf"\b({NARROW})\s+(\w+)\s*=\s*([^;,]*)", item):
            name, init = m[2], m[3]
            uses = [p for p in wide if re.search(rf"\b{p}\b", init) or re.search(  # a loop's condition: it wraps there
                rf"\b{name}\s*[<>]=?\s*{p}\b|\b{p}\s*[<>]=?\s*{name}\b", loops)]
            if uses:
                line = first + item[:m.start()].count("\n")
                how = "made from" if re.search(rf"\b{uses[0]}\b", init) else "compared with"
                out.append(f"{where}:{line}: `{m[1]} {name}` is 32 bits, and {how} the 64-bit {uses[0]}: past 2^32 "
                           "elements it wraps (declare it std::size_t)")
        # its 64-bit variables widen a product too (not one cast narrower first: (unsigned)n * ...)
        named = "|".join(re.findall(rf"\b(?:{WIDE})\s+(?!(?:int|long)\b)(\w+)", item)) or "$^"
        for m in re.finditer(THREADS_32, item) if role(stage) == "reduce" else ():  # a reduce's grid reaches 2^41
            if re.search(rf"(?:{WIDENED}|(?:^|[^)\s])\s*\b(?:{named})\s*\*)\s*$", item[:m.start()]):
                continue
            out.append(f"{where}:{first + item[:m.start()].count(chr(10))}: `{m[0]}` multiplies two 32-bit values: "
                       "past 2^32 threads it wraps before a std::size_t holds it (widen one: std::size_t{blockDim.x})")
    return out

def main(argv):
    try:
        found = problems(argv[0])
    except host_run.HostRunUnmodelled as e:
        print(f"SKIPPED: {e}")
        return 77
    except host_run.HostRunError as e:
        found = [str(e)]
    print("\n".join(found) or f"{argv[0]}: every host run adds each element once (or makes C the product)")
    return 1 if found else 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
