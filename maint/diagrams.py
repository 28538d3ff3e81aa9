"""The stage pages' pictures of what the threads do, drawn as SVG from host runs of the stages' own code
(host_run.py, block_requests.py): every word, lane, shuffle, float4 load and ticket in a picture is one the
kernel's code logged on the host.

./maint/do docs (maint/make_docs.py) writes them to docs/img/<name>.svg, with no GPU; `make_docs.py --check` fails
if one differs from what the host runs draw, and maint/tests/check_pictures.py holds every picture to the legibility
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
from scripts import host_run
from .diagrams_loads import combines_figure, gemm_banks_figure, gemm_tiles_figure, loads_figure, split_figure
from .svg import BLUE, CONFLICT, IDLE, INK, LINE, MUTED, ORANGE, SKY, WIDTH, Svg, degree_fill, span, warps_of


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
    per_warp_sums(svg, block, left, top + rh * len(rounds) + 50, cw)
    return svg


def per_warp_sums(svg, block, left, y, cw):
    """Under 05's shuffles: the per-warp sums in shared memory, as the host run's requests store and load them."""
    reqs = br.reduce_block("05_shuffle", block)
    stores = [r for r in reqs if r.op == "st"]
    load = next(r for r in reqs if r.op == "ld")
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
            out.append(f"docs/img/{name} is missing: run ./maint/do docs")
        elif path.read_text() != text:
            out.append(f"docs/img/{name} differs from what maint/diagrams.py draws: run ./maint/do docs")
    return out
