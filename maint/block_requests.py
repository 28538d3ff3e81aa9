"""What one block of each stage does in shared memory, from a host run of the stage's own code (host_run.py): the lanes
of one warp at the same (phase, seq) make one warp-wide request. Where the machine code touches shared memory otherwise
than the source, COMPILED says so with a test of docs/results/sass_<stage>.txt, and compiled_requests() applies it."""
import functools
import itertools
import re
import types
from collections import Counter, defaultdict, namedtuple

from scripts import host_run

WARP, BANKS = 32, 32  # shared memory: 32 banks of one 32-bit word; word w lives in bank w % 32
ACCESS = {"ld": "loads", "st": "stores"}

# A shared-memory access of the log: op "ld" or "st", the thread, its phase and seq, the array, byte offset (its word:
# byte // 4) and size, the stage file's line, the value.
Access = namedtuple("Access", "op tid phase seq array byte bytes line value")

# The log lines events() reads (scripts/host/cuda_host.hpp writes them): kind: (its list, its fields after the block)
LOG = {"S": ("accesses", lambda f: [Access(f[0], *map(int, f[1:4]), f[4], *map(int, f[5:8]), float(f[8]))]),
       "X": ("shuffles", lambda f: [*map(int, f[:4]), float(f[4]), float(f[5])]),
       "G": ("loads", lambda f: [int(f[0]), int(f[1]), f[2], f[3], int(f[4]), f[5]]),
       "A": ("atomics", lambda f: [int(f[0])]),
       "T": ("tickets", lambda f: [int(f[0]), int(f[1]), [int(x) for x in f[2].split(",") if x != "-"]]),
       "L": ("cached", lambda f: [int(f[0]), f[1], int(f[2])])}

@functools.lru_cache(maxsize=256)
def events(log):
    """What a host run's log says its threads did: accesses [(block, Access)], shuffles [(block, tid, phase, kind, src,
    value, result)], loads [(block, tid, phase, how, region, element, dest)], atomics [(block, tid)],
    tickets [(block, tid, ticket, written elements)], cached [(block, tid, region, element)]:
    the __ldcg reads."""
    e, block = types.SimpleNamespace(**{name: [] for name, _ in LOG.values()}), None
    for line in log.splitlines():
        kind, *f = line.split()
        if kind == "B":
            block = int(f[0])
        elif kind in LOG:
            getattr(e, LOG[kind][0]).append((block, *LOG[kind][1](f)))
    return e

def run(stage, entry, **options):
    """A host run (host_run.run) with its log read: its results, readers and sums, and the events()."""
    t = host_run.run(stage, entry, **options)
    return types.SimpleNamespace(**vars(t), **vars(events(t.log)))

def of_block(stage, entry, **options):  # the shared accesses of block 0 of a host run
    return [a for b, a in run(stage, entry, **options).accesses if b == 0]

class Request(namedtuple("Request", "phase seq line array op warp lanes width")):
    """One warp-wide shared-memory instruction: the seq-th access of the phase-th stretch between barriers; lanes
    ((lane, first word), ...) of the active lanes, width words each (1: 32-bit, 4: 128-bit)."""

    @property
    def words(self):  # {thread of the block: its first word}
        return {WARP * self.warp + lane: word for lane, word in self.lanes}

    def words_per_bank(self):
        banks = defaultdict(set)
        for w in (word + i for _, word in self.lanes for i in range(self.width)):
            banks[w % BANKS].add(w)
        return banks

    def conflict_free(self):
        """32-bit: one wavefront. 128-bit load: four, two where every lane shares its address with lane ^ 1 or lane ^ 2
        (forums.developer.nvidia.com/t/77228)."""
        if self.width == 1:
            return 1
        assert self.width == 4 and self.op == "ld", "the stages here make 32-bit accesses and 128-bit loads only"
        at = dict(self.lanes)
        return 2 if any(all(at.get(lane ^ m, w) == w for lane, w in at.items()) for m in (1, 2)) else 4

    def wavefronts(self):  # distinct words in the busiest bank (lanes on one word share it), at least conflict_free()
        return max(max(map(len, self.words_per_bank().values())), self.conflict_free())

