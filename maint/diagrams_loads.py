"""The pictures of 06 to 08 (maint/diagrams.py has the others, and says how they are drawn): the float4 peel and
the loads in flight, the combines as timelines, the GEMM's tiles and their banks."""
from . import block_requests as br
from scripts import host_run
from .svg import BLUE, CONFLICT, GREEN, IDLE, INK, MUTED, ORANGE, PINK, SKY, WIDTH, Svg, span

# ---- 06: the peel, and the loads in flight --------------------------------------------------------------------


def float4_reads(stage, n, offset, threads, grid=1, scalar=True):
    """From a host run: {element: (thread, how, slot)}, how 'assign' (a float4 of the loop that keeps loads in flight,
    into its array's slot), 'construct' (a float4 copied one at a time) or, with scalar, 'scalar' (a float read,
    found by one run per element)."""
    t = host_run.run(stage, host_run.kernel_entries(stage)[0], block=threads, grid=grid, n=n, offset=offset)
    out = {}
    for b, tid, phase, how, region, element, dest in t.loads:
        for e in range(element, element + 4):
            assert e not in out, f"{stage}: element {e} loaded twice"
            out[e] = (b * threads + tid, how, dest)
    readers = host_run.run(stage, host_run.kernel_entries(stage)[0], block=threads, grid=grid, n=n, offset=offset,
                           readers=1).readers if scalar else {}
    for e, who in readers.items():
        assert len(who) == 1, f"{stage}: element {e} of n = {n} at offset {offset} read by {len(who)} threads"
        out.setdefault(e, (who[0], "scalar", None))
    return out


def split_figure(base_n=16):
    """06's head / float4 body / tail for input offsets 0-3 and each n mod 4, as the host run reads them."""
    cw, left, top, rh = 14, 150, 62, 22
    cases = [(offset, base_n + r) for offset in range(4) for r in range(4)]
    cells = 3 + base_n + 3 + 3
    svg = Svg(WIDTH, top + rh * len(cases) + 70, "06_float4: head, float4 body and tail")
    svg.text(16, 24, "06_float4: the input split at 16-byte boundaries, for each pointer offset and n mod 4", 14,
             weight="bold")
    svg.text(left, top - 10, "memory from the 16-byte boundary at or below in (one cell per float)", 9, fill=MUTED)
    for row, (offset, n) in enumerate(cases):
        y = top + row * rh
        reads = float4_reads("06_float4", n, offset, 64)
        body = sorted(e for e, (_, how, _) in reads.items() if how != "scalar")
        start = body[0] if body else n
        head = sum(1 for e, (_, how, _) in reads.items() if how == "scalar" and e < start and offset + e < 4)
        tail = n - head - len(body)
        for c in range(offset + n + (-(offset + n)) % 4):
            i = c - offset
            role = None if not 0 <= i < n else "body" if i in body else "head" if i < head else "tail"
            if role is None:  # the rest of a 16-byte chunk: not the input
                svg.rect(left + c * cw, y, cw, rh - 6, "#ffffff", MUTED, 0.6, "2 2")
            else:
                svg.rect(left + c * cw, y, cw, rh - 6, {"body": BLUE, "head": PINK, "tail": GREEN}[role], "#ffffff", 0.6)
        for e in body[::4]:
            svg.rect(left + (offset + e) * cw, y, 4 * cw, rh - 6, "none", INK, 1.2)
        svg.text(left - 8, y + 12, f"offset {offset}, n = {n}", 11, "end")
        svg.text(left + cells * cw + 8, y + 12, f"head {head}, {len(body) // 4} float4, tail {tail}", 11, fill=MUTED)
    svg.legend(left, top + rh * len(cases) + 26, [(PINK, "head: in[tid], tid < head"), (BLUE, "body: one float4 per box"),
                                                 (GREEN, "tail: in[n - tail + tid]")])
    svg.text(left, top + rh * len(cases) + 48, "Dashed: the rest of a 16-byte chunk, outside the input: never read.", 11,
             fill=MUTED)
    return svg


