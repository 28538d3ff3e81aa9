"""Checks of a stage's kernels run on the host (host_run.py) that need no profile and no GPU: every reduce kernel
adds each element once, and every tiled GEMM's C is the product. tests/check_thread_models.py holds the ladder's
own stages to them; ./ladder try STAGE mine.cu holds a reader's file to them. The runs of one check are processes
of their own, run side by side.

  sum_problems(stage) / gemm_problems(stage) -> [message naming the stage, the kernel and the launch]
"""
import concurrent.futures
import os
import random

from . import host_run
from .runner.stages import regimes

# (block, grid, n): one element per thread, a partial block, many elements per thread, and one-block inputs
SHAPES = [(64, 1, 64), (128, 1, 97), (64, 3, 1000), (64, 2, 5), (256, 2, 2051)]  # blocks: powers of two, 64 up
# (offset, threads last to first, launches, blocks): every alignment, the other thread order, a second launch, and
# the blocks run last to first and in a seeded shuffle (a GPU runs them in any order, so a sum that needs block 0 to
# run first is wrong there)
ORDERS = [(o, 0, 1, "") for o in range(4)] + [(1, 1, 1, ""), (0, 0, 2, ""), (0, 0, 1, "last first"),
                                             (0, 0, 1, "shuffled")]


# The kernels that write one result, *out (the others write one partial sum per block): out holds exactly that.
ONE_RESULT = ("atomic", "last-block", "one-block")


def block_order(blocks, grid, n):
    """The order=... of a host run: [] (first to last), last to first, or shuffled with a seed of the launch's."""
    if blocks == "last first":
        return list(range(grid - 1, -1, -1))
    if blocks == "shuffled":
        return random.Random(grid * 1000003 + n).sample(range(grid), grid)
    return []


def side_by_side(runs):
    """Each (key, thunk) run on a pool of threads (each thunk starts a process): {key: its result}."""
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        futures = {key: pool.submit(thunk) for key, thunk in runs}
        return {key: f.result() for key, f in futures.items()}


def sum_launches(stage):
    """(entry, block, grid, n, offset, reverse, launches) of every host run sum_problems makes."""
    tree_only = "stream" not in regimes(stage)  # no grid-stride loop: n / block blocks
    out = []
    for entry in host_run.kernel_entries(stage):
        for block, grid, n in SHAPES:
            if entry == "one-block":
                if n > 16 * block:
                    continue
                grid = 1
            elif tree_only:
                grid = -(-n // block)
            out += [(entry, block, grid, n, *order) for order in ORDERS if grid > 1 or not order[3]]
    return out


def sum_problems(stage):
    host_run.executable(stage)  # built once, before the runs
    launches = sum_launches(stage)
    def one(entry, block, grid, n, offset, reverse, launches_, blocks):
        order = block_order(blocks, grid, n)
        return host_run.run(stage, entry, block=block, grid=grid, n=n, offset=offset, reverse=reverse,
                            launches=launches_, quiet=1, outs=1 if entry in ONE_RESULT else 0,
                            **({"order": order} if order else {}))
    traces = side_by_side([(l, lambda l=l: one(*l)) for l in launches])
    out, seen = [], set()
    for entry, block, grid, n, offset, reverse, launches_, blocks in launches:
        t = traces[(entry, block, grid, n, offset, reverse, launches_, blocks)]
        got = (t.results[("out", 0)] if entry in ONE_RESULT
               else sum(t.results[("out", b)] for b in range(grid)))  # one partial sum per block
        if got != n * (n + 1) / 2 and (entry, block, grid, n) not in seen:
            seen.add((entry, block, grid, n))  # the first failing order of each launch
            order = (", threads run last to first" if reverse else "") + (
                ", the second of two launches" if launches_ > 1 else "") + (
                f", blocks run {blocks} ({','.join(map(str, block_order(blocks, grid, n)))})" if blocks else "")
            out.append(f"{stage} ({entry}), block {block}, grid {grid}, n = {n}, offset {offset}{order}: the host "
                       f"run sums {got:.9g}, the input {n * (n + 1) / 2:.9g}")
    return out


# (m, n, k): one tile, edges in every dimension, several steps along K
GEMM_SHAPES = [(16, 16, 16), (20, 18, 35), (33, 7, 50)]


def gemm_problems(stage):
    """Every tiled kernel's C against the product on the host (A[i] = i + 1, B[i] = -(i + 1): integers, exact)."""
    text = host_run.stage_path(stage).read_text()
    host_run.executable(stage)
    runs = []
    for tile, pad in host_run.tiles(text):
        for m, n, k in GEMM_SHAPES:
            block, grid = host_run.gemm_launch(text, tile, m, n, k)  # as the file's launcher sizes them
            runs += [((tile, pad, m, n, k, reverse), lambda a=(tile, pad, m, n, k, block, grid, reverse): host_run.run(
                stage, f"tiled-{a[0]}-{a[1]}", block=a[5], grid=a[6], n=a[3], m=a[2], k=a[4], reverse=a[7], quiet=1))
                for reverse in (0, 1)]
    traces = side_by_side(runs)
    out, seen = [], set()
    for (tile, pad, m, n, k, reverse), t in traces.items():
        wrong = [(i, j) for i in range(m) for j in range(n) if t.results[("C", i * n + j)] != -sum(
            (i * k + x + 1) * (x * n + j + 1) for x in range(k))]
        if wrong and (tile, pad, m, n, k) not in seen:
            seen.add((tile, pad, m, n, k))
            i, j = wrong[0]
            out.append(f"{stage} (gemm_kernel<{tile}, {pad}>), M = {m}, N = {n}, K = {k}"
                       f"{', threads run last to first' if reverse else ''}: C[{i}][{j}] is "
                       f"{t.results[('C', i * n + j)]:.9g} in the host run, {len(wrong)} of {m * n} wrong")
    return out
