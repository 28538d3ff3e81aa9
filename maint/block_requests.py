"""What one block of each stage does in shared memory, from a host run of the stage's own code (host_run.py).

The host run logs every shared access with its thread, the stretch between barriers it falls in (phase) and
its place in that stretch (seq); the lanes of one warp with the same (phase, seq) made one warp-wide request.
From those requests come the pictures of the stage pages (diagrams.py), the per-step bank conflicts and the
totals that maint/tests/check_thread_models.py holds against Nsight Compute.

The host run executes the source. Where the machine code touches shared memory differently (the compiler reads
`return smem[0]` in thread 0 alone, or merges four a_tile reads into one 128-bit load), COMPILED says so, with
a test of docs/results/sass_<stage>.txt that shows it (maint/tests/check_saved_sass.py holds those files to the
current kernels), and compiled_requests() applies it to the host run's requests; compiled=False keeps the
source's requests, for the pages to show what that difference is worth.
"""
import re
from collections import defaultdict
from dataclasses import dataclass, replace

from scripts import host_run

WARP = 32
BANKS = 32  # shared memory: 32 banks of one 32-bit word; word w lives in bank w % 32


@dataclass(frozen=True)
class Request:
    """One warp-wide shared-memory instruction: the first word each active lane touches, and how many words."""
    phase: int  # which stretch between barriers (of this warp: __syncwarp and shuffles count too)
    seq: int  # which access of that stretch
    line: int  # the stage file's line that made it
    array: str
    op: str  # "ld" or "st"
    warp: int
    lanes: tuple  # ((lane, word), ...) for the active lanes only
    width: int = 1  # words per lane: 1 (32-bit) or 4 (128-bit)

    def words_per_bank(self):
        banks = defaultdict(set)
        for _, word in self.lanes:
            for w in range(word, word + self.width):
                banks[w % BANKS].add(w)
        return {b: sorted(ws) for b, ws in banks.items()}

    def conflict_free(self):
        """The wavefronts this request takes with no bank conflict. A 32-bit access: one. A 128-bit load returns
        four registers at one register (128 bytes) per wavefront, two where every lane shares its address with
        lane ^ 1 or with lane ^ 2 (NVIDIA's description: forums.developer.nvidia.com/t/77228)."""
        if self.width == 1:
            return 1
        assert self.width == 4 and self.op == "ld", "the stages here make 32-bit accesses and 128-bit loads only"
        at = dict(self.lanes)
        paired = any(all(at.get(lane ^ m, word) == word for lane, word in at.items()) for m in (1, 2))
        return 2 if paired else 4

    def wavefronts(self):
        """Distinct words in the busiest bank (lanes reading one word share it: a broadcast), at least the
        conflict-free count."""
        return max(max(len(ws) for ws in self.words_per_bank().values()), self.conflict_free())

    @property
    def threads(self):
        return [WARP * self.warp + lane for lane, _ in self.lanes]