def loads_figure(grid_threads=64, shown=8, rows=10, extra=5):
    """06's grid-stride over float4s: the vectors each thread loads together, kLoadsInFlight at a time, for the
    first `shown` threads of a one-block grid."""
    vectors = grid_threads * (rows - 1) + extra
    reads = float4_reads("06_float4", 4 * vectors, 0, grid_threads, scalar=False)
    batch, slot0, count = {}, {}, {}
    for v in range(vectors):  # in each thread's order: a batch ends when the thread reuses its array's first slot
        tid, how, dest = reads[4 * v]
        if how == "assign":
            if tid not in slot0:
                slot0[tid], count[tid] = dest, -1
            count[tid] += dest == slot0[tid]
            batch[v] = count[tid]
        else:
            batch[v] = "single"
    in_flight = sum(1 for v in batch if batch[v] == 0 and reads[4 * v][0] == 0)
    mine = [v for v in range(vectors) if reads[4 * v][0] < shown]
    cw, left, top, rh = 56, 100, 66, 22
    svg = Svg(WIDTH, top + rh * rows + 70, "06_float4: the loads a thread has in flight")
    svg.text(16, 24, f"06_float4, kLoadsInFlight = {in_flight}: one block of {grid_threads} threads, {vectors} float4 "
             f"vectors; threads 0–{shown - 1} shown", 14, weight="bold")
    colours = [BLUE, ORANGE, PINK, GREEN]
    for t in range(shown):
        svg.text(left + t * cw + cw / 2, top - 8, f"thread {t}", 9, "middle", MUTED)
    for v in mine:
        tid, r = reads[4 * v][0], v // grid_threads
        fill = SKY if batch[v] == "single" else colours[batch[v] % len(colours)]
        svg.cell(left + tid * cw, top + r * rh, cw, rh - 4, fill, f"body[{v}]", 9, INK if tid == 0 else "#ffffff")
    for r in range(rows):
        svg.text(left - 8, top + r * rh + 12, f"tid + {r}·stride" if r else "i = tid", 10, "end", MUTED)
    x = left + shown * cw + 14
    for b in sorted({b for b in batch.values() if b != "single"}):
        rows_b = sorted({v // grid_threads for v in batch if batch[v] == b})
        y0, y1 = top + rows_b[0] * rh, top + rows_b[-1] * rh + rh - 4
        svg.line(x, y0, x, y1, colours[b % len(colours)], 2)
        svg.text(x + 8, (y0 + y1) / 2 + 4, f"iteration {b}: {len(rows_b)} loads in flight", 11)
    single = sorted({v // grid_threads for v in batch if batch[v] == "single"})
    if single:
        svg.text(x + 8, top + single[0] * rh + 12, "the remainder loop:", 11)
        svg.text(x + 8, top + single[0] * rh + 26, "one load at a time", 11)
    y = top + rh * rows + 24
    svg.text(left, y, "Each thread issues one iteration's loads (one colour in its column; thread 0 outlined) before "
             "adding any.", 11)
    svg.text(left, y + 18, "The loop runs while i + (kLoadsInFlight - 1)·stride < vectors, then one vector at a time.",
             10, fill=MUTED)
    return svg


FINISH_ORDER = (2, 0, 5, 3, 1, 4)  # any order: the blocks finish as the hardware schedules them


# ---- 07: the combines as timelines ------------------------------------------------------------------------

def combine_runs(order, block=64):
    n = 4 * 4 * block * len(order)  # more than one block covers: the launcher would not take one_block_kernel
    return {c: host_run.run("07_multiblock", c, block=block, grid=len(order), n=n, order=list(order))
            for c in ("atomic", "two-pass", "last-block")}, n


def combines_figure(order=FINISH_ORDER):
    """07's combines: what each block does when its sum is ready, in the order the blocks ran on the host, and
    one_block_kernel, which has nothing to combine."""
    grid = len(order)
    runs, n = combine_runs(order)
    unit, left, top, rh = 46, 76, 60, 17
    panel = rh * (grid + 1) + 62
    after = left + (grid + 1.6) * unit
    svg = Svg(WIDTH, top + 3 * panel + 126, "07_multiblock: the combines")
    svg.text(16, 24, f"07_multiblock: {grid} blocks finishing in the order {', '.join(map(str, order))}; what each "
             "combine does then", 14, weight="bold")
    svg.text(16, 44, "A bar: a block's work until its sum is ready; time runs to the right.", 10, fill=MUTED)
    finish = {b: k + 1 for k, b in enumerate(order)}
    for p, combine in enumerate(("atomic", "two-pass", "last-block")):
        t, y0 = runs[combine], top + p * panel
        svg.text(16, y0 + 10, combine, 13, weight="bold")
        tickets = {b: (k, written) for b, _, k, _, _, written in t.tickets}
        for b in range(grid):
            y = y0 + 20 + b * rh
            svg.text(left - 8, y + 11, f"block {b}", 10, "end", MUTED)
            svg.rect(left, y, finish[b] * unit, rh - 5, IDLE)
            svg.circle(left + finish[b] * unit, y + (rh - 5) / 2, 4, ORANGE if combine == "atomic" else BLUE)
            if combine == "atomic":
                action = "atomicAdd(out, sum)"
            elif combine == "two-pass":
                action = f"out[{b}] = sum"
            else:
                k, written = tickets[b]
                stored = f"partials[{b}] = sum, then " if b in written else f"ticket BEFORE partials[{b}] = sum: "
                action = f"{stored}ticket {k}" + (" (the last)" if k == grid - 1 else "")
            svg.text(left + finish[b] * unit + 8, y + 10, action, 9)
        y = y0 + 20 + grid * rh
        note = combine_outcome(svg, combine, t, tickets, grid, (left, y, y0, after, unit, rh))
        svg.text(left, y + rh + 20, note, 11, fill=CONFLICT if combine == "atomic" else BLUE)
    one_block_panel(svg, top + 3 * panel + 10)
    return svg


def combine_outcome(svg, combine, t, tickets, grid, at):
    """The bottom row of one combine's panel (what makes *out), and the sentence under it."""
    left, y, y0, after, unit, rh = at
    if combine == "atomic":
        sums = [b for b, *_ in t.atomics]
        svg.text(left - 8, y + 11, "*out", 10, "end", MUTED)
        for k, b in enumerate(sums):
            svg.cell(left + (k + 1) * unit - 12, y, 24, rh - 3, ORANGE, f"+b{b}", 9)
        return "*out = " + " + ".join(f"b{b}" for b in sums) + ": the order the blocks got there"
    if combine == "two-pass":
        svg.line(after - 14, y0 + 16, after - 14, y + rh, BLUE, 1, "4 3")
        svg.text(after - 10, y0 + 14, "the first launch ends; a second launch of one block", 9, fill=BLUE)
        svg.text(left - 8, y + 11, "launch 2", 10, "end", MUTED)
        svg.rect(after, y, 2 * unit, rh - 5, BLUE)
        svg.text(after + 2 * unit + 6, y + 10, "adds out[0..] by index", 9)
        return (f"*out = the sum of b0 to b{grid - 1}, added in an order fixed by index (float4s, tail, shuffles): the "
                "same order on every run")
    last = next(b for b, (k, _) in tickets.items() if k == grid - 1)
    read = sorted(e for b, _, region, e in t.cached if b == last)
    svg.text(left - 8, y + 11, f"block {last}", 10, "end", MUTED)
    svg.rect(after, y, 2 * unit, rh - 5, BLUE)
    svg.text(after + 2 * unit + 6, y + 10, f"then adds partials[{span(read)}] (__ldcg)", 9)
    return (f"*out = {t.results[('out', 0)]:.0f}, ticket reset to {t.results[('ticket', 0)]:.0f}; the last block adds "
            "by index: the same order on every run")


def one_block_panel(svg, y):
    """Under 07's combines: one_block_kernel, which has nothing to combine, as a host run of it loads its input."""
    one = host_run.run("07_multiblock", "one-block", block=32, n=200)
    vectors = sorted({e // 4: tid for b, tid, phase, how, region, e, dest in one.loads}.items())
    svg.text(16, y, f"one_block_kernel (n up to 16 floats per thread): one block of 32 threads sums n = 200, "
             f"{len(vectors)} float4s", 13, weight="bold")
    for v, tid in vectors:
        svg.cell(16 + v * 15, y + 12, 15, 18, BLUE if v < 32 else SKY, tid if v % 4 == 0 else None, 9)
    svg.text(16, y + 48, "The number: the thread that loads it (every 4th shown). Thread 0 writes *out = "
             f"{one.results[('out', 0)]:.0f} itself:", 11)
    svg.text(16, y + 64, "no memset, no atomic, no ticket, no second launch.", 11)
    svg.legend(16, y + 88, [(BLUE, "a thread's first float4"), (SKY, "its second")])


# ---- 08: the tiles and their banks --------------------------------------------------------------------------

def gemm_loads(tile, m, k, thread, block):
    """From a host run of gemm_kernel<tile, 0> (A[i] = i + 1, B[i] = -(i + 1)): the (row, col) of A and of B that
    thread (tx, ty) of block (bx, by) stores into its tiles at each step along K."""
    t = host_run.run("08_gemm_tiled", f"tiled-{tile}-0", block=[tile, tile], grid=[m // tile, m // tile], n=m, m=m,
                     k=k)
    tx, ty = thread
    me = ty * tile + tx
    linear = block[1] * (m // tile) + block[0]
    a, b = [], []
    for blk, acc in t.accesses:
        if blk == linear and acc.tid == me and acc.op == "st" and acc.value:
            index = round(abs(acc.value)) - 1
            (a if acc.value > 0 else b).append(divmod(index, k if acc.value > 0 else m))
    return a, b


def gemm_tiles_figure(tile=16, m=32, k=48, thread=(5, 2), block=(1, 1)):
    """08's block walking along K: the tiles of A and B it loads, and what one thread loads and reads."""
    c, gap = 5, 22
    left, top = 70, 70
    a_x, a_y = left, top + k * c + gap
    b_x, b_y = left + k * c + gap, top
    svg = Svg(WIDTH, a_y + m * c + 60, "08_gemm_tiled: the tiles along K")
    tx, ty = thread
    bx, by = block
    svg.text(16, 24, f"08_gemm_tiled: block ({bx}, {by}) walks K in {tile} x {tile} tiles (M = N = {m}, K = {k})", 14,
             weight="bold")
    a_loads, b_loads = gemm_loads(tile, m, k, thread, block)
    row, col = a_loads[0][0], b_loads[0][1]
    shades = [IDLE, "#dde3ea"]
    for i in range(m):
        for j in range(k):
            fill = shades[j // tile % 2] if by * tile <= i < (by + 1) * tile else "#ffffff"
            fill = ORANGE if (i, j) in a_loads else SKY if i == row else fill
            svg.rect(a_x + j * c, a_y + i * c, c, c, fill, "none")
    for i in range(k):
        for j in range(m):
            fill = shades[i // tile % 2] if bx * tile <= j < (bx + 1) * tile else "#ffffff"
            fill = ORANGE if (i, j) in b_loads else SKY if j == col else fill
            svg.rect(b_x + j * c, b_y + i * c, c, c, fill, "none")
    for i in range(m):
        for j in range(m):
            in_block = by * tile <= i < (by + 1) * tile and bx * tile <= j < (bx + 1) * tile
            svg.rect(b_x + j * c, a_y + i * c, c, c, CONFLICT if (i, j) == (row, col) else IDLE if in_block else "#ffffff",
                     "none")
    for x, y, w, h, name in ((a_x, a_y, k, m, "A"), (b_x, b_y, m, k, "B"), (b_x, a_y, m, m, "C")):
        svg.rect(x, y, w * c, h * c, "none", INK)
        svg.text(x - 8, y + 12, name, 13, "end", weight="bold")
    for k0 in range(0, k, tile):
        svg.text(a_x + (k0 + tile / 2) * c, a_y - 6, f"k0 = {k0}", 9, "middle", MUTED)
        svg.text(b_x + m * c + 6, b_y + (k0 + tile / 2) * c + 3, f"k0 = {k0}", 9, fill=MUTED)
    lines = ["At each step k0 the block loads one tile", "of A and one of B (the grey stripes).",
             f"Thread (tx {tx}, ty {ty}) stores the orange ones:",
             ", ".join(f"A[{i}][{j}]" for i, j in a_loads) + ",", ", ".join(f"B[{i}][{j}]" for i, j in b_loads) + ".",
             "", "It then reads row ty of A's tile and", f"column tx of B's tile (light blue) for its {tile}",
             f"multiply-adds into C[{row}][{col}] (wine)."]
    for i, text in enumerate(lines):
        svg.text(left + 0, top + 14 + 16 * i, text, 11)
    svg.legend(left, a_y + m * c + 34, [(ORANGE, "stored by the thread"), (SKY, "read by it from the tiles"),
                                        (CONFLICT, "its element of C")])
    return svg


def gemm_banks_figure(tile=16):
    """08: warp 0's shared-memory requests in the unpadded and the padded tile, word by word in the banks."""
    cw, left, top, rh = 14, 240, 64, 46
    rows = []
    for pad in (0, 1):
        reqs = [r for r in br.gemm_block("08_gemm_tiled", tile, pad) if r.warp == 0]
        for array, op in (("a_tile", "st"), ("b_tile", "st"), ("a_tile", "ld"), ("b_tile", "ld")):
            r = next(r for r in reqs if r.array == array and r.op == op)
            base = min(w for x in reqs if x.array == array for _, w in x.lanes)
            rows.append((pad, r, base))
    svg = Svg(WIDTH, top + rh * len(rows) + 70, "08_gemm_tiled: a warp's requests in the banks")
    svg.text(16, 24, f"08_gemm_tiled, {tile} x {tile} tile: warp 0 (ty 0 and 1, tx 0–{tile - 1}), each word it touches "
             "in its bank", 14, weight="bold")
    for b in range(0, br.BANKS, 2):
        svg.text(left + b * cw + cw / 2, top - 8, b, 9, "middle", MUTED)
    for i, (pad, r, base) in enumerate(rows):
        y = top + i * rh
        lanes_at = {}
        for _, w in r.lanes:
            for x in range(w, w + r.width):
                lanes_at[x - base] = lanes_at.get(x - base, 0) + 1
        banks = r.words_per_bank()
        for layer in range(max(w // br.BANKS for w in lanes_at) + 1):
            for b in range(br.BANKS):
                n = lanes_at.get(layer * br.BANKS + b)
                crowded = len(banks.get((b + base) % br.BANKS, [])) > 1
                fill = (CONFLICT if crowded else ORANGE if r.op == "st" else SKY) if n else "#ffffff"
                svg.cell(left + b * cw, y + layer * 16, cw, 15, fill, n if n and n > 1 else None, 9)
        svg.text(16, y + 12, f"{'padded' if pad else 'unpadded'}: {r.array} {'store' if r.op == 'st' else 'load'}", 11,
                 weight="bold")
        svg.text(16, y + 27, ("128-bit: k to k + 3 at once; " if r.width > 1 else "") + f"{tile} x {tile + pad} tile",
                 10, fill=MUTED)
        w, free = r.wavefronts(), r.conflict_free()
        svg.text(left + br.BANKS * cw + 10, y + 12, f"{w} wavefront{'s' * (w > 1)}" + (f": {w}-way" if w > free else ""),
                 11, fill=CONFLICT if w > free else INK)
    y = top + rh * len(rows) + 20
    svg.text(16, y, "One cell per word, by bank (second row: the 32 words after); a number: lanes on that word (a "
             "broadcast).", 10, fill=MUTED)
    svg.legend(16, y + 26, [(ORANGE, "stored"), (SKY, "loaded"), (CONFLICT, "two words in one bank: a conflict")])
    return svg
