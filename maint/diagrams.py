"""The stage pages' pictures, drawn as SVG from host runs of the stages' own code (block_requests.py), on an opaque
white panel in fixed colours (GitHub's dark theme does not reach an SVG): the Okabe-Ito set, and wine for conflicts."""
import itertools
import math
import pathlib
from xml.sax.saxutils import escape

from scripts import host_run
from . import block_requests as br
from .block_requests import BANKS, WARP

WIDTH = 830  # no picture is wider than a README column on GitHub
INK, MUTED, LINE, IDLE, WHITE = "#1f2328", "#57606a", "#d0d7de", "#eef1f4", "#ffffff"
ORANGE, SKY, BLUE, GREEN, PINK, CONFLICT = "#E69F00", "#56B4E9", "#0072B2", "#009E73", "#CC79A7", "#882255"
DEGREE = {1: "#d6ecfa", 2: "#fde3b5", 4: "#fbbf6e", 8: "#f39a3b", 16: "#b8540f", 32: "#7a2e04"}  # words in a bank

def contrast(a, b):
    """The WCAG contrast ratio of two #rrggbb colours."""
    def luminance(c):
        r, g, b = (v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
                   for v in (int(c[i:i + 2], 16) / 255 for i in (1, 3, 5)))
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)

def _fmt(v):
    return f"{v:.1f}".rstrip("0").rstrip(".") if isinstance(v, float) else str(v)

class Svg:
    """Just enough SVG, on an opaque white panel under a bold heading."""

    def __init__(self, height, title, heading=None, width=WIDTH):
        self.width, self.height, self.title, self.body, self.arrows = width, height, title, [], set()
        if heading:
            self.text(16, 24, heading, 14, weight="bold")

    def el(self, tag, content=None, arrow=None, **attrs):  # arrow: the colour of an arrowhead at its end
        if arrow:
            self.arrows.add(arrow)
            attrs["marker_end"] = f"url(#arrow{arrow[1:]})"
        a = "".join(f' {k.rstrip("_").replace("_", "-")}="{_fmt(v)}"' for k, v in attrs.items() if v is not None)
        self.body.append(f"<{tag}{a}/>" if content is None else f"<{tag}{a}>{escape(str(content))}</{tag}>")

    def rect(self, x, y, w, h, fill, stroke=LINE, width=None, dash=None):
        self.el("rect", x=x, y=y, width=w, height=h, fill=fill, stroke=stroke, stroke_width=width,
                stroke_dasharray=dash)

    def text(self, x, y, s, size=12, anchor=None, fill=INK, weight=None):
        self.el("text", s, x=x, y=y, font_size=size if size != 12 else None, text_anchor=anchor, fill=fill,
                font_weight=weight)

    def line(self, x1, y1, x2, y2, stroke=INK, width=1, dash=None, arrow=False, lift=None):  # lift: an arc bowing up
        if lift is None:
            return self.el("line", None, arrow and stroke, x1=x1, y1=y1, x2=x2, y2=y2, stroke=stroke,
                           stroke_width=width, stroke_dasharray=dash)
        d = f"M{_fmt(x1)} {_fmt(y1)} C{_fmt(x1)} {_fmt(y1 - lift)} {_fmt(x2)} {_fmt(y2 - lift)} {_fmt(x2)} {_fmt(y2)}"
        self.el("path", None, stroke, d=d, fill="none", stroke=stroke, stroke_width=width)

    def cell(self, x, y, w, h, fill, label=None, size=9, stroke=LINE):  # label: in ink or white, the more contrasting
        self.rect(x, y, w, h, fill, stroke)
        if label is not None:
            ink = INK if contrast(INK, fill) >= contrast(WHITE, fill) else WHITE
            self.text(x + w / 2, y + h / 2 + size * 0.35, label, size, "middle", ink)

    def ticks(self, x, cw, y, columns, name=None, gap=8, label=lambda i: i):  # labels over columns of width cw
        for i in columns:
            self.text(x + i * cw + cw / 2, y, label(i), 9, "middle", MUTED)
        if name:
            self.text(x - gap, y, name, 9, "end", MUTED)

    def legend(self, x, y, items):  # items: [(colour, words)], in one row
        for colour, words in items:
            self.rect(x, y - 9, 12, 12, colour)
            self.text(x + 17, y + 1, words, 11)
            x += 17 + 6.3 * len(words) + 22

    def svg(self):
        defs = "".join(f'<marker id="arrow{c[1:]}" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="6" '
                       f'markerHeight="6" orient="auto"><path d="M0 0L8 4L0 8z" fill="{c}"/></marker>'
                       for c in sorted(self.arrows))
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" height="{self.height}" viewBox="0 0 '
                f'{self.width} {self.height}" font-family="Helvetica, Arial, sans-serif" font-size="12" role="img">\n'
                f'<title>{escape(self.title)}</title>\n' + (f"<defs>{defs}</defs>\n" if defs else "")
                + f'<rect x="0.5" y="0.5" width="{self.width - 1}" height="{self.height - 1}" rx="6" fill="#ffffff" '
                f'stroke="{LINE}"/>\n' + "\n".join(self.body) + "\n</svg>\n")

