"""Checks of a stage's kernels run on the host (host_run.py) that need no profile and no GPU: every reduce kernel
adds each element once, and every tiled GEMM's C is the product. tests/check_thread_models.py holds the ladder's
own stages to them; ./ladder try STAGE mine.cu holds a reader's file to them.

  sum_problems(stage) / gemm_problems(stage) -> [message naming the stage, the kernel and the launch]
"""
from . import host_run

# (block, grid, n): one element per thread, a partial block, many elements per thread, and one-block inputs
SHAPES = [(64, 1, 64), (128, 1, 97), (64, 3, 1000), (64, 2, 5), (256, 2, 2051)]  # blocks: powers of two, 64 up


def sum_problems(stage):
    tree_only = "{Regime::kTree}" in host_run.stage_path(stage).read_text()  # no grid-stride loop: n / block blocks
    out = []
    for entry in host_run.kernel_entries(stage):
        for block, grid, n in SHAPES:
            if entry == "one-block":
                if n > 16 * block:
                    continue
                grid = 1
            elif tree_only:
                grid = -(-n // block)
            for offset, reverse, launches in [(o, 0, 1) for o in range(4)] + [(1, 1, 1), (0, 0, 2)]:
                t = host_run.run(stage, entry, block=block, grid=grid, n=n, offset=offset, reverse=reverse,
                                 launches=launches)
                got = (t.results[("out", 0)] if entry in ("atomic", "last-block", "one-block")
                       else sum(t.results[("out", b)] for b in range(grid)))  # one partial sum per block
                if got != n * (n + 1) / 2:
                    order = (", threads run last to first" if reverse else "") + (
                        ", the second of two launches" if launches > 1 else "")
                    out.append(f"{stage} ({entry}), block {block}, grid {grid}, n = {n}, offset {offset}{order}: the "
                               f"host run sums {got:.9g}, the input {n * (n + 1) / 2:.9g}")
                    break
    return out


# (m, n, k): one tile, edges in every dimension, several steps along K
GEMM_SHAPES = [(16, 16, 16), (20, 18, 35), (33, 7, 50)]


def gemm_problems(stage="08_gemm_tiled"):
    """Every tiled kernel's C against the product on the host (A[i] = i + 1, B[i] = -(i + 1): integers, exact)."""
    out = []
    text = host_run.stage_path(stage).read_text()
    for tile, pad in host_run.tiles(text):
        for m, n, k in GEMM_SHAPES:
            block, grid = host_run.gemm_launch(text, tile, m, n, k)  # as the file's launcher sizes them
            for reverse in (0, 1):
                t = host_run.run(stage, f"tiled-{tile}-{pad}", block=block, grid=grid, n=n, m=m, k=k,
                                 reverse=reverse)
                wrong = [(i, j) for i in range(m) for j in range(n) if t.results[("C", i * n + j)] != -sum(
                    (i * k + x + 1) * (x * n + j + 1) for x in range(k))]
                if wrong:
                    i, j = wrong[0]
                    out.append(f"{stage} (gemm_kernel<{tile}, {pad}>), M = {m}, N = {n}, K = {k}"
                               f"{', threads run last to first' if reverse else ''}: C[{i}][{j}] is "
                               f"{t.results[('C', i * n + j)]:.9g} in the host run, {len(wrong)} of {m * n} wrong")
                    break
    return out