def requests(accesses):
    """The warp-wide requests of one block's accesses, in program order (phase, then the first lane's place in it).
    One request: the lanes of one warp that made the k-th access of one kind on one source line in the same stretch
    between barriers (lanes that skip an access, behind an `if`, make none and leave the others' k alone)."""
    groups, nth, out = defaultdict(list), defaultdict(itertools.count), []
    for a in sorted(accesses, key=lambda a: (a.tid, a.phase, a.seq)):
        k = next(nth[(a.tid, a.phase, a.line, a.op)])
        groups[(a.phase, a.line, a.op, k, a.tid // WARP)].append(a)
    for (phase, line, op, k, warp), group in groups.items():
        kinds = {(a.array, a.bytes) for a in group}
        if len(kinds) != 1:
            raise host_run.HostRunError(f"line {line}: the lanes of warp {warp} touch different arrays at one "
                                        f"instruction: {sorted(kinds)}")
        (array, size), = kinds
        out.append(Request(phase, min(a.seq for a in group), line, array, op, warp,
                           tuple(sorted((a.tid % WARP, a.byte // 4) for a in group)), max(1, size // 4)))
    return sorted(out, key=lambda r: (r.phase, r.seq, r.warp))

def by_phase(reqs, steps=False):
    """[[requests of one phase], ...] of requests in program order; with steps, the tree's (each reads and stores)."""
    phases = [list(rs) for _, rs in itertools.groupby(reqs, key=lambda r: r.phase)]
    return [rs for rs in phases if not steps or {"ld", "st"} <= {r.op for r in rs}]

def line_of(stage, text):
    """The number of the one line of the stage file whose code (its comment left out) holds text."""
    found = [i for i, line in enumerate(host_run.stage_path(stage).read_text().splitlines(), 1)
             if text in line.split("//", 1)[0]]
    assert len(found) == 1, f"{stage}: {len(found)} lines hold {text!r}"
    return found[0]

def predicated(sass):  # the tree's shared loads (between the first and the last BAR.SYNC) carry a predicate (@P1 LDS)
    lds = [line for line in sass[sass.find("BAR.SYNC"):sass.rfind("BAR.SYNC")].splitlines() if " LDS" in line]
    return bool(lds) and all("*/ @" in line for line in lds)

def lds_widths(sass):  # {(T, P): {"LDS": n, "LDS.128": m}} of each gemm_kernel<T, P> (sm_75: LDS.U, LDS.U.128)
    counts = {}
    for function in sass.split("Function :")[1:]:
        if m := re.match(r"[^\n]*gemm_kernelILi(\d+)ELi(\d+)EEv", function):
            counts[int(m[1]), int(m[2])] = Counter("LDS" + w for w in re.findall(r"\bLDS(?:\.U)?(\.\d+)?\b", function))
    return counts

# What the compiler changed: (what a page says of it, a test of the stage's saved SASS that shows it).
FINAL_READ = ("`return smem[0]` hands the sum to every thread, but only thread 0 uses it: the compiled kernel reads "
              "it in thread 0 alone, after `@P0 EXIT`", lambda sass: -1 < sass.find("@P0 EXIT") < sass.rfind(" LDS"))
PREDICATED_TREE = ("the tree's loads and store are predicated (`@!P1 LDS`), not branched around: every warp issues "
                   "them at every step, and a warp none of whose threads adds takes no wavefront", predicated)
BRANCHED_TREE = ("the tree branches around its loads and store: a warp none of whose threads adds issues nothing",
                 lambda sass: not predicated(sass))
VECTOR_A_TILE = ("the compiler reads `a_tile[ty][k..k+3]` with one 128-bit load (`LDS.128`) where a tile row starts "
                 "on a 16-byte boundary, so in the unpadded tile only", lambda sass: bool(w := lds_widths(sass))
                 and all(n["LDS.128"] == (t // 4 if (t + p) % 4 == 0 else 0) for (t, p), n in w.items()))  # T / 4 or 0
COMPILED = {"01_naive": [FINAL_READ, PREDICATED_TREE], "02_grid_stride": [FINAL_READ, PREDICATED_TREE],
            "03_padding": [FINAL_READ, BRANCHED_TREE], "04_warp_unroll": [BRANCHED_TREE],
            "08_gemm_tiled": [VECTOR_A_TILE]}
PREDICATED = {stage for stage, facts in COMPILED.items() if PREDICATED_TREE in facts}

def compiled_requests(stage, reqs, tile=None, pad=None):
    facts = COMPILED.get(stage, [])
    if FINAL_READ in facts:  # the final load in thread 0 alone
        final = (line_of(stage, "return smem[0]"), "ld")
        reqs = [r._replace(lanes=r.lanes[:1]) if (r.line, r.op) == final else r for r in reqs
                if (r.line, r.op) != final or (r.warp, r.lanes[0][0]) == (0, 0)]
    if VECTOR_A_TILE in facts and (tile + pad) % 4 == 0:  # each warp's four a_tile loads (words w to w + 3) as one
        runs, wide, merged = defaultdict(list), {}, set()
        for r in reqs:
            if (r.array, r.op) == ("a_tile", "ld"):
                runs[(r.warp, r.phase)].append(r)
        for four in (rs[j:j + 4] for rs in runs.values() for j in range(0, len(rs), 4)):
            base = dict(four[0].lanes)
            if [dict(r.lanes) for r in four] != [{lane: w + i for lane, w in base.items()} for i in range(4)] or any(
                    w % 4 for w in base.values()):
                raise host_run.HostRunError(f"08_gemm_tiled: warp {four[0].warp}'s a_tile loads at line {four[0].line} "
                                            "are not four consecutive aligned words a lane, as LDS.128 reads them")
            wide[four[0]], merged = four[0]._replace(width=4), merged | set(four[1:])
        reqs = [wide.get(r, r) for r in reqs if r not in merged]
    return reqs

def reduce_block(stage, block, entry=None):
    """The requests of block 0 of a reduce stage's kernel, one element per thread, as the machine code makes them."""
    return compiled_requests(stage, requests(of_block(stage, entry or host_run.kernel_entries(stage)[0], block=block,
                                                      n=block)))

def gemm_block(stage, tile, pad, compiled=True):
    """The requests of one block of 08's gemm_kernel<tile, pad>, over one step along K."""
    launched = host_run.tiles(host_run.stage_path(stage).read_text())
    if (tile, pad) not in launched:
        raise host_run.HostRunError(f"{stage}: the profile ran gemm_kernel<{tile}, {pad}>, which the stage file no "
                                    f"longer launches (it launches {', '.join(f'<{t}, {p}>' for t, p in launched)})")
    reqs = requests(of_block(stage, f"tiled-{tile}-{pad}", block=[tile, tile], n=tile, m=tile, k=tile))
    return compiled_requests(stage, reqs, tile, pad) if compiled else reqs

# The rows of docs/results/ncu.csv the host runs are held to: (stage, variant).
PROFILED = [("01_naive", "tree"), *((s, v) for s in ("02_grid_stride", "03_padding", "04_warp_unroll", "05_shuffle",
                                                     "06_float4", "07_multiblock") for v in ("stream", "tree")),
            ("08_gemm_tiled", "tiled"), ("08_gemm_tiled", "tiled padded")]
COUNTS = ("instructions", "wavefronts", "ideal")  # ideal: the wavefronts with no bank conflict

def launch(row, key=lambda r: r.op):
    """A row of ncu.csv: one block's requests and their totals over the launch (times the blocks, and the GEMM's steps
    along K) {key(request): {COUNTS}}; in a predicated tree every warp issues."""
    (gx, gy, gz), (bx, by, bz) = ([int(x) for x in row[k].strip("() ").split(",")] for k in ("grid", "block"))
    if row["stage"] == "08_gemm_tiled":
        pad = int(re.search(r"gemm_kernel<\d+, (\d+)>", row["kernel"]).group(1))
        reqs, repeat = gemm_block(row["stage"], bx, pad), gx * gy * gz * -(-int(row["n_or_size"]) // bx)
    else:
        template = re.search(r"reduce_kernel<(\d+)>", row["kernel"])  # reduce_kernel<1>: the Combine at index 1
        entry = host_run.combine_names()[int(template.group(1))] if template else None
        reqs, repeat = reduce_block(row["stage"], bx * by * bz, entry=entry), gx * gy * gz
    warps = -(-bx * by // WARP) if row["stage"] in PREDICATED else 0
    tree = {(r.phase, r.seq, r.op) for rs in by_phase(reqs, steps=True) for r in rs} if warps else set()
    out, issued = {}, set()
    for r in reqs:
        t, step = out.setdefault(key(r), dict.fromkeys(COUNTS, 0)), (key(r), r.phase, r.seq, r.op)
        t["wavefronts"] += r.wavefronts() * repeat
        t["ideal"] += r.conflict_free() * repeat
        t["instructions"] += (0 if step in issued else warps * repeat) if step[1:] in tree else repeat
        issued.add(step)
    return reqs, out

class Comparison(namedtuple("Comparison", "stage variant op host measured line text steps", defaults=(0, "", ()))):
    """A launch's loads or stores (op) on one source line (text; line 0: gone from the file; steps: (phase, requests,
    wavefronts)), host run against Nsight Compute's source counters (ncu_source.csv), exactly. host None: no host run
    (text: why)."""

    def problems(self):
        if self.host is None:
            return [self.text]
        wrong = [f"{k} {self.measured[k]:,} measured, {self.host[k]:,} in the host run" for k in COUNTS
                 if self.host[k] != self.measured[k]]
        if not wrong:
            return []
        where = f"line {self.line}" if self.line else "a line the stage file no longer has"
        steps = "; ".join(f"phase {p}: {n} requests, {w} wavefronts" for p, n, w in self.steps[:12]) or "none"
        return [f"{self.stage} ({self.variant}) {where} `{self.text[:70]}`, {ACCESS[self.op]}: {', '.join(wrong)}. "
                f"The host run's steps on this line: {steps}"]

def compare_lines(row, source_rows):
    """A Comparison of every line of a profiled launch that touches shared memory; lines are matched by their code
    (comments and spaces left out) and its place among the lines of that code, so that a comment moves nothing."""
    def by_code(numbered):  # {line number: (code, k)}: the k-th line of that code
        nth = defaultdict(itertools.count)
        codes = ((number, " ".join(re.sub(r"//.*", "", text).split())) for number, text in sorted(numbered))
        return {number: (code, next(nth[code])) for number, code in codes}
    path, row_key = host_run.stage_path(row["stage"]), (row["stage"], row["variant"])
    here = by_code(enumerate(path.read_text().splitlines(), 1))
    try:
        reqs, host = launch(row, key=lambda r: (here[r.line], r.op))
    except host_run.HostRunError as e:
        return [Comparison(row["stage"], row["variant"], None, None, None, text=str(e))]
    mine = [s for s in source_rows if (s["stage"], s["variant"], s["file"]) == (*row_key, path.name)]
    there, measured = by_code({(int(s["line"]), s["source"]) for s in mine}), defaultdict(dict.fromkeys(COUNTS, 0).copy)
    for s in mine:
        for k in COUNTS:
            measured[(there[int(s["line"])], {"Load": "ld", "Store": "st"}[s["op"]])][k] += int(float(s[k]))
    number, zero, out = {code: n for n, code in here.items()}, dict.fromkeys(COUNTS, 0), []
    for code, op in sorted(set(host) | set(measured), key=lambda key: (number.get(key[0], 0), key[1])):
        made = [r for r in reqs if (here[r.line], r.op) == (code, op)]
        out.append(Comparison(row["stage"], row["variant"], op, host.get((code, op), zero),
                              measured.get((code, op), zero), line=number.get(code, 0), text=code[0],
                              steps=[(rs[0].phase, len(rs), sum(r.wavefronts() for r in rs)) for rs in by_phase(made)]))
    return out

# One block of a reduce stage's tree at n = block: steps {s: [requests of the step where thread 0 adds element s]},
# element {word: its element before the tree}, warp_phases {phases only warp 0 reaches, the other warps gone}.
Tree = namedtuple("Tree", "steps element warp_phases")

def tree(stage, block):
    accesses = of_block(stage, host_run.kernel_entries(stage)[0], block=block, n=block)
    element = {a.byte // 4: round(a.value) - 1 for a in accesses if a.phase == 0 and a.op == "st"}  # in[i] = i + 1
    steps = {}
    for rs in by_phase(compiled_requests(stage, requests(accesses)), steps=True):
        thread, word = next(iter(next(r for r in rs if r.op == "st").words.items()))  # the first store's first lane
        steps[element[other_reads(rs)[thread]] - element[word]] = rs
    others = max((a.phase for a in accesses if a.tid >= WARP), default=-1)
    return Tree(steps, element, {a.phase for a in accesses if a.tid < WARP and a.phase > others})

def warp_steps(t):  # 04's steps that warp 0 runs alone
    return {s: rs for s, rs in t.steps.items() if all(r.warp == 0 for r in rs)}

def own_read(reqs):  # the first load request of a step that reads the words its warp then writes (smem[index] of +=)
    stores = {(r.warp, r.lanes) for r in reqs if r.op == "st"}
    return next(r for r in reqs if r.op == "ld" and (r.warp, r.lanes) in stores)

def writes(reqs):  # {thread: word} of the stores of a step
    return {t: w for r in reqs if r.op == "st" for t, w in r.words.items()}

def other_reads(reqs):  # {thread: word} of the loads of a step that read a word the thread does not write
    own = writes(reqs)
    return {t: w for r in reqs if r.op == "ld" for t, w in r.words.items() if own.get(t) != w}