def span(numbers):  # [0, 1, 2, 5] -> '0–2, 5'
    runs = [[n for _, n in g] for _, g in itertools.groupby(enumerate(sorted(numbers)), lambda p: p[1] - p[0])]
    return ", ".join(f"{r[0]}" if len(r) == 1 else f"{r[0]}–{r[-1]}" for r in runs)

def plural(n, word):
    return f"{n} {word}{'s' * (n > 1)}"

def tree_figure(block=64, cw=8, left=54, top=62, rh=50):  # 01's tree: each step's threads, words and warp 0's lanes
    t = br.tree("01_naive", block)
    svg = Svg(top + rh * len(t.steps) + 84, f"01_naive: the tree of a {block}-thread block, step by step",
              f"01_naive, one block of {block} threads: at step s thread t adds word 2·s·t + s into word 2·s·t")
    svg.ticks(left, cw, top - 10, range(0, block, 8), "word", 6)
    svg.text(left + block * cw + 22, top - 10, "warp 0's 32 lanes: adding or idle", 9, fill=MUTED)
    for y, (s, reqs) in zip(itertools.count(top, rh), t.steps.items()):
        written, read, worst = br.writes(reqs), br.other_reads(reqs), max(r.wavefronts() for r in reqs)
        for w in range(block):
            svg.cell(left + w * cw, y, cw, 12, ORANGE if w in written.values() else SKY if w in read.values() else IDLE)
        for th, w in written.items():
            svg.line(left + read[th] * cw + cw / 2, y, left + w * cw + cw / 2 + 1.5, y, MUTED, 0.8,
                     lift=min(16, 5 + 2.2 * math.log2(1 + read[th] - w)))
        svg.text(left - 6, y + 10, f"s = {s}", 11, "end")
        for lane in range(WARP):
            svg.rect(left + block * cw + 22 + lane * 6, y, 6, 12, BLUE if lane in written else WHITE, LINE, 0.5)
        svg.text(left, y + 28, (f"threads {span(written)} add" if len(written) > 1 else f"thread {min(written)} adds")
                 + f" ({plural(len({x // WARP for x in written}), 'warp')}; {WARP - sum(x < WARP for x in written)} of "
                 f"warp 0's lanes idle); {worst}-way: {plural(worst, 'wavefront')} a request", 10,
                 fill=CONFLICT if worst > 1 else INK)
    y = top + rh * len(t.steps) + 4
    svg.text(left - 6, y + 9, "bank", 9, "end", MUTED)
    svg.ticks(left, cw, y + 9, range(0, block, 4), label=lambda w: w % BANKS)
    svg.legend(left, y + 36, [(ORANGE, "read and written: smem[index] +="), (SKY, "read: smem[index + s]"),
                              (IDLE, "untouched")])
    svg.legend(left, y + 58, [(BLUE, "a lane of warp 0 that adds"), (WHITE, "an idle lane: predicated off, it waits")])
    return svg

def bank_strips(stage, block=1024, cw=14, left=240, top=64, rh=24):  # each step's first read: its words by bank
    t = br.tree(stage, block)
    svg = Svg(top + rh * len(t.steps) + 56, f"{stage}: the banks of each step's first read, {block} threads",
              f"{stage}, {block} threads: the words of the first adding warp's read of smem[index], by bank")
    svg.ticks(left, cw, top - 8, range(0, BANKS, 2), "bank")
    for y, (s, reqs) in zip(itertools.count(top, rh), t.steps.items()):
        first, active = br.own_read(reqs), br.writes(reqs)
        svg.text(16, y + 14, f"s = {s}", 11, weight="bold")
        svg.text(64, y + 14, f"{len(active)} thread{'s add' if len(active) > 1 else ' adds'}, "
                 f"{plural(len({x // WARP for x in active}), 'warp')}", 11, fill=MUTED)
        for b, words in enumerate(len(first.words_per_bank().get(b, ())) for b in range(BANKS)):
            fill = DEGREE[min(DEGREE, key=lambda d: abs(math.log2(d) - math.log2(words)))] if words else WHITE
            svg.cell(left + b * cw, y, cw, rh - 4, fill, words or None, 9)
        w = first.wavefronts()
        svg.text(left + BANKS * cw + 10, y + 14, f"{w}-way", 11, weight="bold", fill=CONFLICT if w > 1 else INK)
    svg.text(16, top + rh * len(t.steps) + 22, "A number: distinct words of the request in that bank, served one "
             "wavefront each; the busiest bank sets the request's wavefronts.", 10, fill=MUTED)
    return svg

