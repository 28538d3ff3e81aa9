"""The stage pages' pictures of what the threads do, drawn as SVG from the thread models in kernel_models.py.

./ladder docs (scripts/make_docs.py) writes them to docs/img/<name>.svg, with the standard library only and no
GPU; `make_docs.py --check` fails if one differs from what the models draw. model_pages.py gives the pages the
models' numbers and the model-against-profiler tables.

Every picture is drawn on an opaque white panel, with dark text and fixed colours. GitHub shows an SVG as an
image, and a prefers-color-scheme style inside it follows the reader's operating system, not the theme chosen
on GitHub: a light-styled picture with a transparent background could land on a dark page, or the reverse, and
lose its text. A panel of its own reads the same on both themes, and a caption can name its colours. The
colours are the Okabe-Ito set, told apart with colour-blindness too.
"""
import math
import pathlib

import kernel_models as km

from svg import (BLUE, GREEN, IDLE, INK, LINE, MUTED, ORANGE, PURPLE, RED, SKY, Svg, by_step, degree_fill, span,
                 threads_of)


# ---- 01 and 02: the tree ---------------------------------------------------------------------------------------

def tree_figure(block=64):
    """01's tree on its smallest block: every step's adding threads, their words and those words' banks."""
    requests = km.reduce_block(km.block_reduce_01, block)
    steps = by_step(requests)
    cw, left, top, rh = 11, 64, 58, 42
    svg = Svg(left + block * cw + 214, top + rh * len(steps) + 78,
              f"01_naive: the tree of a {block}-thread block, step by step")
    svg.text(16, 24, f"01_naive, one block of {block} threads: at step s thread t adds word 2·s·t + s into "
             "word 2·s·t", 14, weight="bold")
    for w in range(0, block, 8):
        svg.text(left + w * cw + cw / 2, top - 10, w, 9, "middle", MUTED)
    svg.text(left - 8, top - 10, "word", 9, "end", MUTED)
    for row, (s, reqs) in enumerate(steps.items()):
        y = top + row * rh + 18
        writes = {km.WARP * r.warp + lane: w for r in reqs if r.op == "st" for lane, w in r.lanes}
        reads = {km.WARP * r.warp + lane: w for r in reqs if r.line == "smem[index + s]" for lane, w in r.lanes}
        for w in range(block):
            fill = ORANGE if w in writes.values() else SKY if w in reads.values() else IDLE
            svg.cell(left + w * cw, y, cw, 12, fill)
        for t, w in writes.items():
            x1, x2 = left + reads[t] * cw + cw / 2, left + w * cw + cw / 2
            svg.curve(x1, y, x2 + 1.5, y, min(16, 5 + 2.2 * math.log2(1 + reads[t] - w)), MUTED, 0.8)
        svg.text(left - 8, y + 10, f"s = {s}", 11, "end")
        active = sorted(writes)
        warps = len({t // km.WARP for t in active})
        who = f"threads {span(active)}" if len(active) > 1 else f"thread {active[0]}"
        svg.text(left + block * cw + 12, y + 4, f"{who} ({warps} warp{'s' * (warps > 1)})", 11)
        worst = max(r.wavefronts() for r in reqs)
        svg.text(left + block * cw + 12, y + 18, f"{worst}-way: {worst} wavefront{'s' * (worst > 1)} a request", 11,
                 fill=RED if worst > 1 else INK)
    y = top + rh * len(steps) + 14
    svg.text(left - 8, y + 9, "bank", 9, "end", MUTED)
    for w in range(block):
        svg.text(left + w * cw + cw / 2, y + 9, w % km.BANKS, 7, "middle", MUTED)
    svg.legend(left, y + 44, [(ORANGE, "read and written: smem[index] +="), (SKY, "read: smem[index + s]"),
                              (IDLE, "untouched this step")])
    return svg


def bank_strips(program, line, stage, block=1024):
    """Per step of the tree, the banks of warp 0's first access (the first warp that adds): words per bank."""
    requests = km.reduce_block(program, block)
    steps = by_step(requests)
    cw, left, top, rh = 17, 250, 64, 24
    svg = Svg(left + km.BANKS * cw + 150, top + rh * len(steps) + 56,
              f"{stage}: the banks of each step's first access, {block} threads")
    svg.text(16, 24, f"{stage}, {block} threads: the words of the first adding warp's {line}, by bank",
             14, weight="bold")
    for b in range(km.BANKS):
        svg.text(left + b * cw + cw / 2, top - 8, b, 9, "middle", MUTED)
    svg.text(left - 8, top - 8, "bank", 9, "end", MUTED)
    for row, (s, reqs) in enumerate(steps.items()):
        y = top + row * rh
        first = next(r for r in reqs if r.line == line)
        banks = first.words_per_bank()
        active = threads_of([r for r in reqs if r.op == "st"])
        warps = len({t // km.WARP for t in active})
        svg.text(16, y + 14, f"s = {s}", 11, weight="bold")
        svg.text(70, y + 14, f"{len(active)} thread{'s add' if len(active) > 1 else ' adds'}, {warps} "
                 f"warp{'s' * (warps > 1)}",
                 11, fill=MUTED)
        for b in range(km.BANKS):
            n = len(banks.get(b, []))
            svg.cell(left + b * cw, y, cw, rh - 4, degree_fill(n), n or None, 9, "#ffffff" if n >= 8 else INK)
        w = first.wavefronts()
        svg.text(left + km.BANKS * cw + 12, y + 14, f"{w}-way", 11, weight="bold", fill=RED if w > 1 else INK)
    y = top + rh * len(steps) + 22
    svg.text(16, y, "A number: distinct words of the request in that bank, served one wavefront each; "
             "the busiest bank sets the request's wavefronts.", 11, fill=MUTED)
    return svg


def grid_stride_figure(blocks=2, block=64, n=300):
    """02's loop: which thread adds which element, one row per trip around the loop."""
    threads = blocks * block
    cw, left, top, rh = 6, 110, 62, 22
    trips = -(-n // threads)
    svg = Svg(left + threads * cw + 150, top + rh * trips + 70, "02_grid_stride: which thread adds which element")
    svg.text(16, 24, f"02_grid_stride, {blocks} blocks of {block} threads, n = {n}: thread t adds elements t, t + T, "
             f"t + 2T, ... (T = {threads})", 14, weight="bold")
    mark = 5
    for t in range(threads):
        for i in km.grid_stride(t, n, threads):
            trip = i // threads
            fill = BLUE if t < block else GREEN
            svg.rect(left + t * cw, top + trip * rh, cw, rh - 6, fill, "#ffffff" if t != mark else INK,
                     1.5 if t == mark else 0.5)
        for trip in range(trips):
            if trip * threads + t >= n:
                svg.rect(left + t * cw, top + trip * rh, cw, rh - 6, IDLE, "#ffffff", 0.5)
    for trip in range(trips):
        svg.text(left - 8, top + trip * rh + 12, {0: "i = t", 1: "i = t + T"}.get(trip, f"i = t + {trip}T"), 11,
                 "end")
        last = min(n, (trip + 1) * threads) - 1
        svg.text(left + threads * cw + 10, top + trip * rh + 12, f"elements {trip * threads}–{last}", 11, fill=MUTED)
    for b in range(blocks):
        x0, x1 = left + b * block * cw, left + (b + 1) * block * cw
        svg.line(x0 + 1, top - 6, x1 - 1, top - 6, MUTED, 0.8)
        svg.text((x0 + x1) / 2, top - 10, f"block {b}: threads t = {b * block}–{(b + 1) * block - 1}", 10, "middle",
                 MUTED)
    y = top + rh * trips + 20
    svg.text(left, y, f"thread {mark} (outlined) adds {', '.join(map(str, km.grid_stride(mark, n, threads)))} in a "
             f"register; then each block runs 01's tree on its {block} sums.", 11)
    svg.legend(left, y + 28, [(BLUE, "block 0"), (GREEN, "block 1"), (IDLE, "past the end: no trip")])
    return svg


# ---- 03: where the padded words land ------------------------------------------------------------------------

def layout_figure(step=16, block=1024):
    """Shared memory as rows of 32 banks, unpadded and padded, with the words warp 0 reads at one step."""
    cell, top, gap = 8, 70, 120
    grids = [("02: element i at word i", km.block_reduce_01, lambda i: i, "smem[index]", "smem[index + s]"),
             ("03: element i at word i + i / 32", km.block_reduce_03, km.padded, "smem[padded(index)]",
              "smem[padded(index + s)]")]
    rows = -(-km.padded(block - 1) // km.BANKS) + 1
    width = 40 + 2 * km.BANKS * cell + gap
    svg = Svg(width + 50, top + rows * cell + 96, "03_padding: where the words land")
    svg.text(16, 24, f"A {block}-thread block's shared memory in rows of 32 banks: warp 0's reads at s = {step}",
             14, weight="bold")
    for g, (title, program, place, first, second) in enumerate(grids):
        x0 = 40 + g * (km.BANKS * cell + gap)
        requests = [r for r in km.reduce_block(program, block) if r.step == step and r.warp == 0]
        a = {w for r in requests if r.line == first for _, w in r.lanes}
        b = {w for r in requests if r.line == second for _, w in r.lanes}
        used = {place(i) for i in range(block)}
        svg.text(x0, top - 22, title, 12, weight="bold")
        for bank in (0, 16, 31):
            svg.text(x0 + bank * cell + cell / 2, top - 6, bank, 8, "middle", MUTED)
        for word in range(rows * km.BANKS):
            fill = ORANGE if word in a else SKY if word in b else IDLE if word in used else "#ffffff"
            x, y = x0 + word % km.BANKS * cell, top + word // km.BANKS * cell
            svg.rect(x, y, cell, cell, fill, LINE if word in used else "#ffffff", 0.4)
            if word not in used and word < max(used):
                svg.line(x + 1, y + cell - 1, x + cell - 1, y + 1, MUTED, 0.6)
        worst = max(r.wavefronts() for r in requests)
        svg.text(x0, top + rows * cell + 20, f"{worst} word{'s' * (worst > 1)} in the busiest bank: "
                 f"{worst} wavefront{'s' * (worst > 1)}", 11, fill=RED if worst > 1 else INK)
    svg.legend(40, top + rows * cell + 52, [(ORANGE, "smem[index], index = 2·s·tid"), (SKY, "smem[index + s]"),
                                            (IDLE, "the other elements")])
    svg.text(40, top + rows * cell + 76, "Crossed cells in 03: the padding word after every 32, never read.", 11,
             fill=MUTED)
    return svg


# ---- 04: the last six steps in one warp -----------------------------------------------------------------------

def warp_steps_figure(block=1024):
    """04's unrolled steps: lanes, the partial sums they add, the __syncwarp() between steps, and one
    read-after-write between lanes that the barrier orders."""
    barriers = {}
    requests = km.reduce_block(km.block_reduce_04, block, barriers=barriers)
    first = block // 64
    steps = {s: rs for s, rs in by_step(requests).items() if s >= first}
    slots = block // first  # the live partial sums at the start of the warp's steps: elements 0, first, 2 first, ...
    cw, left, top, rh = 11, 70, 64, 50

    def element(word):
        return word - word // 33  # the inverse of padded()

    svg = Svg(left + slots * cw + 250, top + rh * len(steps) + 76, "04_warp_unroll: the last six steps in warp 0")
    svg.text(16, 24, f"04_warp_unroll, {block} threads: the six steps warp 0 runs alone, on elements 0, {first}, "
             f"{2 * first}, ... {block - first}", 14, weight="bold")
    for k in range(0, slots, 8):
        svg.text(left + k * cw + cw / 2, top - 8, k * first, 8, "middle", MUTED)
    svg.text(left - 8, top - 8, "element", 8, "end", MUTED)
    written_before = {}
    example = None
    for row, (s, reqs) in enumerate(steps.items()):
        y = top + row * rh + 16
        writes = {lane: element(w) for r in reqs if r.op == "st" for lane, w in r.lanes}
        reads = [(lane, element(w)) for r in reqs if r.op == "ld" for lane, w in r.lanes]
        races = [(lane, e, written_before[e]) for lane, e in reads if e in written_before and written_before[e] != lane]
        for k in range(slots):
            e = k * first
            fill = ORANGE if e in writes.values() else SKY if e in {x for _, x in reads} else IDLE
            svg.cell(left + k * cw, y, cw, 12, fill)
        for lane, e in writes.items():
            svg.text(left + e // first * cw + cw / 2, y + 9, lane, 6.5, "middle")
        for lane, e in reads:
            if e != writes[lane]:
                is_example = example is None and any(r[:2] == (lane, e) for r in races)
                colour = RED if is_example else MUTED
                svg.curve(left + e // first * cw + cw / 2, y, left + writes[lane] // first * cw + cw / 2 + 1.5, y,
                          min(18, 5 + 2.5 * math.log2(1 + (e - writes[lane]) // first)), colour,
                          1.6 if is_example else 0.8)
                if is_example:
                    example = (s, lane, e, written_before[e])
        svg.text(left - 8, y + 10, f"s = {s}", 11, "end")
        x = left + slots * cw + 12
        svg.text(x, y + 4, f"{len(writes)} lane{'s add' if len(writes) > 1 else ' adds'}", 11)
        svg.text(x, y + 18, f"{len(races)} of {len(reads)} reads: words another lane wrote", 10,
                 fill=RED if races else MUTED)
        if barriers.get(reqs[0].phase) == "__syncwarp()":
            svg.line(left, y + 27, left + slots * cw, y + 27, BLUE, 1, "4 3")
            svg.text(left + slots * cw + 12, y + 31, "__syncwarp()", 10, fill=BLUE)
        written_before = {e: lane for lane, e in writes.items()}
    s, lane, e, writer = example
    y = top + rh * len(steps) + 24
    svg.text(left, y, f"Red: at s = {s} lane {lane} reads element {e}, which lane {writer} wrote one step before. "
             "The __syncwarp() between the steps orders the two;", 11)
    svg.text(left, y + 16, "the volatile version has no barrier there, and lane "
             f"{lane}'s read can come first: the race racecheck reports.", 11)
    svg.legend(left, y + 40, [(ORANGE, "written (the lane's number)"), (SKY, "read"), (IDLE, "done")])
    return svg


# ---- 05: the shuffles ----------------------------------------------------------------------------------------

def shuffle_figure(block=1024):
    """05's warp_reduce(): which lane each lane reads at each offset, the lanes whose values reach lane 0, and
    then the per-warp sums in shared memory."""
    cw, left, top, rh = 21, 92, 62, 44
    offsets = km.shuffle_offsets()
    svg = Svg(left + km.WARP * cw + 190, top + rh * len(offsets) + 190, "05_shuffle: the shuffle-down steps")
    svg.text(16, 24, "05_shuffle: v += __shfl_down_sync(0xffffffff, v, offset): lane i adds lane i + offset's v",
             14, weight="bold")
    matters = [{0}]  # the lanes whose value reaches lane 0, after each step, from the last back
    for offset in reversed(offsets):
        matters.insert(0, matters[0] | {km.shuffle_source(i, offset) for i in matters[0]})
    for lane in range(0, km.WARP, 4):
        svg.text(left + lane * cw + cw / 2, top - 10, lane, 9, "middle", MUTED)
    svg.text(left - 10, top - 10, "lane", 9, "end", MUTED)
    for row in range(len(offsets) + 1):
        y = top + row * rh + 8
        for lane in range(km.WARP):
            on = lane in matters[row]
            svg.circle(left + lane * cw + cw / 2, y, 6, BLUE if on else IDLE, INK if on else LINE)
        if row == 0:
            svg.text(left - 10, y + 4, "v", 11, "end")
            continue
        offset = offsets[row - 1]
        for lane in range(km.WARP):
            src = km.shuffle_source(lane, offset)
            if src != lane:
                on_path = lane in matters[row]
                svg.line(left + src * cw + cw / 2, y - rh + 15, left + lane * cw + cw / 2, y - 8,
                         ORANGE if on_path else LINE, 1.3 if on_path else 0.7, arrow=on_path)
        svg.text(left - 10, y + 4, f"offset {offset}", 11, "end")
        adds = [lane for lane in range(km.WARP) if km.shuffle_source(lane, offset) != lane]
        svg.text(left + km.WARP * cw + 10, y + 4, f"lanes {span(adds)} add", 11)
        svg.text(left + km.WARP * cw + 10, y + 18, f"lanes {span(set(range(km.WARP)) - set(adds))} get their own v",
                 10, fill=MUTED)
    requests = km.reduce_block(km.block_reduce_05, block)
    stores = [r for r in requests if r.op == "st"]
    load = next(r for r in requests if r.op == "ld")
    y = top + rh * len(offsets) + 50
    svg.text(16, y, f"Then, with {block} threads: lane 0 of each of the {len(stores)} warps writes smem[warp]; "
             f"after __syncthreads() warp 0 reads smem[lane].", 12, weight="bold")
    for w in range(len(stores)):
        svg.cell(left + w * cw, y + 18, cw, 18, ORANGE, w, 9)
        svg.text(left + w * cw + cw / 2, y + 48, w % km.BANKS, 8, "middle", MUTED)
    svg.text(left - 10, y + 31, "smem", 11, "end")
    svg.text(left - 10, y + 48, "bank", 9, "end", MUTED)
    svg.text(left, y + 72, f"{len(stores)} stores of one lane each ({stores[0].wavefronts()} wavefront each); one "
             f"load of {len(load.lanes)} lanes in {len(load.words_per_bank())} banks ({load.wavefronts()} wavefront).",
             11)
    svg.legend(left, y + 100, [(BLUE, "a lane whose v reaches lane 0"), (ORANGE, "a read on that path"),
                               (IDLE, "a lane lane 0 never reads")])
    return svg


# ---- 06: the peel, and the loads in flight --------------------------------------------------------------------

ROLE = {"head": PURPLE, "tail": GREEN, "single": SKY}


def split_figure(base_n=16):
    """06's head / float4 body / tail for input offsets 0-3 and each n mod 4."""
    cw, left, top, rh = 14, 150, 62, 22
    cases = [(offset, base_n + r) for offset in range(4) for r in range(4)]
    cells = 3 + base_n + 3 + 3
    svg = Svg(left + cells * cw + 240, top + rh * len(cases) + 70, "06_float4: head, float4 body and tail")
    svg.text(16, 24, "06_float4: the input split at 16-byte boundaries, for each pointer offset and n mod 4", 14,
             weight="bold")
    svg.text(left, top - 10, "memory from the 16-byte boundary at or below in (one cell per float)", 9, fill=MUTED)
    for row, (offset, n) in enumerate(cases):
        y = top + row * rh
        head, vectors, tail = km.split(4 * offset, n)
        for c in range(offset + n + (-(offset + n)) % 4):
            i = c - offset
            role = None if not 0 <= i < n else "head" if i < head else "tail" if i >= n - tail else "body"
            if role is None:  # the rest of a 16-byte chunk: not the input
                svg.rect(left + c * cw, y, cw, rh - 6, "#ffffff", MUTED, 0.6, "2 2")
            else:
                svg.rect(left + c * cw, y, cw, rh - 6, BLUE if role == "body" else ROLE[role], "#ffffff", 0.6)
        for v in range(vectors):
            c = offset + head + 4 * v
            svg.rect(left + c * cw, y, 4 * cw, rh - 6, "none", INK, 1.2)
        svg.text(left - 8, y + 12, f"offset {offset}, n = {n}", 11, "end")
        svg.text(left + cells * cw + 8, y + 12, f"head {head}, {vectors} float4, tail {tail}", 11, fill=MUTED)
    svg.legend(left, top + rh * len(cases) + 26, [(PURPLE, "head: in[tid], tid < head"),
                                                 (BLUE, "body: one float4 per box"),
                                                 (GREEN, "tail: in[n - tail + tid]")])
    svg.text(left, top + rh * len(cases) + 48, "Dashed: the rest of a 16-byte chunk, outside the input: never read.",
             11, fill=MUTED)
    return svg


def loads_figure(threads=8, vectors=69):
    """06's grid-stride over float4s: the vectors each thread loads together, kLoadsInFlight at a time."""
    n = 4 * vectors
    who = km.readers(0, n, threads)
    cw, left, top, rh = 46, 96, 66, 22
    rows = -(-vectors // threads)
    svg = Svg(left + threads * cw + 300, top + rh * rows + 70, "06_float4: the loads a thread has in flight")
    svg.text(16, 24, f"06_float4, kLoadsInFlight = {km.K_LOADS_IN_FLIGHT}: a grid of {threads} threads (for the "
             f"picture), {vectors} float4 vectors", 14, weight="bold")
    colours = [BLUE, ORANGE, PURPLE, GREEN]
    for t in range(threads):
        svg.text(left + t * cw + cw / 2, top - 8, f"thread {t}", 9, "middle", MUTED)
    for v in range(vectors):
        tid, batch = who[4 * v]
        fill = SKY if batch == "single" else colours[batch % len(colours)]
        svg.cell(left + v % threads * cw, top + v // threads * rh, cw, rh - 4, fill, f"body[{v}]", 8,
                 "#ffffff" if batch != "single" else INK, INK if tid == 0 else "#ffffff")
    for r in range(rows):
        svg.text(left - 8, top + r * rh + 12, f"tid + {r}·stride" if r else "i = tid", 10, "end", MUTED)
    batches = sorted({b for _, b in who[:4 * vectors] if b != "single"})
    x = left + threads * cw + 16
    for b in batches:
        rows_b = sorted({v // threads for v in range(vectors) if who[4 * v][1] == b})
        y0, y1 = top + rows_b[0] * rh, top + rows_b[-1] * rh + rh - 4
        svg.line(x, y0, x, y1, colours[b % len(colours)], 2)
        svg.text(x + 8, (y0 + y1) / 2 + 4, f"iteration {b}: {len(rows_b)} loads in flight per thread", 11)
    single = sorted({v // threads for v in range(vectors) if who[4 * v][1] == "single"})
    if single:
        svg.text(x + 8, top + single[0] * rh + 12, "the remainder loop: one load at a time", 11)
    y = top + rh * rows + 24
    svg.text(left, y, "Each thread issues one iteration's loads (one colour in its column; thread 0 outlined) before "
             "adding any.", 11)
    svg.text(left, y + 18, "The loop runs while i + (kLoadsInFlight - 1)·stride < vectors, then one vector at a time.",
             11, fill=MUTED)
    return svg


# ---- 07: the combines as timelines ------------------------------------------------------------------------

FINISH_ORDER = (2, 0, 5, 3, 1, 4)  # any order: the blocks finish as the hardware schedules them


def combines_figure(order=FINISH_ORDER):
    """07's three combines: what each block does when its sum is ready, in the order the blocks finish."""
    grid = len(order)
    unit, left, top, rh = 56, 96, 60, 17
    panel = rh * (grid + 1) + 62
    after = left + (grid + 1.6) * unit  # where the work after the last block's sum starts
    svg = Svg(int(after + 2 * unit + 250), top + 3 * panel, "07_multiblock: the three combines")
    svg.text(16, 24, f"07_multiblock: {grid} blocks finishing in the order {', '.join(map(str, order))}; what each "
             "combine does then", 14, weight="bold")
    svg.text(16, 44, "A bar: a block's work until its sum is ready; time runs to the right.", 10, fill=MUTED)
    finish = {b: k + 1 for k, b in enumerate(order)}
    for p, combine in enumerate(("atomic", "two-pass", "last-block")):
        y0 = top + p * panel
        events, sums = km.combine_events(list(order), combine)
        svg.text(16, y0 + 10, combine, 13, weight="bold")
        for b in range(grid):
            y = y0 + 20 + b * rh
            svg.text(left - 8, y + 11, f"block {b}", 10, "end", MUTED)
            svg.rect(left, y, finish[b] * unit, rh - 5, IDLE)
            action = next(a for blk, a in events if blk == b)
            svg.circle(left + finish[b] * unit, y + (rh - 5) / 2, 4, ORANGE if combine == "atomic" else BLUE)
            short = action.split("; ")[-1].replace(": the last block", " = gridDim.x - 1") \
                if combine == "last-block" else action
            svg.text(left + finish[b] * unit + 8, y + 10, short.replace("atomicAdd(out, sum)", "atomicAdd"), 9)
        y = y0 + 20 + grid * rh
        if combine == "atomic":
            svg.text(left - 8, y + 11, "*out", 10, "end", MUTED)
            for k, b in enumerate(sums):
                svg.cell(left + (k + 1) * unit - 12, y, 24, rh - 5, ORANGE, f"+b{b}", 8)
            note = "*out = " + " + ".join(f"b{b}" for b in sums) + ": the order the blocks got there"
        else:
            who, what = events[-1]
            at = after if combine == "two-pass" else left + finish[who] * unit + 150
            row = y if combine == "two-pass" else y0 + 20 + who * rh
            if combine == "two-pass":
                svg.line(after - 14, y0 + 16, after - 14, y + rh, BLUE, 1, "4 3")
                svg.text(after - 10, y0 + 14, "the first launch ends; a second launch of one block", 9, fill=BLUE)
                svg.text(left - 8, y + 11, "launch 2", 10, "end", MUTED)
            svg.rect(at, row, 2 * unit, rh - 5, BLUE)
            svg.text(at + 2 * unit + 6, row + 10, what.replace("second launch: ", ""), 9)
            note = ("*out = " + " + ".join(f"b{b}" for b in sums) + ", by index in a fixed tree: the same order on "
                    "every run")
        svg.text(left, y + rh + 20, note, 11, fill=RED if combine == "atomic" else BLUE)
    return svg


# ---- 08: the tiles and their banks --------------------------------------------------------------------------

def gemm_tiles_figure(tile=16, m=32, k=48, thread=(5, 2), block=(1, 1)):
    """08's block walking along K: the tiles of A and B it loads, and what one thread loads and reads."""
    c, gap = 5, 22
    left, top = 70, 70
    a_x, a_y = left, top + k * c + gap
    b_x, b_y = left + k * c + gap, top
    svg = Svg(b_x + m * c + 150, a_y + m * c + 60, "08_gemm_tiled: the tiles along K")
    tx, ty = thread
    bx, by = block
    svg.text(16, 24, f"08_gemm_tiled: block ({bx}, {by}) walks K in {tile} x {tile} tiles (M = N = {m}, K = {k})", 14,
             weight="bold")
    steps = list(range(0, k, tile))
    shades = [IDLE, "#dde3ea"]
    loads = [km.gemm_global(tx, ty, bx, by, k0, tile) for k0 in steps]
    row, col = loads[0][2]
    for i in range(m):
        for j in range(k):
            in_block = by * tile <= i < (by + 1) * tile
            fill = shades[j // tile % 2] if in_block else "#ffffff"
            if i == row:
                fill = SKY
            if (i, j) in [a for a, _, _ in loads]:
                fill = ORANGE
            svg.rect(a_x + j * c, a_y + i * c, c, c, fill, "none")
    for i in range(k):
        for j in range(m):
            in_block = bx * tile <= j < (bx + 1) * tile
            fill = shades[i // tile % 2] if in_block else "#ffffff"
            if j == col:
                fill = SKY
            if (i, j) in [b for _, b, _ in loads]:
                fill = ORANGE
            svg.rect(b_x + j * c, b_y + i * c, c, c, fill, "none")
    for i in range(m):
        for j in range(m):
            in_block = by * tile <= i < (by + 1) * tile and bx * tile <= j < (bx + 1) * tile
            svg.rect(b_x + j * c, a_y + i * c, c, c, RED if (i, j) == (row, col) else IDLE if in_block else "#ffffff",
                     "none")
    for x, y, w, h, name in ((a_x, a_y, k, m, "A"), (b_x, b_y, m, k, "B"), (b_x, a_y, m, m, "C")):
        svg.rect(x, y, w * c, h * c, "none", INK)
        svg.text(x - 8, y + 12, name, 13, "end", weight="bold")
    for s, k0 in enumerate(steps):
        svg.text(a_x + (k0 + tile / 2) * c, a_y - 6, f"k0 = {k0}", 9, "middle", MUTED)
        svg.text(b_x + m * c + 6, b_y + (k0 + tile / 2) * c + 3, f"k0 = {k0}", 9, fill=MUTED)
    x = left
    lines = ["At each step k0 the block loads one tile",
             "of A and one of B (the grey stripes).",
             f"Thread (tx {tx}, ty {ty}) loads the orange ones:",
             "A[row][k0 + tx] and B[k0 + ty][col],",
             f"with row {row} and col {col}.", "",
             "It then reads row ty of A's tile and",
             f"column tx of B's tile (blue) for its {tile}",
             f"multiply-adds into C[{row}][{col}] (red)."]
    for i, text in enumerate(lines):
        svg.text(x, top + 14 + 16 * i, text, 11)
    svg.legend(left, a_y + m * c + 34, [(ORANGE, "loaded by the thread"), (SKY, "read by it from the tiles"),
                                        (RED, "its element of C")])
    return svg


def gemm_banks_figure(tile=16):
    """08: warp 0's shared-memory requests in the unpadded and the padded tile, word by word in the banks."""
    cw, left, top, rh = 17, 250, 64, 46
    rows = []
    for pad in (0, 1):
        requests = [r for r in km.run_block(km.gemm_thread, tile * tile, tile=tile, pad=pad) if r.warp == 0]
        base = tile * (tile + pad)
        for line in ("a_tile[ty][tx] =", "a_tile[ty][k]", "a_tile[ty][k..k+3]", "b_tile[k][tx]"):
            r = next((r for r in requests if r.line == line and r.step in (None, 0)), None)
            if r:
                rows.append((pad, r, base if line.startswith("b_") else 0))
    svg = Svg(left + km.BANKS * cw + 240, top + rh * len(rows) + 70, "08_gemm_tiled: a warp's requests in the banks")
    svg.text(16, 24, f"08_gemm_tiled, {tile} x {tile} tile: warp 0 (ty 0 and 1, tx 0–{tile - 1}), each word it "
             "touches in its bank", 14, weight="bold")
    for b in range(km.BANKS):
        svg.text(left + b * cw + cw / 2, top - 8, b, 8, "middle", MUTED)
    for i, (pad, r, base) in enumerate(rows):
        y = top + i * rh
        lanes_at = {}
        for _, w in r.lanes:
            for x in range(w, w + r.width):
                lanes_at[x - base] = lanes_at.get(x - base, 0) + 1
        banks = r.words_per_bank()
        layers = max(w // km.BANKS for w in lanes_at) + 1
        for layer in range(layers):
            for b in range(km.BANKS):
                word = layer * km.BANKS + b
                n = lanes_at.get(word)
                crowded = len(banks.get((b + base) % km.BANKS, [])) > 1
                fill = (RED if crowded else ORANGE if r.op == "st" else SKY) if n else "#ffffff"
                svg.cell(left + b * cw, y + layer * 16, cw, 15, fill, n if n and n > 1 else None, 8)
        name = f"{'padded' if pad else 'unpadded'}: {'store' if r.op == 'st' else 'load'} {r.line.rstrip(' =')}"
        svg.text(16, y + 12, name, 11, weight="bold")
        svg.text(16, y + 27, f"{tile} x {tile + pad} floats per tile", 10, fill=MUTED)
        w, free = r.wavefronts(), r.conflict_free()
        what = (f"{w} wavefronts: {w}-way" if w > free else
                f"{w} wavefront{'s' * (w > 1)}" + (" (128-bit, 2 addresses)" if r.width > 1 else ""))
        svg.text(left + km.BANKS * cw + 12, y + 12, what, 11, fill=RED if w > free else INK)
    y = top + rh * len(rows) + 20
    svg.text(16, y, "One cell per word, by bank (second row: the 32 words after); a number: lanes on that word "
             "(a broadcast). Red: two words in one bank.", 11, fill=MUTED)
    svg.legend(16, y + 26, [(ORANGE, "stored"), (SKY, "loaded"), (RED, "a bank conflict")])
    return svg


# ---- the pictures, written and checked ----------------------------------------------------------------------------

DIAGRAMS = {
    "01_naive_tree": tree_figure,
    "01_naive_banks": lambda: bank_strips(km.block_reduce_01, "smem[index]", "01_naive"),
    "02_grid_stride_loop": grid_stride_figure,
    "03_padding_layout": layout_figure,
    "03_padding_banks": lambda: bank_strips(km.block_reduce_03, "smem[padded(index)]", "03_padding"),
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
    """What --check reports: a diagram missing from docs/img/ or different from what the models draw."""
    out = []
    for name, text in drawn().items():
        path = pathlib.Path(directory) / name
        if not path.exists():
            out.append(f"docs/img/{name} is missing: run ./ladder docs")
        elif path.read_text() != text:
            out.append(f"docs/img/{name} differs from what scripts/diagrams.py draws: run ./ladder docs")
    return out
