"""The stage pages' pictures of what the threads do, drawn as SVG from host runs of the stages' own code
(host_run.py, block_requests.py): every word, lane, shuffle, float4 load and ticket in a picture is one the
kernel's code logged on the host.

./ladder docs (scripts/make_docs.py) writes them to docs/img/<name>.svg, with no GPU; `make_docs.py --check` fails
if one differs from what the host runs draw, and tests/check_pictures.py holds every picture to the legibility
rules (width, font size, contrast).

Every picture is drawn on an opaque white panel, with dark text and fixed colours. GitHub shows an SVG as an
image, and a prefers-color-scheme style inside it follows the reader's operating system, not the theme chosen
on GitHub: a light-styled picture with a transparent background could land on a dark page, or the reverse, and
lose its text. A panel of its own reads the same on both themes, and a caption can name its colours. The
colours are the Okabe-Ito set, told apart with colour-blindness too, and a wine for bank conflicts.
"""
import math
import pathlib

from . import block_requests as br
from . import host_run
from .svg import (BLUE, CONFLICT, GREEN, IDLE, INK, LINE, MUTED, ORANGE, PINK, SKY, Svg, degree_fill, span)

WIDTH = 830  # no picture is wider than a README column on GitHub


def warps_of(threads):
    n = len({t // br.WARP for t in threads})
    return f"{n} warp{'s' * (n > 1)}"


# ---- 01 and 02: the tree ---------------------------------------------------------------------------------------

def tree_figure(block=64):
    """01's tree on its smallest block: every step's adding threads, their words, and warp 0's active lanes."""
    t = br.tree("01_naive", block)
    cw, left, top, rh = 8, 54, 62, 50
    lanes_x = left + block * cw + 22
    svg = Svg(WIDTH, top + rh * len(t.steps) + 84, f"01_naive: the tree of a {block}-thread block, step by step")
    svg.text(16, 24, f"01_naive, one block of {block} threads: at step s thread t adds word 2·s·t + s into word 2·s·t",
             14, weight="bold")
    for w in range(0, block, 8):
        svg.text(left + w * cw + cw / 2, top - 10, w, 9, "middle", MUTED)
    svg.text(left - 6, top - 10, "word", 9, "end", MUTED)
    svg.text(lanes_x, top - 10, "warp 0's 32 lanes: adding or idle", 9, fill=MUTED)
    for row, (s, reqs) in enumerate(t.steps.items()):
        y = top + row * rh
        written, read = br.writes(reqs), br.other_reads(reqs)
        for w in range(block):
            fill = ORANGE if w in written.values() else SKY if w in read.values() else IDLE
            svg.cell(left + w * cw, y, cw, 12, fill)
        for th, w in written.items():
            x1, x2 = left + read[th] * cw + cw / 2, left + w * cw + cw / 2
            svg.curve(x1, y, x2 + 1.5, y, min(16, 5 + 2.2 * math.log2(1 + read[th] - w)), MUTED, 0.8)
        svg.text(left - 6, y + 10, f"s = {s}", 11, "end")
        for lane in range(br.WARP):
            svg.rect(lanes_x + lane * 6, y, 6, 12, BLUE if lane in written else "#ffffff", LINE, 0.5)
        active = sorted(written)
        worst = max(r.wavefronts() for r in reqs)
        who = f"threads {span(active)} add" if len(active) > 1 else f"thread {active[0]} adds"
        svg.text(left, y + 28, f"{who} ({warps_of(active)}; {br.WARP - sum(1 for x in active if x < br.WARP)} of "
                 f"warp 0's lanes idle); {worst}-way: {worst} wavefront{'s' * (worst > 1)} a request", 10,
                 fill=CONFLICT if worst > 1 else INK)
    y = top + rh * len(t.steps) + 4
    svg.text(left - 6, y + 9, "bank", 9, "end", MUTED)
    for w in range(0, block, 4):
        svg.text(left + w * cw + cw / 2, y + 9, w % br.BANKS, 9, "middle", MUTED)
    svg.legend(left, y + 36, [(ORANGE, "read and written: smem[index] +="), (SKY, "read: smem[index + s]"),
                              (IDLE, "untouched")])
    svg.legend(left, y + 58, [(BLUE, "a lane of warp 0 that adds"), ("#ffffff", "an idle lane: predicated off, it waits")])
    return svg


def bank_strips(stage, block=1024):
    """Per step of the tree, the banks of the first adding warp's read of smem[index]: words per bank."""
    t = br.tree(stage, block)
    cw, left, top, rh = 14, 240, 64, 24
    svg = Svg(WIDTH, top + rh * len(t.steps) + 56, f"{stage}: the banks of each step's first read, {block} threads")
    svg.text(16, 24, f"{stage}, {block} threads: the words of the first adding warp's read of smem[index], by bank",
             14, weight="bold")
    for b in range(0, br.BANKS, 2):
        svg.text(left + b * cw + cw / 2, top - 8, b, 9, "middle", MUTED)
    svg.text(left - 8, top - 8, "bank", 9, "end", MUTED)
    for row, (s, reqs) in enumerate(t.steps.items()):
        y = top + row * rh
        first = br.own_read(reqs)
        banks = first.words_per_bank()
        active = sorted(br.writes(reqs))
        svg.text(16, y + 14, f"s = {s}", 11, weight="bold")
        svg.text(64, y + 14, f"{len(active)} thread{'s add' if len(active) > 1 else ' adds'}, {warps_of(active)}",
                 11, fill=MUTED)
        for b in range(br.BANKS):
            n = len(banks.get(b, []))
            svg.cell(left + b * cw, y, cw, rh - 4, degree_fill(n), n or None, 9)
        w = first.wavefronts()
        svg.text(left + br.BANKS * cw + 10, y + 14, f"{w}-way", 11, weight="bold", fill=CONFLICT if w > 1 else INK)
    y = top + rh * len(t.steps) + 22
    svg.text(16, y, "A number: distinct words of the request in that bank, served one wavefront each; the busiest "
             "bank sets the request's wavefronts.", 10, fill=MUTED)
    return svg


def grid_stride_figure(blocks=2, block=64, n=300):
    """02's loop: which thread adds which element, one row per trip around the loop (from a host run per element)."""
    threads = blocks * block
    readers = host_run.run("02_grid_stride", "reduce", block=block, grid=blocks, n=n, readers=1).readers
    assert all(len(r) == 1 for r in readers.values()), "an element read by no thread or by several"
    who = {e: r[0] for e, r in readers.items()}
    cw, left, top, rh = 5, 84, 62, 22
    trips = -(-n // threads)
    svg = Svg(WIDTH, top + rh * trips + 90, "02_grid_stride: the grid-stride loop")
    svg.text(16, 24, f"02_grid_stride: {blocks} blocks of {block} threads ({threads} in the grid) over n = {n}", 14,
             weight="bold")
    mark = 5
    for e in range(n):
        trip, col = divmod(e, threads)
        t = who[e]
        fill = ORANGE if t == mark else BLUE if t < block else SKY
        svg.rect(left + col * cw, top + trip * rh, cw, rh - 6, fill, "#ffffff", 0.4)
    for trip in range(trips):
        svg.text(left - 8, top + trip * rh + 12, f"trip {trip + 1}", 11, "end")
    for col in range(0, threads, 32):
        svg.text(left + col * cw, top - 8, col, 9, fill=MUTED)
    y = top + rh * trips + 20
    mine = sorted(e for e, t in who.items() if t == mark)
    svg.text(left, y, f"thread {mark} (orange) adds elements {', '.join(map(str, mine))}: one stride of the grid "
             f"({threads}) apart.", 11)
    svg.legend(left, y + 28, [(BLUE, "read by block 0"), (SKY, "read by block 1"), (ORANGE, f"read by thread {mark}")])
    svg.text(left, y + 50, "Columns: the thread (global index) that adds the element; rows: its trips around the loop.",
             10, fill=MUTED)
    return svg


# ---- 03: where the padded words land ------------------------------------------------------------------------

def layout_figure(s=16, block=1024):
    """Shared memory as rows of 32 banks, unpadded (02) and padded (03), with the words warp 0 reads at step s."""
    cell, top, gap = 8, 70, 96
    svg = Svg(WIDTH, 0, "03_padding: where the words land")
    grids = []
    for stage, title in (("02_grid_stride", "02: element i at word i"), ("03_padding", "03: element i at word i + i / 32")):
        t = br.tree(stage, block)
        grids.append((title, t, [r for r in t.steps[s] if r.warp == 0]))
    rows = -(-max(max(t.element) for _, t, _ in grids) // br.BANKS) + 1
    svg.height = top + rows * cell + 96
    svg.text(16, 24, f"A {block}-thread block's shared memory in rows of 32 banks: warp 0's reads at s = {s}", 14,
             weight="bold")
    for g, (title, t, reqs) in enumerate(grids):
        x0 = 40 + g * (br.BANKS * cell + gap)
        own = {w for _, w in br.own_read(reqs).lanes}
        other = set(br.other_reads(reqs).values())
        used = set(t.element)
        svg.text(x0, top - 22, title, 12, weight="bold")
        for bank in (0, 16, 31):
            svg.text(x0 + bank * cell + cell / 2, top - 6, bank, 9, "middle", MUTED)
        for word in range(rows * br.BANKS):
            fill = ORANGE if word in own else SKY if word in other else IDLE if word in used else "#ffffff"
            x, y = x0 + word % br.BANKS * cell, top + word // br.BANKS * cell
            svg.rect(x, y, cell, cell, fill, LINE if word in used else "#ffffff", 0.4)
            if word not in used and word < max(used):
                svg.line(x + 1, y + cell - 1, x + cell - 1, y + 1, MUTED, 0.6)
        worst = max(r.wavefronts() for r in reqs)
        svg.text(x0, top + rows * cell + 20, f"{worst} word{'s' * (worst > 1)} in the busiest bank: "
                 f"{worst} wavefront{'s' * (worst > 1)}", 11, fill=CONFLICT if worst > 1 else INK)
    svg.legend(40, top + rows * cell + 52, [(ORANGE, "smem[index], index = 2·s·tid"), (SKY, "smem[index + s]"),
                                            (IDLE, "the other elements")])
    svg.text(40, top + rows * cell + 76, "Crossed cells in 03: the padding word after every 32, never read.", 11,
             fill=MUTED)
    return svg


# ---- 04: the last six steps in one warp -----------------------------------------------------------------------

def warp_steps_figure(block=1024):
    """04's unrolled steps: lanes, the partial sums they add, the __syncwarp() between steps, and one read-after-write
    between lanes that the barrier orders."""
    t = br.tree("04_warp_unroll", block)
    steps = {s: rs for s, rs in t.steps.items() if all(r.warp == 0 for r in rs) and len(br.writes(rs)) <= br.WARP}
    first = min(steps)
    slots = block // first  # the live partial sums at the start of the warp's steps: elements 0, first, 2 first, ...
    cw, left, top, rh = 12, 56, 64, 54
    svg = Svg(WIDTH, top + rh * len(steps) + 70, "04_warp_unroll: the last six steps in warp 0")
    svg.text(16, 24, f"04_warp_unroll, {block} threads: the {len(steps)} steps warp 0 runs alone, on elements 0, {first}, "
             f"{2 * first}, ... {block - first}", 14, weight="bold")
    for k in range(0, slots, 8):
        svg.text(left + k * cw + cw / 2, top - 8, k * first, 9, "middle", MUTED)
    svg.text(left - 6, top - 8, "element", 9, "end", MUTED)
    written_before, example = {}, None
    for row, (s, reqs) in enumerate(steps.items()):
        y = top + row * rh
        writes = {th: t.element[w] for th, w in br.writes(reqs).items()}
        reads = [(th, t.element[w]) for r in reqs if r.op == "ld" for th, w in zip(r.threads, (w for _, w in r.lanes))]
        races = [(th, e, written_before[e]) for th, e in reads if e in written_before and written_before[e] != th]
        for k in range(slots):
            e = k * first
            fill = ORANGE if e in writes.values() else SKY if e in {x for _, x in reads} else IDLE
            svg.cell(left + k * cw, y, cw, 14, fill, next((th for th, x in writes.items() if x == e), None), 9)
        for th, e in reads:
            if e != writes[th]:
                is_example = example is None and any(r[:2] == (th, e) for r in races)
                svg.curve(left + e // first * cw + cw / 2, y, left + writes[th] // first * cw + cw / 2 + 1.5, y,
                          min(18, 5 + 2.5 * math.log2(1 + (e - writes[th]) // first)),
                          CONFLICT if is_example else MUTED, 1.6 if is_example else 0.8)
                if is_example:
                    example = (s, th, e, written_before[e])
        svg.text(left - 6, y + 11, f"s = {s}", 11, "end")
        svg.text(left, y + 28, f"{len(writes)} lane{'s add' if len(writes) > 1 else ' adds'}; {len(races)} of "
                 f"{len(reads)} reads are of words another lane wrote", 10, fill=CONFLICT if races else MUTED)
        if row + 1 < len(steps) and reqs[0].phase + 1 in t.warp_phases:
            svg.line(left, y + 38, left + slots * cw, y + 38, BLUE, 1, "4 3")
            svg.text(left + slots * cw - 70, y + 48, "__syncwarp()", 10, fill=BLUE)
        written_before = {e: th for th, e in writes.items()}
    s, lane, e, writer = example
    y = top + rh * len(steps) + 8
    svg.text(left, y, f"Wine: at s = {s} lane {lane} reads element {e}, which lane {writer} wrote one step before; the "
             "__syncwarp() between the steps orders", 11)
    svg.text(left, y + 16, f"the two. The volatile version has no barrier there, and lane {lane}'s read can come "
             "first: the race racecheck reports.", 11)
    svg.legend(left, y + 40, [(ORANGE, "written (the lane's number)"), (SKY, "read"), (IDLE, "done")])
    return svg


# ---- 05: the shuffles ----------------------------------------------------------------------------------------

def shuffle_figure(block=1024):
    """05's warp_reduce(): which lane each lane reads at each offset (the host run's shuffles), the lanes whose values
    reach lane 0, and then the per-warp sums in shared memory."""
    trace = host_run.run("05_shuffle", "reduce", block=block, n=block)
    mine = [x for x in trace.shuffles if x[0] == 0 and x[1] < br.WARP]  # warp 0 of block 0
    rounds = []
    for lane in range(br.WARP):
        for k, x in enumerate(x for x in mine if x[1] == lane):
            if k < 5:
                if len(rounds) <= k:
                    rounds.append({})
                rounds[k][lane] = x[4]  # the lane it read
    offsets = [r[0] - 0 for r in rounds]
    cw, left, top, rh = 17, 80, 62, 44
    svg = Svg(WIDTH, top + rh * len(rounds) + 190, "05_shuffle: the shuffle-down steps")
    svg.text(16, 24, "05_shuffle: v += __shfl_down_sync(0xffffffff, v, offset): lane i adds lane i + offset's v", 14,
             weight="bold")
    matters = [{0}]  # the lanes whose value reaches lane 0, after each step, from the last back
    for r in reversed(rounds):
        matters.insert(0, matters[0] | {r[i] for i in matters[0]})
    for lane in range(0, br.WARP, 4):
        svg.text(left + lane * cw + cw / 2, top - 10, lane, 9, "middle", MUTED)
    svg.text(left - 10, top - 10, "lane", 9, "end", MUTED)
    for row in range(len(rounds) + 1):
        y = top + row * rh + 8
        for lane in range(br.WARP):
            on = lane in matters[row]
            svg.circle(left + lane * cw + cw / 2, y, 6, BLUE if on else IDLE, INK if on else LINE)
        if row == 0:
            svg.text(left - 10, y + 4, "v", 11, "end")
            continue
        r = rounds[row - 1]
        for lane in range(br.WARP):
            if r[lane] != lane:
                on_path = lane in matters[row]
                svg.line(left + r[lane] * cw + cw / 2, y - rh + 15, left + lane * cw + cw / 2, y - 8,
                         ORANGE if on_path else LINE, 1.3 if on_path else 0.7, arrow=on_path)
        svg.text(left - 10, y + 4, f"offset {offsets[row - 1]}", 11, "end")
        others = [lane for lane in range(br.WARP) if r[lane] != lane]
        own = sorted(set(range(br.WARP)) - set(others))
        x = left + br.WARP * cw + 8
        svg.text(x, y - 4, f"every lane adds: {span(others)}", 10)
        svg.text(x, y + 8, f"add lanes {span(r[i] for i in others)}'s v,", 10)
        svg.text(x, y + 20, f"{span(own)} their own", 10, fill=MUTED)
    reqs = br.reduce_block("05_shuffle", block)
    stores = [r for r in reqs if r.op == "st"]
    load = next(r for r in reqs if r.op == "ld")
    y = top + rh * len(rounds) + 50
    svg.text(16, y, f"Then ({block} threads): lane 0 of each of the {len(stores)} warps writes smem[warp]; warp 0 "
             "reads smem[lane].", 12, weight="bold")
    for w in range(len(stores)):
        svg.cell(left + w * cw, y + 18, cw, 18, ORANGE, w, 9)
    for w in range(0, len(stores), 4):
        svg.text(left + w * cw + cw / 2, y + 50, w % br.BANKS, 9, "middle", MUTED)
    svg.text(left - 10, y + 31, "smem", 11, "end")
    svg.text(left - 10, y + 50, "bank", 9, "end", MUTED)
    svg.text(left, y + 72, f"{len(stores)} stores of one lane each ({stores[0].wavefronts()} wavefront each); one load "
             f"of {len(load.lanes)} lanes in {len(load.words_per_bank())} banks ({load.wavefronts()} wavefront).", 11)
    svg.legend(left, y + 100, [(BLUE, "a lane whose v reaches lane 0"), (ORANGE, "a read on that path"),
                               (IDLE, "a lane lane 0 never reads")])
    return svg


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


# ---- 07: the combines as timelines ------------------------------------------------------------------------

FINISH_ORDER = (2, 0, 5, 3, 1, 4)  # any order: the blocks finish as the hardware schedules them


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
        if combine == "atomic":
            sums = [b for b, *_ in t.atomics]
            svg.text(left - 8, y + 11, "*out", 10, "end", MUTED)
            for k, b in enumerate(sums):
                svg.cell(left + (k + 1) * unit - 12, y, 24, rh - 3, ORANGE, f"+b{b}", 9)
            note = "*out = " + " + ".join(f"b{b}" for b in sums) + ": the order the blocks got there"
        elif combine == "two-pass":
            svg.line(after - 14, y0 + 16, after - 14, y + rh, BLUE, 1, "4 3")
            svg.text(after - 10, y0 + 14, "the first launch ends; a second launch of one block", 9, fill=BLUE)
            svg.text(left - 8, y + 11, "launch 2", 10, "end", MUTED)
            svg.rect(after, y, 2 * unit, rh - 5, BLUE)
            svg.text(after + 2 * unit + 6, y + 10, "adds out[0..] by index", 9)
            note = "*out = " + " + ".join(f"b{b}" for b in range(grid)) + ", by index: the same order on every run"
        else:
            last = next(b for b, (k, _) in tickets.items() if k == grid - 1)
            read = sorted(e for b, _, region, e in t.cached if b == last)
            svg.text(left - 8, y + 11, f"block {last}", 10, "end", MUTED)
            svg.rect(after, y, 2 * unit, rh - 5, BLUE)
            svg.text(after + 2 * unit + 6, y + 10, f"then adds partials[{span(read)}] (__ldcg)", 9)
            note = (f"*out = {t.results[('out', 0)]:.0f}, ticket reset to {t.results[('ticket', 0)]:.0f}; the last "
                    "block adds by index: the same order on every run")
        svg.text(left, y + rh + 20, note, 11, fill=CONFLICT if combine == "atomic" else BLUE)
    one = host_run.run("07_multiblock", "one-block", block=32, n=200)
    y = top + 3 * panel + 10
    vectors = sorted({e // 4: tid for b, tid, phase, how, region, e, dest in one.loads}.items())
    svg.text(16, y, f"one_block_kernel (n up to 16 floats per thread): one block of 32 threads sums n = 200, "
             f"{len(vectors)} float4s", 13, weight="bold")
    for v, tid in vectors:
        svg.cell(16 + v * 15, y + 12, 15, 18, BLUE if v < 32 else SKY, tid if v % 4 == 0 else None, 9)
    svg.text(16, y + 48, "The number: the thread that loads it (every 4th shown). Thread 0 writes *out = "
             f"{one.results[('out', 0)]:.0f} itself:", 11)
    svg.text(16, y + 64, "no memset, no atomic, no ticket, no second launch.", 11)
    svg.legend(16, y + 88, [(BLUE, "a thread's first float4"), (SKY, "its second")])
    return svg


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


# ---- the pictures, written and checked ----------------------------------------------------------------------------

DIAGRAMS = {
    "01_naive_tree": tree_figure,
    "01_naive_banks": lambda: bank_strips("01_naive"),
    "02_grid_stride_loop": grid_stride_figure,
    "03_padding_layout": layout_figure,
    "03_padding_banks": lambda: bank_strips("03_padding"),
    "04_warp_unroll_steps": warp_steps_figure,
    "05_shuffle_steps": shuffle_figure,
    "06_float4_split": split_figure,
    "06_float4_loads": loads_figure,
    "07_multiblock_combines": combines_figure,
    "08_gemm_tiled_tiles": gemm_tiles_figure,
    "08_gemm_tiled_banks": gemm_banks_figure,
}


def drawn():
    return {f"{name}.svg": draw().svg() for name, draw in DIAGRAMS.items()}


def write_diagrams(directory):
    for name, text in drawn().items():
        (pathlib.Path(directory) / name).write_text(text)
    return sorted(drawn())


def stale_diagrams(directory):
    """What --check reports: a diagram missing from docs/img/ or different from what the host runs draw."""
    out = []
    for name, text in drawn().items():
        path = pathlib.Path(directory) / name
        if not path.exists():
            out.append(f"docs/img/{name} is missing: run ./ladder docs")
        elif path.read_text() != text:
            out.append(f"docs/img/{name} differs from what scripts/diagrams.py draws: run ./ladder docs")
    return out