def grid_stride_figure(blocks=2, block=64, n=300, mark=5, cw=5, left=84, top=62, rh=22):  # 02's loop, trip by trip
    threads, trips = blocks * block, -(-n // (blocks * block))
    readers = host_run.run("02_grid_stride", "reduce", block=block, grid=blocks, n=n, readers=1).readers
    assert all(len(r) == 1 for r in readers.values()), "an element read by no thread or by several"
    svg = Svg(top + rh * trips + 90, "02_grid_stride: the grid-stride loop",
              f"02_grid_stride: {blocks} blocks of {block} threads ({threads} in the grid) over n = {n}")
    for e in range(n):
        svg.rect(left + e % threads * cw, top + e // threads * rh, cw, rh - 6,
                 ORANGE if readers[e][0] == mark else BLUE if readers[e][0] < block else SKY, WHITE, 0.4)
    for trip in range(trips):
        svg.text(left - 8, top + trip * rh + 12, f"trip {trip + 1}", 11, "end")
    for col in range(0, threads, 32):
        svg.text(left + col * cw, top - 8, col, 9, fill=MUTED)
    y, mine = top + rh * trips + 20, ", ".join(str(e) for e in range(n) if readers[e][0] == mark)
    svg.text(left, y, f"thread {mark} (orange) adds elements {mine}: one stride of the grid ({threads}) apart.", 11)
    svg.legend(left, y + 28, [(BLUE, "read by block 0"), (SKY, "read by block 1"), (ORANGE, f"read by thread {mark}")])
    svg.text(left, y + 50, "Columns: the thread (global index) that adds the element; rows: its trips around the loop.",
             10, fill=MUTED)
    return svg

def layout_figure(s=16, block=1024, cell=8, top=70):  # shared memory unpadded (02) and padded (03), warp 0's reads
    trees = [br.tree(stage, block) for stage in ("02_grid_stride", "03_padding")]
    rows = -(-max(max(t.element) for t in trees) // BANKS) + 1
    svg = Svg(top + rows * cell + 96, "03_padding: where the words land",
              f"A {block}-thread block's shared memory in rows of 32 banks: warp 0's reads at s = {s}")
    titles = ("02: element i at word i", "03: element i at word i + i / 32")
    for x0, title, t in zip((40, 40 + BANKS * cell + 96), titles, trees):
        reqs, used = [r for r in t.steps[s] if r.warp == 0], set(t.element)
        own, other = {w for _, w in br.own_read(reqs).lanes}, set(br.other_reads(reqs).values())
        svg.text(x0, top - 22, title, 12, weight="bold")
        svg.ticks(x0, cell, top - 6, (0, 16, 31))
        for word in range(rows * BANKS):
            x, y = x0 + word % BANKS * cell, top + word // BANKS * cell
            svg.rect(x, y, cell, cell, ORANGE if word in own else SKY if word in other else IDLE if word in used
                     else WHITE, LINE if word in used else WHITE, 0.4)
            if word not in used and word < max(used):
                svg.line(x + 1, y + cell - 1, x + cell - 1, y + 1, MUTED, 0.6)
        worst = max(r.wavefronts() for r in reqs)
        svg.text(x0, top + rows * cell + 20, f"{plural(worst, 'word')} in the busiest bank: "
                 f"{plural(worst, 'wavefront')}", 11, fill=CONFLICT if worst > 1 else INK)
    svg.legend(40, top + rows * cell + 52, [(ORANGE, "smem[index], index = 2·s·tid"), (SKY, "smem[index + s]"),
                                            (IDLE, "the other elements")])
    svg.text(40, top + rows * cell + 76, "Crossed cells in 03: the padding word after every 32, never read.", 11,
             fill=MUTED)
    return svg

def warp_steps_figure(block=1024, cw=12, left=56, top=64, rh=54):
    """04's unrolled steps: lanes, their partial sums, the __syncwarp()s, and one read-after-write they order."""
    t = br.tree("04_warp_unroll", block)
    steps = br.warp_steps(t)
    first = min(steps)  # the live partial sums at the start of the warp's steps: elements 0, first, 2 first, ...
    svg = Svg(top + rh * len(steps) + 70, "04_warp_unroll: the last six steps in warp 0", f"04_warp_unroll, {block} "
              f"threads: the {len(steps)} steps warp 0 runs alone, on elements 0, {first}, {2 * first}, ... "
              f"{block - first}")
    svg.ticks(left, cw, top - 8, range(0, block // first, 8), "element", 6, lambda k: k * first)
    before, example = {}, None  # before: {element: the lane that wrote it the step before}
    for row, (y, (s, reqs)) in enumerate(zip(itertools.count(top, rh), steps.items())):
        writes = {th: t.element[w] for th, w in br.writes(reqs).items()}
        reads = [(th, t.element[w]) for r in reqs if r.op == "ld" for th, w in r.words.items()]
        races = [(th, e) for th, e in reads if before.get(e, th) != th]
        for e in range(0, block, first):
            fill = ORANGE if e in writes.values() else SKY if e in {x for _, x in reads} else IDLE
            svg.cell(left + e // first * cw, y, cw, 14, fill, next((th for th, x in writes.items() if x == e), None), 9)
        for th, e in ((th, e) for th, e in reads if e != writes[th]):
            is_example = example is None and (th, e) in races
            svg.line(left + e // first * cw + cw / 2, y, left + writes[th] // first * cw + cw / 2 + 1.5, y,
                     CONFLICT if is_example else MUTED, 1.6 if is_example else 0.8,
                     lift=min(18, 5 + 2.5 * math.log2(1 + (e - writes[th]) // first)))
            example = (s, th, e, before[e]) if is_example else example
        svg.text(left - 6, y + 11, f"s = {s}", 11, "end")
        svg.text(left, y + 28, f"{len(writes)} lane{'s add' if len(writes) > 1 else ' adds'}; {len(races)} of "
                 f"{len(reads)} reads are of words another lane wrote", 10, fill=CONFLICT if races else MUTED)
        if row + 1 < len(steps) and reqs[0].phase + 1 in t.warp_phases:
            svg.line(left, y + 38, left + block // first * cw, y + 38, BLUE, 1, "4 3")
            svg.text(left + block // first * cw - 70, y + 48, "__syncwarp()", 10, fill=BLUE)
        before = {e: th for th, e in writes.items()}
    (s, lane, e, writer), y = example, top + rh * len(steps) + 8
    svg.text(left, y, f"Wine: at s = {s} lane {lane} reads element {e}, which lane {writer} wrote one step before; "
             "the __syncwarp() between the steps orders", 11)
    svg.text(left, y + 16, f"the two. The volatile version has no barrier there, and lane {lane}'s read can come "
             "first: the race racecheck reports.", 11)
    svg.legend(left, y + 40, [(ORANGE, "written (the lane's number)"), (SKY, "read"), (IDLE, "done")])
    return svg

def shuffle_figure(block=1024, cw=17, left=80, top=62, rh=44):
    """05's warp_reduce(): whom each lane reads at each offset, the lanes reaching lane 0, then the per-warp sums."""
    trace = br.run("05_shuffle", "reduce", block=block, n=block)
    reads = {lane: [x[4] for x in trace.shuffles if x[:2] == (0, lane)][:5] for lane in range(WARP)}  # block 0
    rounds = [{lane: rs[k] for lane, rs in reads.items()} for k in range(len(reads[0]))]  # {lane: the lane it reads}
    svg = Svg(top + rh * len(rounds) + 190, "05_shuffle: the shuffle-down steps",
              "05_shuffle: v += __shfl_down_sync(0xffffffff, v, offset): lane i adds lane i + offset's v")
    matters = [{0}]  # the lanes whose value reaches lane 0, after each step, from the last back
    for r in reversed(rounds):
        matters.insert(0, matters[0] | {r[i] for i in matters[0]})
    svg.ticks(left, cw, top - 10, range(0, WARP, 4), "lane", 10)
    for row, y in enumerate(range(top + 8, top + 8 + rh * (len(rounds) + 1), rh)):
        for lane in range(WARP):
            svg.el("circle", cx=left + lane * cw + cw / 2, cy=y, r=6,
                   **(dict(fill=BLUE, stroke=INK) if lane in matters[row] else dict(fill=IDLE, stroke=LINE)))
        if row == 0:
            svg.text(left - 10, y + 4, "v", 11, "end")
            continue
        r = rounds[row - 1]
        others = [lane for lane in range(WARP) if r[lane] != lane]
        for lane, on in ((lane, lane in matters[row]) for lane in others):
            svg.line(left + r[lane] * cw + cw / 2, y - rh + 15, left + lane * cw + cw / 2, y - 8,
                     ORANGE if on else LINE, 1.3 if on else 0.7, arrow=on)
        svg.text(left - 10, y + 4, f"offset {r[0]}", 11, "end")
        svg.text(left + WARP * cw + 8, y - 4, f"every lane adds: {span(others)}", 10)
        svg.text(left + WARP * cw + 8, y + 8, f"add lanes {span(r[i] for i in others)}'s v,", 10)
        svg.text(left + WARP * cw + 8, y + 20, f"{span(set(range(WARP)) - set(others))} their own", 10, fill=MUTED)
    y, reqs = top + rh * len(rounds) + 50, br.reduce_block("05_shuffle", block)  # the per-warp sums
    stores, load = [r for r in reqs if r.op == "st"], next(r for r in reqs if r.op == "ld")
    svg.text(16, y, f"Then ({block} threads): lane 0 of each of the {len(stores)} warps writes smem[warp]; warp 0 "
             "reads smem[lane].", 12, weight="bold")
    for w in range(len(stores)):
        svg.cell(left + w * cw, y + 18, cw, 18, ORANGE, w, 9)
    svg.ticks(left, cw, y + 50, range(0, len(stores), 4), label=lambda w: w % BANKS)
    svg.text(left - 10, y + 31, "smem", 11, "end")
    svg.text(left - 10, y + 50, "bank", 9, "end", MUTED)
    svg.text(left, y + 72, f"{len(stores)} stores of one lane each ({stores[0].wavefronts()} wavefront each); one load "
             f"of {len(load.lanes)} lanes in {len(load.words_per_bank())} banks ({load.wavefronts()} wavefront).", 11)
    svg.legend(left, y + 100, [(BLUE, "a lane whose v reaches lane 0"), (ORANGE, "a read on that path"),
                               (IDLE, "a lane lane 0 never reads")])
    return svg

def float4_reads(n, offset, threads, scalar=True):
    """06's host run: {element: (thread, how, slot)}, how 'assign' (a float4 into its slot of the loads in flight),
    'construct' (a float4 copied one at a time) or, with scalar, 'scalar' (a float read)."""
    out, run = {}, lambda **more: br.run("06_float4", "reduce", block=threads, grid=1, n=n, offset=offset, **more)
    for b, tid, phase, how, region, element, dest in run().loads:
        for e in range(element, element + 4):
            assert e not in out, f"06_float4: element {e} loaded twice"
            out[e] = (b * threads + tid, how, dest)
    for e, who in (run(readers=1).readers if scalar else {}).items():
        assert len(who) == 1, f"06_float4: element {e} of n = {n} at offset {offset} read by {len(who)} threads"
        out.setdefault(e, (who[0], "scalar", None))
    return out

def split_figure(base_n=16, cw=14, left=150, top=62, rh=22):  # 06's head, float4 body, tail: each offset, n mod 4
    cases = [(offset, base_n + r) for offset in range(4) for r in range(4)]
    svg = Svg(top + rh * len(cases) + 70, "06_float4: head, float4 body and tail",
              "06_float4: the input split at 16-byte boundaries, for each pointer offset and n mod 4")
    svg.text(left, top - 10, "memory from the 16-byte boundary at or below in (one cell per float)", 9, fill=MUTED)
    for y, (offset, n) in zip(itertools.count(top, rh), cases):
        reads = float4_reads(n, offset, 64)
        body = sorted(e for e, (_, how, _) in reads.items() if how != "scalar")
        head = sum(1 for e, (_, how, _) in reads.items() if how == "scalar" and e < (body or [n])[0] and offset + e < 4)
        for c, i in ((c, c - offset) for c in range(offset + n + (-(offset + n)) % 4)):
            svg.rect(left + c * cw, y, cw, rh - 6, *((BLUE if i in body else PINK if i < head else GREEN, WHITE, 0.6)
                     if 0 <= i < n else (WHITE, MUTED, 0.6, "2 2")))  # dashed: the rest of the chunk, not the input
        for e in body[::4]:
            svg.rect(left + (offset + e) * cw, y, 4 * cw, rh - 6, "none", INK, 1.2)
        svg.text(left - 8, y + 12, f"offset {offset}, n = {n}", 11, "end")
        svg.text(left + (base_n + 9) * cw + 8, y + 12, f"head {head}, {len(body) // 4} float4, tail "
                 f"{n - head - len(body)}", 11, fill=MUTED)
    y = top + rh * len(cases)
    svg.legend(left, y + 26, [(PINK, "head: in[tid], tid < head"), (BLUE, "body: one float4 per box"),
                              (GREEN, "tail: in[n - tail + tid]")])
    svg.text(left, y + 48, "Dashed: the rest of a 16-byte chunk, outside the input: never read.", 11, fill=MUTED)
    return svg

def loads_figure(threads=64, shown=8, rows=10, extra=5, cw=56, left=100, top=66, rh=22):
    """06's grid-stride over float4s: the vectors the first `shown` threads load together, kLoadsInFlight at a time."""
    vectors, colours = threads * (rows - 1) + extra, [BLUE, ORANGE, PINK, GREEN]
    reads, batch, slot0 = float4_reads(4 * vectors, 0, threads, scalar=False), {}, {}
    for v in range(vectors):  # in each thread's order: a batch ends when the thread reuses its array's first slot
        tid, how, dest = reads[4 * v]
        if how == "assign":
            first, count = slot0.get(tid, (dest, -1))
            slot0[tid] = (first, count + (dest == first))
        batch[v] = slot0[tid][1] if how == "assign" else "single"
    svg = Svg(top + rh * rows + 70, "06_float4: the loads a thread has in flight", f"06_float4, kLoadsInFlight = "
              f"{sum(batch[v] == 0 and reads[4 * v][0] == 0 for v in batch)}: one block of {threads} threads, "
              f"{vectors} float4 vectors; threads 0–{shown - 1} shown")
    svg.ticks(left, cw, top - 8, range(shown), label=lambda t: f"thread {t}")
    for v, tid in ((v, reads[4 * v][0]) for v in range(vectors) if reads[4 * v][0] < shown):
        svg.cell(left + tid * cw, top + v // threads * rh, cw, rh - 4, SKY if batch[v] == "single" else
                 colours[batch[v] % len(colours)], f"body[{v}]", 9, INK if tid == 0 else WHITE)
    for r in range(rows):
        svg.text(left - 8, top + r * rh + 12, f"tid + {r}·stride" if r else "i = tid", 10, "end", MUTED)
    x = left + shown * cw + 14
    for b in sorted({b for b in batch.values() if b != "single"}):
        rows_b = sorted({v // threads for v in batch if batch[v] == b})
        y0, y1 = top + rows_b[0] * rh, top + rows_b[-1] * rh + rh - 4
        svg.line(x, y0, x, y1, colours[b % len(colours)], 2)
        svg.text(x + 8, (y0 + y1) / 2 + 4, f"iteration {b}: {len(rows_b)} loads in flight", 11)
    for single in sorted({v // threads for v in batch if batch[v] == "single"})[:1]:
        svg.text(x + 8, top + single * rh + 12, "the remainder loop:", 11)
        svg.text(x + 8, top + single * rh + 26, "one load at a time", 11)
    svg.text(left, top + rh * rows + 24, "Each thread issues one iteration's loads (one colour in its column; thread 0 "
             "outlined) before adding any.", 11)
    svg.text(left, top + rh * rows + 42, "The loop runs while i + (kLoadsInFlight - 1)·stride < vectors, then one "
             "vector at a time.", 10, fill=MUTED)
    return svg

def combines_figure(order=(2, 0, 5, 3, 1, 4), block=64, unit=46, left=76, top=60, rh=17):
    """07's combines: what each block does when its sum is ready, in the host's block order; then one_block_kernel."""
    grid, finish = len(order), {b: k + 1 for k, b in enumerate(order)}
    panel, after = rh * (grid + 1) + 62, left + (grid + 1.6) * unit
    svg = Svg(top + 3 * panel + 126, "07_multiblock: the combines", f"07_multiblock: {grid} blocks finishing in the "
              f"order {', '.join(map(str, order))}; what each combine does then")
    svg.text(16, 44, "A bar: a block's work until its sum is ready; time runs to the right.", 10, fill=MUTED)
    for y0, combine in zip(range(top, top + 3 * panel, panel), ("atomic", "two-pass", "last-block")):
        t = br.run("07_multiblock", combine, block=block, grid=grid, n=16 * block * grid, order=list(order))
        tickets, y = {b: (k, written) for b, _, k, written in t.tickets}, y0 + 20 + grid * rh
        svg.text(16, y0 + 10, combine, 13, weight="bold")
        for b, (k, written) in ((b, tickets.get(b, (None, ()))) for b in range(grid)):
            svg.text(left - 8, y0 + 31 + b * rh, f"block {b}", 10, "end", MUTED)
            svg.rect(left, y0 + 20 + b * rh, finish[b] * unit, rh - 5, IDLE)
            svg.el("circle", cx=left + finish[b] * unit, cy=y0 + 20 + b * rh + (rh - 5) / 2, r=4,
                   fill=ORANGE if combine == "atomic" else BLUE, stroke=INK)
            action = ("atomicAdd(out, sum)" if combine == "atomic" else f"out[{b}] = sum" if combine == "two-pass" else
                      (f"partials[{b}] = sum, then " if b in written else f"ticket BEFORE partials[{b}] = sum: ")
                      + f"ticket {k}" + (" (the last)" if k == grid - 1 else ""))
            svg.text(left + finish[b] * unit + 8, y0 + 30 + b * rh, action, 9)
        if combine == "atomic":  # then what makes *out
            sums = [b for b, *_ in t.atomics]
            svg.text(left - 8, y + 11, "*out", 10, "end", MUTED)
            for k, b in enumerate(sums):
                svg.cell(left + (k + 1) * unit - 12, y, 24, rh - 3, ORANGE, f"+b{b}", 9)
            note = "*out = " + " + ".join(f"b{b}" for b in sums) + ": the order the blocks got there"
        elif combine == "two-pass":
            svg.line(after - 14, y0 + 16, after - 14, y + rh, BLUE, 1, "4 3")
            svg.text(after - 10, y0 + 14, "the first launch ends; a second launch of one block", 9, fill=BLUE)
            note = (f"*out = the sum of b0 to b{grid - 1}, added in an order fixed by index (float4s, tail, shuffles): "
                    "the same order on every run")
        else:
            last = next(b for b, (k, _) in tickets.items() if k == grid - 1)
            note = (f"*out = {t.results[('out', 0)]:.0f}, ticket reset to {t.results[('ticket', 0)]:.0f}; the last "
                    "block adds by index: the same order on every run")
        if combine != "atomic":
            svg.text(left - 8, y + 11, "launch 2" if combine == "two-pass" else f"block {last}", 10, "end", MUTED)
            svg.rect(after, y, 2 * unit, rh - 5, BLUE)
            svg.text(after + 2 * unit + 6, y + 10, "adds out[0..] by index" if combine == "two-pass" else
                     f"then adds partials[{span(e for b, _, _, e in t.cached if b == last)}] (__ldcg)", 9)
        svg.text(left, y + rh + 20, note, 11, fill=CONFLICT if combine == "atomic" else BLUE)
    y, one = top + 3 * panel + 10, br.run("07_multiblock", "one-block", block=32, n=200)
    vectors = sorted({e // 4: tid for b, tid, phase, how, region, e, dest in one.loads}.items())
    svg.text(16, y, f"one_block_kernel (n up to 16 floats per thread): one block of 32 threads sums n = 200, "
             f"{len(vectors)} float4s", 13, weight="bold")
    for v, tid in vectors:
        svg.cell(16 + v * 15, y + 12, 15, 18, BLUE if v < 32 else SKY, tid if v % 4 == 0 else None, 9)
    svg.text(16, y + 48, f"The number: the thread that loads it (every 4th shown). Thread 0 writes *out = "
             f"{one.results[('out', 0)]:.0f} itself:", 11)
    svg.text(16, y + 64, "no memset, no atomic, no ticket, no second launch.", 11)
    svg.legend(16, y + 88, [(BLUE, "a thread's first float4"), (SKY, "its second")])
    return svg

def gemm_tiles_figure(tile=16, m=32, k=48, thread=(5, 2), block=(1, 1), c=5, left=70, top=70):
    """08's block walking along K: the tiles of A and B it loads, and what one thread loads and reads."""
    (tx, ty), (bx, by), a_y, b_x = thread, block, top + k * c + 22, left + k * c + 22
    svg = Svg(a_y + m * c + 60, "08_gemm_tiled: the tiles along K",
              f"08_gemm_tiled: block ({bx}, {by}) walks K in {tile} x {tile} tiles (M = N = {m}, K = {k})")
    t = br.run("08_gemm_tiled", f"tiled-{tile}-0", block=[tile, tile], grid=[m // tile] * 2, n=m, m=m, k=k)
    a, b = [], []  # the (row, col) of A (A[i] = i + 1) and of B (B[i] = -(i + 1)) the thread stores, step by step
    for blk, acc in t.accesses:
        if (blk, acc.tid, acc.op) == (by * (m // tile) + bx, ty * tile + tx, "st") and acc.value:
            (a if acc.value > 0 else b).append(divmod(round(abs(acc.value)) - 1, k if acc.value > 0 else m))
    (row, col), shades = (a[0][0], b[0][1]), [IDLE, "#dde3ea"]
    in_a, in_b = (lambda i: by * tile <= i < (by + 1) * tile), (lambda j: bx * tile <= j < (bx + 1) * tile)
    for x0, y0, rows, cols, fill in (
            (left, a_y, m, k, lambda i, j: ORANGE if (i, j) in a else SKY if i == row else
             shades[j // tile % 2] if in_a(i) else WHITE),
            (b_x, top, k, m, lambda i, j: ORANGE if (i, j) in b else SKY if j == col else
             shades[i // tile % 2] if in_b(j) else WHITE),
            (b_x, a_y, m, m, lambda i, j: CONFLICT if (i, j) == (row, col) else
             IDLE if in_a(i) and in_b(j) else WHITE)):
        for i, j in itertools.product(range(rows), range(cols)):
            svg.rect(x0 + j * c, y0 + i * c, c, c, fill(i, j), "none")
    for x, y, w, h, name in ((left, a_y, k, m, "A"), (b_x, top, m, k, "B"), (b_x, a_y, m, m, "C")):
        svg.rect(x, y, w * c, h * c, "none", INK)
        svg.text(x - 8, y + 12, name, 13, "end", weight="bold")
    for k0 in range(0, k, tile):
        svg.text(left + (k0 + tile / 2) * c, a_y - 6, f"k0 = {k0}", 9, "middle", MUTED)
        svg.text(b_x + m * c + 6, top + (k0 + tile / 2) * c + 3, f"k0 = {k0}", 9, fill=MUTED)
    for i, text in enumerate(["At each step k0 the block loads one tile", "of A and one of B (the grey stripes).",
                              f"Thread (tx {tx}, ty {ty}) stores the orange ones:",
                              ", ".join(f"A[{i}][{j}]" for i, j in a) + ",",
                              ", ".join(f"B[{i}][{j}]" for i, j in b) + ".",
                              "", "It then reads row ty of A's tile and", f"column tx of B's tile (light blue) for its "
                              f"{tile}", f"multiply-adds into C[{row}][{col}] (wine)."]):
        svg.text(left, top + 14 + 16 * i, text, 11)
    svg.legend(left, a_y + m * c + 34, [(ORANGE, "stored by the thread"), (SKY, "read by it from the tiles"),
                                        (CONFLICT, "its element of C")])
    return svg

def gemm_banks_figure(tile=16, cw=14, left=240, top=64, rh=46):  # warp 0's requests in the unpadded and padded tile
    rows = []
    for pad in (0, 1):
        reqs = [r for r in br.gemm_block("08_gemm_tiled", tile, pad) if r.warp == 0]
        rows += [(pad, next(r for r in reqs if (r.array, r.op) == (array, op)),
                  min(w for x in reqs if x.array == array for _, w in x.lanes))
                 for array, op in (("a_tile", "st"), ("b_tile", "st"), ("a_tile", "ld"), ("b_tile", "ld"))]
    svg = Svg(top + rh * len(rows) + 70, "08_gemm_tiled: a warp's requests in the banks", f"08_gemm_tiled, {tile} x "
              f"{tile} tile: warp 0 (ty 0 and 1, tx 0–{tile - 1}), each word it touches in its bank")
    svg.ticks(left, cw, top - 8, range(0, BANKS, 2))
    for y, (pad, r, base) in zip(itertools.count(top, rh), rows):
        lanes_at, banks, w, free = [w - base + i for _, w in r.lanes for i in range(r.width)], r.words_per_bank(), \
            r.wavefronts(), r.conflict_free()
        for layer, b in itertools.product(range(max(lanes_at) // BANKS + 1), range(BANKS)):
            n = lanes_at.count(layer * BANKS + b)
            fill = CONFLICT if len(banks.get((b + base) % BANKS, ())) > 1 else ORANGE if r.op == "st" else SKY
            svg.cell(left + b * cw, y + layer * 16, cw, 15, fill if n else WHITE, n if n > 1 else None, 9)
        svg.text(16, y + 12, f"{'padded' if pad else 'unpadded'}: {r.array} {'store' if r.op == 'st' else 'load'}", 11,
                 weight="bold")
        svg.text(16, y + 27, ("128-bit: k to k + 3 at once; " if r.width > 1 else "") + f"{tile} x {tile + pad} tile",
                 10, fill=MUTED)
        svg.text(left + BANKS * cw + 10, y + 12, plural(w, "wavefront") + (f": {w}-way" if w > free else ""), 11,
                 fill=CONFLICT if w > free else INK)
    y = top + rh * len(rows) + 20
    svg.text(16, y, "One cell per word, by bank (second row: the 32 words after); a number: lanes on that word (a "
             "broadcast).", 10, fill=MUTED)
    svg.legend(16, y + 26, [(ORANGE, "stored"), (SKY, "loaded"), (CONFLICT, "two words in one bank: a conflict")])
    return svg

DIAGRAMS = {"01_naive_tree": tree_figure, "01_naive_banks": lambda: bank_strips("01_naive"),
            "02_grid_stride_loop": grid_stride_figure, "03_padding_layout": layout_figure,
            "03_padding_banks": lambda: bank_strips("03_padding"), "04_warp_unroll_steps": warp_steps_figure,
            "05_shuffle_steps": shuffle_figure, "06_float4_split": split_figure, "06_float4_loads": loads_figure,
            "07_multiblock_combines": combines_figure, "08_gemm_tiled_tiles": gemm_tiles_figure,
            "08_gemm_tiled_banks": gemm_banks_figure}

def drawn():
    return {f"{name}.svg": draw().svg() for name, draw in DIAGRAMS.items()}

def stale_diagrams(directory):  # what --check reports: a picture missing from docs/img/, or not what the runs draw
    old = {p.name: p.read_text() for p in pathlib.Path(directory).glob("*.svg")}
    return [f"docs/img/{name} " + ("differs from what maint/diagrams.py draws" if name in old else "is missing")
            + ": run ./maint/do docs" for name, text in drawn().items() if old.get(name) != text]