def requests(accesses):
    """The warp-wide requests of one block's accesses, in program order (phase, then the first lane's place in it)."""
    out = []
    for (phase, line, op, k, warp), group in host_run.requests_by_warp(accesses).items():
        kinds = {(a.array, a.bytes) for a in group}
        if len(kinds) != 1:
            raise host_run.HostRunError(f"line {line}: the lanes of warp {warp} touch different arrays at one "
                                        f"instruction: {sorted(kinds)}")
        (array, size), = kinds
        out.append(Request(phase, min(a.seq for a in group), line, array, op, warp,
                           tuple(sorted((a.tid % WARP, a.word) for a in group)), max(1, size // 4)))
    return sorted(out, key=lambda r: (r.phase, r.seq, r.warp))


def by_phase(reqs):
    """{phase: [requests]} in program order."""
    out = {}
    for r in reqs:
        out.setdefault(r.phase, []).append(r)
    return out


def loop_steps(reqs):
    """{step: [requests]}: the phases of a tree, numbered from 1, that hold loads (each step reads, then adds)."""
    steps = [rs for rs in by_phase(reqs).values() if any(r.op == "ld" for r in rs) and any(r.op == "st" for r in rs)]
    return {k: rs for k, rs in enumerate(steps, 1)}


def source_lines(stage):
    return host_run.stage_path(stage).read_text().splitlines()


def line_of(stage, text):
    """The number of the one line of the stage file whose code (its comment left out) holds text."""
    found = [i for i, line in enumerate(source_lines(stage), 1) if text in line.split("//", 1)[0]]
    assert len(found) == 1, f"{stage}: {len(found)} lines hold {text!r}"
    return found[0]


# ---- what the compiler changed, each shown by the machine code ----------------------------------------------------

def _final_read_in_thread_0(lines):
    """The last shared load comes after `@P0 EXIT`: threads other than 0 have left."""
    lds = [i for i, l in enumerate(lines) if " LDS" in l]
    exits = [i for i, l in enumerate(lines) if "@P0 EXIT" in l]
    return bool(lds and exits) and exits[0] < lds[-1]


def _lds128_where_aligned(lines):
    """Every tiled instantiation <T, P> holds T / 4 LDS.128 when (T + P) % 4 == 0, none otherwise."""
    counts, name = {}, None
    for line in lines:
        if line.startswith("Function :"):
            name = line.split("gemm_kernelILi")[1].split("EEv")[0].split("ELi") if "gemm_kernelILi" in line else None
            if name:
                counts[tuple(int(x) for x in name)] = 0
        elif name and re.search(r"\bLDS(\.U)?\.128\b", line):  # LDS.U.128 on sm_75
            counts[tuple(int(x) for x in name)] += 1
    return bool(counts) and all(n == (t // 4 if (t + p) % 4 == 0 else 0) for (t, p), n in counts.items())


def _tree_predicated(lines):
    """The tree's shared loads (between the first and the last BAR.SYNC) carry a predicate (@P1 LDS)."""
    bars = [i for i, l in enumerate(lines) if "BAR.SYNC" in l]
    lds = [l.split("*/ ", 1)[1] for l in lines[bars[0]:bars[-1]] if " LDS" in l] if bars else []
    return bool(lds) and all(l.startswith("@") for l in lds)


def _tree_branched(lines):
    return not _tree_predicated(lines)


FINAL_READ = ("`return smem[0]` hands the sum to every thread, but only thread 0 uses it: the compiled kernel reads "
              "it in thread 0 alone, after `@P0 EXIT`", _final_read_in_thread_0)
PREDICATED_TREE = ("the tree's loads and store are predicated (`@!P1 LDS`), not branched around: every warp issues "
                   "them at every step, and a warp none of whose threads adds takes no wavefront", _tree_predicated)
BRANCHED_TREE = ("the tree branches around its loads and store: a warp none of whose threads adds issues nothing",
                 _tree_branched)
VECTOR_A_TILE = ("the compiler reads `a_tile[ty][k..k+3]` with one 128-bit load (`LDS.128`) where a tile row starts "
                 "on a 16-byte boundary, so in the unpadded tile only", _lds128_where_aligned)
COMPILED = {
    "01_naive": [FINAL_READ, PREDICATED_TREE],
    "02_grid_stride": [FINAL_READ, PREDICATED_TREE],
    "03_padding": [FINAL_READ, BRANCHED_TREE],
    "04_warp_unroll": [BRANCHED_TREE],
    "08_gemm_tiled": [VECTOR_A_TILE],
}
PREDICATED = {stage for stage, facts in COMPILED.items() if PREDICATED_TREE in facts}


def _thread_0_only(stage, reqs):
    final = line_of(stage, "return smem[0]")
    out = []
    for r in reqs:
        if r.line == final and r.op == "ld":
            lanes = tuple((lane, w) for lane, w in r.lanes if r.warp == 0 and lane == 0)
            if lanes:
                out.append(replace(r, lanes=lanes))
        else:
            out.append(r)
    return out


def _vector_a_tile(reqs, tile, pad):
    """Each warp's four consecutive a_tile loads of a stretch (every lane at words w, w + 1, w + 2, w + 3, w on a
    16-byte boundary) as one 128-bit load, where rows are 16-byte aligned."""
    if (tile + pad) % 4:
        return reqs
    runs = defaultdict(list)
    for r in reqs:
        if r.array == "a_tile" and r.op == "ld":
            runs[(r.warp, r.phase)].append(r)
    merged = {}
    for key, rs in runs.items():
        for j in range(0, len(rs), 4):
            four = rs[j:j + 4]
            base = dict(four[0].lanes)
            if len(four) != 4 or any(w % 4 for w in base.values()) or any(
                    dict(r.lanes) != {lane: w + i for lane, w in base.items()} for i, r in enumerate(four)):
                raise host_run.HostRunError(f"08_gemm_tiled: warp {key[0]}'s a_tile loads at line {four[0].line} are "
                                            f"not four consecutive aligned words a lane, as LDS.128 reads them")
            merged[four[0]] = replace(four[0], width=4)
            merged.update({r: None for r in four[1:]})
    return [merged.get(r, r) for r in reqs if merged.get(r, r) is not None]


def compiled_requests(stage, reqs, tile=None, pad=None):
    facts = COMPILED.get(stage, [])
    if FINAL_READ in facts:
        reqs = _thread_0_only(stage, reqs)
    if VECTOR_A_TILE in facts:
        reqs = _vector_a_tile(reqs, tile, pad)
    return reqs


# ---- one block of a stage, from its host run -----------------------------------------------------------------------

def default_entry(stage):
    return host_run.kernel_entries(stage)[0]


def reduce_block(stage, block, compiled=True, entry=None, n=None):
    """The requests of block 0 of a reduce stage's kernel, one element per thread (n = block) unless n is given."""
    trace = host_run.run(stage, entry or default_entry(stage), block=block, n=n or block)
    reqs = requests(trace.of_block(0))
    return compiled_requests(stage, reqs) if compiled else reqs


def gemm_block(stage, tile, pad, compiled=True, k_tiles=1):
    """The requests of one block of 08's gemm_kernel<tile, pad>, over k_tiles steps along K."""
    launched = host_run.tiles(host_run.stage_path(stage).read_text())
    if (tile, pad) not in launched:
        raise host_run.HostRunError(f"{stage}: the profile ran gemm_kernel<{tile}, {pad}>, which the stage file no "
                                    f"longer launches (it launches {', '.join(f'<{t}, {p}>' for t, p in launched)})")
    trace = host_run.run(stage, f"tiled-{tile}-{pad}", block=[tile, tile], n=tile, m=tile, k=tile * k_tiles)
    reqs = requests(trace.of_block(0))
    return compiled_requests(stage, reqs, tile, pad) if compiled else reqs


# ---- the host run against the profiler ------------------------------------------------------------------------------

# The rows of docs/results/ncu.csv the host runs are held to: (stage, variant).
PROFILED = [("01_naive", "tree"), ("02_grid_stride", "stream"), ("02_grid_stride", "tree"), ("03_padding", "stream"),
            ("03_padding", "tree"), ("04_warp_unroll", "stream"), ("04_warp_unroll", "tree"), ("05_shuffle", "stream"),
            ("05_shuffle", "tree"), ("06_float4", "stream"), ("06_float4", "tree"), ("07_multiblock", "stream"),
            ("07_multiblock", "tree"), ("08_gemm_tiled", "tiled"), ("08_gemm_tiled", "tiled padded")]

# The aggregate conflict counters may exceed the host run's by this share of the conflict-free wavefronts: they count
# more than the kernel's instructions do (model_pages.tolerance_note() shows it from the results).
TOLERANCE = 0.10
METRICS = {"ld": ("smsp__inst_executed_op_shared_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                  "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
           "st": ("smsp__inst_executed_op_shared_st.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
                  "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum")}


def dims(text):
    """'(16, 16, 1)' -> [16, 16, 1]."""
    return [int(x) for x in text.strip("() ").split(",")]


def profiled_entry(row):
    """The host-run entry of the kernel a row of ncu.csv profiled: reduce_kernel<1> is the Combine at index 1."""
    template = re.search(r"reduce_kernel<(\d+)>", row["kernel"])
    if not template:
        return default_entry(row["stage"])
    return host_run.combine_names()[int(template.group(1))]


def predicated_warps(row):
    """The warps of one block of a launch whose tree is predicated (every warp issues each step), else None."""
    return -(-dims(row["block"])[0] * dims(row["block"])[1] // WARP) if row["stage"] in PREDICATED else None


def launch_requests(row, compiled=True):
    """The requests of one block of a profiled launch, and how many times the launch repeats them (its blocks, and
    for the GEMM its steps along K, each of which makes the same requests: the tiles are stored whole even at the
    edges)."""
    blocks = 1
    for d in dims(row["grid"]):
        blocks *= d
    bx, by, bz = dims(row["block"])
    stage = row["stage"]
    if stage == "08_gemm_tiled":
        pad = int(re.search(r"gemm_kernel<\d+, (\d+)>", row["kernel"]).group(1))
        steps = -(-int(row["n_or_size"]) // bx)
        return gemm_block(stage, bx, pad, compiled), blocks * steps
    return reduce_block(stage, bx * by * bz, compiled, profiled_entry(row)), blocks


def totals(reqs, repeat=1, warps=None, steps_of=None):
    """{op: {"requests", "instructions", "wavefronts", "conflict_free", "conflicts"}} over the requests, times
    repeat. With warps (a predicated tree), every warp of the block issues each tree step's instructions (the tree's
    steps are found in steps_of, all of the block's requests, when reqs is a part of them)."""
    out = {op: {"requests": 0, "instructions": 0, "wavefronts": 0, "conflict_free": 0} for op in METRICS}
    tree = {(r.phase, r.seq, r.op) for rs in loop_steps(steps_of or reqs).values() for r in rs} if warps else set()
    steps = {(r.phase, r.seq, r.op) for r in reqs} & tree
    for r in reqs:
        t = out[r.op]
        t["requests"] += repeat
        t["instructions"] += repeat if (r.phase, r.seq, r.op) not in steps else 0
        t["wavefronts"] += r.wavefronts() * repeat
        t["conflict_free"] += r.conflict_free() * repeat
    for phase, seq, op in steps:
        out[op]["instructions"] += warps * repeat
    for t in out.values():
        t["conflicts"] = t["wavefronts"] - t["conflict_free"]
    return out


@dataclass
class Comparison:
    stage: str
    variant: str
    op: str
    blocks: int
    model: dict
    instructions: float
    wavefronts: float
    conflicts: float

    @property
    def conflict_free(self):
        return self.wavefronts - self.conflicts

    @property
    def excess(self):
        """Measured conflicts beyond the host run's, as a share of the conflict-free wavefronts."""
        return (self.conflicts - self.model["conflicts"]) / max(self.model["conflict_free"], 1)

    def problems(self):
        where = f"{self.stage} ({self.variant}) {'loads' if self.op == 'ld' else 'stores'}"
        out = []
        if self.instructions != self.model["instructions"]:
            out.append(f"{where}: {self.instructions:,.0f} instructions measured, {self.model['instructions']:,} in "
                       f"the host run")
        if self.conflict_free != self.model["conflict_free"]:
            out.append(f"{where}: conflict-free wavefronts {self.conflict_free:,.0f} measured, "
                       f"{self.model['conflict_free']:,} in the host run")
        if abs(self.excess) > TOLERANCE:
            out.append(f"{where}: bank conflicts {self.conflicts:,.0f} measured, {self.model['conflicts']:,} in the "
                       f"host run ({100 * self.excess:+.1f}% of the conflict-free wavefronts; the tolerance is "
                       f"±{100 * TOLERANCE:.0f}%)")
        return out


def compare(row, compiled=True):
    """The host run of one profiled launch against its row of ncu.csv: one Comparison for loads, one for stores."""
    reqs, repeat = launch_requests(row, compiled)
    warps = predicated_warps(row)
    model = totals(reqs, repeat, warps)
    blocks = 1
    for d in dims(row["grid"]):
        blocks *= d
    return [Comparison(row["stage"], row["variant"], op, blocks, model[op], *(float(row[m]) for m in METRICS[op]))
            for op in METRICS]


# ---- the host run against the profiler, line by line -----------------------------------------------------------------

@dataclass
class LineComparison:
    """One source line's shared-memory loads or stores: the host run's against Nsight Compute's source counters
    (the per-instruction counters of docs/results/ncu_source.csv, summed over the SASS instructions of the line)."""
    stage: str
    variant: str
    line: int
    op: str
    host: dict  # instructions, wavefronts, ideal
    measured: dict
    steps: list  # the host run's (phase, requests, wavefronts) on this line, for the message
    text: str = ""  # the line's text

    def problems(self):
        if self.host == self.measured:
            return []
        text = self.text
        what = ", ".join(f"{k} {self.measured[k]:,} measured, {self.host[k]:,} in the host run"
                         for k in ("instructions", "wavefronts", "ideal") if self.host[k] != self.measured[k])
        steps = "; ".join(f"phase {p}: {n} requests, {w} wavefronts" for p, n, w in self.steps[:12]) or "none"
        where = f"line {self.line}" if self.line else "a line the stage file no longer has"
        return [f"{self.stage} ({self.variant}) {where} `{text[:70]}`, "
                f"{'loads' if self.op == 'ld' else 'stores'}: {what}. The host run's steps on this line: {steps}"]


OPS = {"Load": "ld", "Store": "st"}


def line_totals(reqs, repeat, warps):
    """{(line, op): {instructions, wavefronts, ideal}} of the host run's requests, times repeat."""
    out = {}
    for line in sorted({r.line for r in reqs}):
        mine = [r for r in reqs if r.line == line]
        for op, t in totals(mine, repeat, warps if loop_steps(reqs) else None, steps_of=reqs).items():
            if t["requests"]:
                out[(line, op)] = {"instructions": t["instructions"], "wavefronts": t["wavefronts"],
                                   "ideal": t["conflict_free"]}
    return out


def code_of(line):
    """A line's code: its text without a // comment, spaces collapsed."""
    return " ".join(re.sub(r"//.*", "", line).split())


def _by_text(numbered):
    """{(line number, text)} -> {line number: (code, k)}: the k-th line of the file with that code. Lines are
    matched by code, so that a comment, on a line of its own or after the code, moves nothing."""
    out, seen = {}, defaultdict(int)
    for number, text in sorted(numbered):
        code = code_of(text)
        out[number] = (code, seen[code])
        seen[code] += 1
    return out


def compare_lines(row, source_rows, compiled=True):
    """Every line of one profiled launch that touches shared memory, in the host run or in the profile."""
    try:
        reqs, repeat = launch_requests(row, compiled)
    except host_run.HostRunError as e:
        return [Failure(str(e))]
    warps = predicated_warps(row)
    lines = source_lines(row["stage"])
    here = _by_text((i, t.strip()) for i, t in enumerate(lines, 1))
    host = {(here[line], op): t for (line, op), t in line_totals(reqs, repeat, warps).items()}
    name = host_run.stage_path(row["stage"]).name
    mine = [s for s in source_rows if s["stage"] == row["stage"] and s["variant"] == row["variant"]
            and s["file"] == name]
    there = _by_text({(int(s["line"]), s["source"]) for s in mine})
    measured = {}
    for s in mine:
        m = measured.setdefault((there[int(s["line"])], OPS[s["op"]]), {"instructions": 0, "wavefronts": 0, "ideal": 0})
        for k in m:
            m[k] += int(float(s[k]))
    zero = {"instructions": 0, "wavefronts": 0, "ideal": 0}
    number = {v: k for k, v in here.items()}
    out = []
    for key in sorted(set(host) | set(measured), key=lambda key: (number.get(key[0], 0), key[1])):
        (text, k), op = key
        line = number.get((text, k), 0)
        steps = [(p, len(rs), sum(r.wavefronts() for r in rs)) for p, rs in by_phase(
            [r for r in reqs if r.line == line and r.op == op]).items()]
        out.append(LineComparison(row["stage"], row["variant"], line, op, host.get(key, zero),
                                  measured.get(key, zero), steps, text))
    return out


@dataclass
class Failure:
    """A launch the host run could not make at all; its one problem says why."""
    message: str

    def problems(self):
        return [self.message]


# ---- a tree, as the pictures and pages show it ------------------------------------------------------------------------

@dataclass
class Tree:
    """One block of a reduce stage's tree, from its host run at n = block (thread t starts with element t)."""
    requests: list  # the block's requests (compiled)
    steps: dict  # {s: [requests]}: each step of the tree, keyed by s, the distance in elements thread 0 adds across
    element: dict  # {word: the element the word holds before the tree}
    warp_phases: set  # the phases only warp 0 reaches: after a __syncwarp(), when the other warps have left


def tree(stage, block, compiled=True):
    trace = host_run.run(stage, default_entry(stage), block=block, n=block)
    accesses = trace.of_block(0)
    element = {a.word: round(a.value) - 1 for a in accesses if a.phase == 0 and a.op == "st"}  # in[i] = i + 1
    reqs = requests(accesses)
    if compiled:
        reqs = compiled_requests(stage, reqs)
    steps = {}
    for rs in loop_steps(reqs).values():
        store = next(r for r in rs if r.op == "st")
        lane, word = store.lanes[0]
        other = next(w for r in rs if r.op == "ld" and r.warp == store.warp for ln, w in r.lanes
                     if ln == lane and w != word)
        steps[element[other] - element[word]] = rs
    others = max((a.phase for a in accesses if a.tid >= WARP), default=-1)
    return Tree(reqs, steps, element, {a.phase for a in accesses if a.tid < WARP and a.phase > others})


def own_read(reqs):
    """The first load request of a step that reads the words its warp then writes (smem[index] of `+=`)."""
    stores = {(r.warp, r.lanes) for r in reqs if r.op == "st"}
    return next(r for r in reqs if r.op == "ld" and (r.warp, r.lanes) in stores)


def other_reads(reqs):
    """{thread: word} of the loads of a step that read a word the thread does not write (smem[index + s])."""
    own = {t: w for r in reqs if r.op == "st" for t, w in zip(r.threads, (w for _, w in r.lanes))}
    return {t: w for r in reqs if r.op == "ld" for t, w in zip(r.threads, (w for _, w in r.lanes)) if own.get(t) != w}


def writes(reqs):
    return {t: w for r in reqs if r.op == "st" for t, w in zip(r.threads, (w for _, w in r.lanes))}
