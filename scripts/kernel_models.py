"""Small models of what each stage's threads do, written with the kernels' own index expressions.

Each model is a Python function that runs one thread the way its kernel does, line for line where the line
touches shared memory (or decides which element a thread reads), and yields at each barrier. A model line that
copies a kernel line carries it in a "# cuda:" comment; tests/check_thread_models.py finds every such line,
verbatim, in the stage file, and holds the models' shared-memory instructions, wavefronts and bank conflicts
against the Nsight Compute counters in docs/results/ncu.csv. scripts/diagrams.py draws the stage pages'
pictures from the same functions.

Where the compiled kernel touches shared memory differently from its source (the compiler drops a read no
thread uses, or merges four reads into one 128-bit load), the model follows the machine code and COMPILED says
so, with a test of docs/results/sass_<stage>.txt that shows it; compiled=False models the source as written,
for the pages to show what that difference is worth.
"""
import inspect
import re
from collections import defaultdict
from dataclasses import dataclass

WARP = 32
BANKS = 32  # shared memory: 32 banks of one 32-bit word; word w lives in bank w % 32

# ---- running one block -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """One warp-wide shared-memory instruction: the first word each active lane touches, and how many words."""
    phase: int  # which stretch between barriers
    line: str  # the source expression
    op: str  # "ld" or "st"
    warp: int
    lanes: tuple  # ((lane, word), ...) for the active lanes only
    width: int = 1  # words per lane: 1 (32-bit) or 4 (128-bit)
    step: object = None  # the loop variable where it matters (s, k), for the pictures

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
        assert self.width == 4 and self.op == "ld", "the models here need 32-bit accesses and 128-bit loads only"
        at = dict(self.lanes)
        paired = any(all(at.get(lane ^ m, word) == word for lane, word in at.items()) for m in (1, 2))
        return 2 if paired else 4

    def wavefronts(self):
        """Distinct words in the busiest bank (lanes reading one word share it: a broadcast), at least the
        conflict-free count."""
        return max(max(len(ws) for ws in self.words_per_bank().values()), self.conflict_free())


class _Smem:
    """What a thread program calls instead of touching shared memory: smem.ld(word, line) / smem.st(word, line)."""

    def __init__(self, log, tid):
        self.log, self.tid, self.phase = log, tid, 0

    def _access(self, op, word, line, width, step):
        key = (self.phase, line, op, self.tid // WARP, width, step)
        self.log.setdefault(key, []).append((self.tid % WARP, word))

    def ld(self, word, line, width=1, step=None):
        self._access("ld", word, line, width, step)

    def st(self, word, line, step=None):
        self._access("st", word, line, 1, step)


def run_block(program, threads, barriers=None, **args):
    """Runs program(tid, smem, **args) for every thread of one block, one barrier interval at a time, and returns
    its shared-memory accesses as warp requests, in program order. barriers, if given, gets the name of the
    barrier that ends each interval (what the programs yield)."""
    log = {}
    running = [_Smem(log, tid) for tid in range(threads)]
    running = [(smem, program(smem.tid, smem, **args)) for smem in running]
    phase = 0
    while running:
        alive = []
        for smem, thread in running:
            smem.phase = phase
            name = next(thread, StopIteration)
            if name is not StopIteration:
                alive.append((smem, thread))
                if barriers is not None:
                    barriers[phase] = name
        running, phase = alive, phase + 1
    return [Request(phase, line, op, warp, tuple(lanes), width, step)
            for (phase, line, op, warp, width, step), lanes in log.items()]


def reduce_block(program, block, **args):
    """The requests of one block of a reduce stage's block_reduce() model."""
    return run_block(program, block, block=block, **args)


# Each model line that copies a line of its kernel says which, after "cuda:"; the test finds every such line,
# verbatim, in the stage file (MODELS says which functions model which stage).

# ---- 01_naive and 02_grid_stride: the tree that pairs neighbours -------------------------------------------

def tree_index(s, tid):
    return 2 * s * tid  # cuda: const unsigned index = 2 * s * tid;


def block_reduce_01(tid, smem, block, compiled=True):
    """01_naive/reduce.cu block_reduce() (02_grid_stride has the same function), for one thread."""
    smem.st(tid, "smem[tid] = v")  # cuda: smem[tid] = v;
    yield "__syncthreads()"
    s = 1
    while s < block:  # cuda: for (unsigned s = 1; s < blockDim.x; s *= 2) {
        index = tree_index(s, tid)
        if index < block:  # cuda: if (index < blockDim.x) smem[index] += smem[index + s];
            smem.ld(index, "smem[index]", step=s)
            smem.ld(index + s, "smem[index + s]", step=s)
            smem.st(index, "smem[index] +=", step=s)
        yield "__syncthreads()"
        s *= 2
    # cuda: return smem[0];
    # cuda: if (threadIdx.x == 0) out[blockIdx.x] = sum;
    if tid == 0 or not compiled:  # only thread 0 uses the sum, and the compiled kernel reads it there alone
        smem.ld(0, "return smem[0]")


def grid_stride(tid, n, threads):
    """02_grid_stride's loop: the elements global thread tid adds, with `threads` threads in the grid."""
    stride = threads  # cuda: const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
    # cuda: for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += stride) sum += in[i];
    return list(range(tid, n, stride))


# ---- 03_padding: the same tree, one padding word after every 32 -------------------------------------------

def padded(i):
    return i + i // 32  # cuda: __device__ unsigned padded(unsigned i) { return i + i / 32; }


def block_reduce_03(tid, smem, block, compiled=True):
    """03_padding/reduce.cu block_reduce(), for one thread."""
    smem.st(padded(tid), "smem[padded(tid)] = v")  # cuda: smem[padded(tid)] = v;
    yield "__syncthreads()"
    s = 1
    while s < block:  # cuda: for (unsigned s = 1; s < blockDim.x; s *= 2) {
        index = tree_index(s, tid)
        if index < block:  # cuda: if (index < blockDim.x) smem[padded(index)] += smem[padded(index + s)];
            smem.ld(padded(index), "smem[padded(index)]", step=s)
            smem.ld(padded(index + s), "smem[padded(index + s)]", step=s)
            smem.st(padded(index), "smem[padded(index)] +=", step=s)
        yield "__syncthreads()"
        s *= 2
    if tid == 0 or not compiled:  # cuda: return smem[0];
        smem.ld(padded(0), "return smem[0]")


# ---- 04_warp_unroll: the last six steps in warp 0 ----------------------------------------------------------

def block_reduce_04(tid, smem, block, compiled=True):
    """04_warp_unroll/reduce.cu block_reduce(), for one thread."""
    smem.st(padded(tid), "smem[padded(tid)] = v")  # cuda: smem[padded(tid)] = v;
    yield "__syncthreads()"
    s = 1
    while 64 * s < block:  # cuda: for (; 64 * s < blockDim.x; s *= 2) {
        index = tree_index(s, tid)
        if index < block:  # cuda: if (index < blockDim.x) smem[padded(index)] += smem[padded(index + s)];
            smem.ld(padded(index), "smem[padded(index)]", step=s)
            smem.ld(padded(index + s), "smem[padded(index + s)]", step=s)
            smem.st(padded(index), "smem[padded(index)] +=", step=s)
        yield "__syncthreads()"
        s *= 2
    if tid < 32:  # cuda: if (tid < 32) {
        for step in range(6):  # cuda: for (int step = 0; step < 6; ++step, s *= 2) {
            index = tree_index(s, tid)
            if index < block:
                smem.ld(padded(index), "smem[padded(index)]", step=s)
                smem.ld(padded(index + s), "smem[padded(index + s)]", step=s)
                smem.st(padded(index), "smem[padded(index)] +=", step=s)
            if step < 5:  # cuda: if (step < 5) __syncwarp();
                yield "__syncwarp()"
            s *= 2
    if tid == 0:  # cuda: return tid == 0 ? smem[0] : 0.0f;
        smem.ld(padded(0), "return tid == 0 ? smem[0] : 0.0f")


# ---- 05_shuffle (and 06, 07): shuffles in registers, one word per warp -------------------------------------

def shuffle_offsets():
    offsets, offset = [], 16
    # cuda: for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    while offset > 0:
        offsets.append(offset)
        offset //= 2
    return offsets


def shuffle_source(lane, offset):
    """Whose v lane reads in __shfl_down_sync(0xffffffffu, v, offset): lane + offset, or its own past lane 31."""
    return lane + offset if lane + offset < WARP else lane


def block_reduce_05(tid, smem, block, compiled=True):
    """05_shuffle/reduce.cu block_reduce() (06_float4 and 07_multiblock have the same function), for one thread.
    warp_reduce() stays in registers."""
    lane, warp = tid % 32, tid // 32  # cuda: const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if lane == 0:  # cuda: if (lane == 0) smem[warp] = v;
        smem.st(warp, "smem[warp] = v")
    yield "__syncthreads()"
    # cuda: if (warp == 0) v = warp_reduce(lane < blockDim.x / 32 ? smem[lane] : 0.0f);
    if warp == 0 and lane < block // 32:
        smem.ld(lane, "smem[lane]")


# ---- 08_gemm_tiled: the tiles of A and B -----------------------------------------------------------------

def gemm_thread(tid, smem, tile, pad, k_tiles=1, compiled=True):
    """08_gemm_tiled/gemm.cu gemm_kernel<kTile, kPad>(), the shared-memory accesses of thread (tx, ty). b_tile is
    placed after a_tile; where the compiler puts it changes no count (a request touches one array, and moving an
    array moves all of its words' banks alike)."""
    tx, ty = tid % tile, tid // tile  # cuda: const int tx = threadIdx.x, ty = threadIdx.y;
    row = tile + pad  # cuda: __shared__ float a_tile[kTile][kTile + kPad];

    def a_tile(r, c):
        return r * row + c

    def b_tile(r, c):  # cuda: __shared__ float b_tile[kTile][kTile + kPad];
        return tile * row + r * row + c

    vector = compiled and row % 4 == 0  # rows on 16-byte boundaries: a_tile[ty][k..k+3] in one 128-bit load
    for _ in range(k_tiles):
        # cuda: a_tile[ty][tx] = row < M && k0 + tx < K ? A[std::size_t(row) * K + (k0 + tx)] : 0.0f;
        smem.st(a_tile(ty, tx), "a_tile[ty][tx] =")
        # cuda: b_tile[ty][tx] = k0 + ty < K && col < N ? B[std::size_t(k0 + ty) * N + col] : 0.0f;
        smem.st(b_tile(ty, tx), "b_tile[ty][tx] =")
        yield "__syncthreads()"
        for k in range(tile):  # cuda: for (int k = 0; k < kTile; ++k) sum += a_tile[ty][k] * b_tile[k][tx];
            if not vector:
                smem.ld(a_tile(ty, k), "a_tile[ty][k]", step=k)
            elif k % 4 == 0:
                smem.ld(a_tile(ty, k), "a_tile[ty][k..k+3]", width=4, step=k)
            smem.ld(b_tile(k, tx), "b_tile[k][tx]", step=k)
        yield "__syncthreads()"


def gemm_global(tx, ty, bx, by, k0, tile):
    """What thread (tx, ty) of block (bx, by) loads at step k0, as (row, column): its element of A's tile and of
    B's, and the element of C it owns."""
    row = by * tile + ty  # cuda: const int row = blockIdx.y * kTile + ty;
    col = bx * tile + tx  # cuda: const int col = blockIdx.x * kTile + tx;
    return (row, k0 + tx), (k0 + ty, col), (row, col)


# ---- 06_float4: the peel and the loads in flight ------------------------------------------------------------

K_LOADS_IN_FLIGHT = 4


def split(address, n):
    """06's peel of n floats at byte address `address`: (head, vectors, tail). The test runs the kernel's own lines
    beside it."""
    to_boundary = (16 - address % 16) % 16 // 4
    head = to_boundary if to_boundary < n else n
    vectors = (n - head) // 4
    tail = (n - head) % 4
    return head, vectors, tail


def readers(address, n, threads, loads_in_flight=K_LOADS_IN_FLIGHT):  # cuda: constexpr int kLoadsInFlight = 4;
    """For every element in[0, n): (the thread that reads it, the batch of loads it is in: 'head', 'tail', 'single'
    or the batch number of the kLoadsInFlight loop), by 06's loops with `threads` threads in the grid."""
    head, vectors, tail = split(address, n)
    stride = threads
    who = [None] * n
    for tid in range(threads):
        i, batch = tid, 0
        # cuda: for (; i + (kLoadsInFlight - 1) * stride < vectors; i += kLoadsInFlight * stride) {
        while i + (loads_in_flight - 1) * stride < vectors:
            # cuda: for (int k = 0; k < kLoadsInFlight; ++k) v[k] = body[i + k * stride];
            for k in range(loads_in_flight):
                for e in range(4):
                    who[head + 4 * (i + k * stride) + e] = (tid, batch)
            i, batch = i + loads_in_flight * stride, batch + 1
        while i < vectors:  # cuda: for (; i < vectors; i += stride) {
            for e in range(4):
                who[head + 4 * i + e] = (tid, "single")
            i += stride
        if tid < head:  # cuda: if (tid < head) sum += in[tid];
            who[tid] = (tid, "head")
        if tid < tail:  # cuda: if (tid < tail) sum += in[n - tail + tid];
            who[n - tail + tid] = (tid, "tail")
    return who


# ---- 07_multiblock: the three combines, as orders of events ---------------------------------------------------

def combine_events(finish_order, combine):
    """What each block does once its sum is ready, blocks finishing in finish_order: [(block, action)], and the
    order in which the block sums enter the result."""
    grid = len(finish_order)
    if combine == "atomic":  # cuda: if (threadIdx.x == 0) atomicAdd(out, sum);
        return [(b, "atomicAdd(out, sum)") for b in finish_order], list(finish_order)
    if combine == "two-pass":  # cuda: if (threadIdx.x == 0) out[blockIdx.x] = sum;
        events = [(b, f"out[{b}] = sum") for b in finish_order]
        return events + [(0, "second launch: adds out[0..] by index")], list(range(grid))
    events = []
    for ticket, b in enumerate(finish_order):  # fetch_add returns how many blocks took a ticket before
        # cuda: is_last = counter.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;
        is_last = ticket == grid - 1
        events.append((b, f"partials[{b}] = sum; ticket {ticket}" + (": the last block" if is_last else "")))
    last = finish_order[-1]
    # cuda: for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) total += __ldcg(&partials[b]);
    return events + [(last, "adds partials[0..] by index")], list(range(grid))


# ---- what each model mirrors, and what the compiler changed -------------------------------------------------

# Which functions model which stage's kernel.
MODELS = {"01_naive": [tree_index, block_reduce_01], "02_grid_stride": [grid_stride],
          "03_padding": [padded, block_reduce_03], "04_warp_unroll": [block_reduce_04],
          "05_shuffle": [shuffle_offsets, block_reduce_05], "06_float4": [readers], "07_multiblock": [combine_events],
          "08_gemm_tiled": [gemm_thread, gemm_global]}


def mirrored(stage):
    """The kernel lines a stage's models copy: what follows "# cuda: " in their source."""
    return [line.split("# cuda: ", 1)[1].strip() for f in MODELS[stage]
            for line in inspect.getsource(f).splitlines() if "# cuda: " in line]


# Stages whose block_reduce() is the same text as another's, and so the same model.
SAME_AS = {"02_grid_stride": "01_naive", "06_float4": "05_shuffle", "07_multiblock": "05_shuffle"}

# Where the machine code differs from the source, each with the SASS that shows it: (stage, what, a test on the
# lines of docs/results/sass_<stage>.txt). The model follows the machine code (compiled=True).


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
COMPILED = {
    "01_naive": [FINAL_READ, PREDICATED_TREE],
    "02_grid_stride": [FINAL_READ, PREDICATED_TREE],
    "03_padding": [FINAL_READ, BRANCHED_TREE],
    "04_warp_unroll": [BRANCHED_TREE],
    "08_gemm_tiled": [("the compiler reads `a_tile[ty][k..k+3]` with one 128-bit load (`LDS.128`) where a tile row "
                       "starts on a 16-byte boundary, so in the unpadded tile only", _lds128_where_aligned)],
}
PREDICATED = {stage for stage, facts in COMPILED.items() if PREDICATED_TREE in facts}

# ---- the model against the profiler ---------------------------------------------------------------------------

# The rows of docs/results/ncu.csv the models are held to: (stage, variant).
PROFILED = [("01_naive", "tree"), ("02_grid_stride", "stream"), ("02_grid_stride", "tree"), ("03_padding", "stream"),
            ("03_padding", "tree"), ("04_warp_unroll", "stream"), ("04_warp_unroll", "tree"), ("05_shuffle", "stream"),
            ("05_shuffle", "tree"), ("06_float4", "stream"), ("06_float4", "tree"), ("07_multiblock", "stream"),
            ("07_multiblock", "tree"), ("08_gemm_tiled", "tiled"), ("08_gemm_tiled", "tiled padded")]

# Measured conflicts may differ from the model's by this share of the conflict-free wavefronts (see TOLERANCE_WHY).
TOLERANCE = 0.10
TOLERANCE_WHY = ("The conflict-free wavefronts (the profiler's wavefronts less its conflicts) are one per request "
                 "the model makes, two per 128-bit load, and must agree exactly. The conflicts may differ by 10% of "
                 "the conflict-free wavefronts: every row measured counts a few conflicts on requests the model "
                 "finds conflict-free (see the excess column), and a model that misplaces one step of a tree or "
                 "one tile access misses by far more.")

METRICS = {"ld": ("smsp__inst_executed_op_shared_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                  "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
           "st": ("smsp__inst_executed_op_shared_st.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
                  "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum")}

BLOCK_REDUCE = {"01_naive": block_reduce_01, "03_padding": block_reduce_03, "04_warp_unroll": block_reduce_04,
                "05_shuffle": block_reduce_05}


def dims(text):
    """'(16, 16, 1)' -> [16, 16, 1]."""
    return [int(x) for x in text.strip("() ").split(",")]


def launch_requests(row, compiled=True, models=None):
    """The requests of one block of a profiled launch, and how many times the launch repeats them (its blocks, and
    for the GEMM its steps along K, each of which makes the same requests: the tiles are stored whole even at the
    edges)."""
    models = models or {}
    blocks = 1
    for d in dims(row["grid"]):
        blocks *= d
    bx, by, bz = dims(row["block"])
    stage = row["stage"]
    if stage == "08_gemm_tiled":
        program = models.get(stage, gemm_thread)
        pad = 1 if "padded" in row["variant"] else 0
        steps = -(-int(row["n_or_size"]) // bx)
        return run_block(program, bx * by * bz, tile=bx, pad=pad, compiled=compiled), blocks * steps
    name = SAME_AS.get(stage, stage)
    program = models.get(name, BLOCK_REDUCE[name])
    return reduce_block(program, bx * by * bz, compiled=compiled), blocks


def totals(requests, repeat=1, warps=None):
    """{op: {"requests", "instructions", "wavefronts", "conflict_free", "conflicts"}} over the requests, times
    repeat. With warps (a predicated tree), every warp of the block issues each tree step's instructions."""
    out = {op: {"requests": 0, "instructions": 0, "wavefronts": 0, "conflict_free": 0} for op in METRICS}
    for r in requests:
        t = out[r.op]
        t["requests"] += repeat
        t["instructions"] += repeat if warps is None or r.step is None else 0
        t["wavefronts"] += r.wavefronts() * repeat
        t["conflict_free"] += r.conflict_free() * repeat
    if warps is not None:
        for phase, line, op in {(r.phase, r.line, r.op) for r in requests if r.step is not None}:
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
        """Measured conflicts beyond the model's, as a share of the conflict-free wavefronts."""
        return (self.conflicts - self.model["conflicts"]) / max(self.model["conflict_free"], 1)

    def problems(self):
        where = f"{self.stage} ({self.variant}) {'loads' if self.op == 'ld' else 'stores'}"
        out = []
        if self.instructions != self.model["instructions"]:
            out.append(f"{where}: {self.instructions:,.0f} instructions measured, {self.model['instructions']:,} in "
                       f"the model")
        if self.conflict_free != self.model["conflict_free"]:
            out.append(f"{where}: conflict-free wavefronts {self.conflict_free:,.0f} measured, "
                       f"{self.model['conflict_free']:,} in the model")
        if abs(self.excess) > TOLERANCE:
            out.append(f"{where}: bank conflicts {self.conflicts:,.0f} measured, {self.model['conflicts']:,} in the "
                       f"model ({100 * self.excess:+.1f}% of the conflict-free wavefronts; the tolerance is "
                       f"±{100 * TOLERANCE:.0f}%)")
        return out


def compare(row, compiled=True, models=None):
    """The model of one profiled launch against its row of ncu.csv: one Comparison for loads, one for stores."""
    requests, repeat = launch_requests(row, compiled, models)
    warps = -(-dims(row["block"])[0] * dims(row["block"])[1] // WARP) if row["stage"] in PREDICATED else None
    model = totals(requests, repeat, warps)
    blocks = 1
    for d in dims(row["grid"]):
        blocks *= d
    return [Comparison(row["stage"], row["variant"], op, blocks, model[op], *(float(row[m]) for m in METRICS[op]))
            for op in METRICS]
