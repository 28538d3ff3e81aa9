"""What the stage pages say of the thread models (kernel_models.py): the conflict degrees of the trees, the race
the unrolled warp would have, and the model-against-profiler tables with their tolerance."""
import kernel_models as km
from svg import by_step


def tree_degrees(stage, block=1024):
    """The conflict degree of each step's first read in the tree, at block threads, in words."""
    program = {"01_naive": km.block_reduce_01, "03_padding": km.block_reduce_03}[stage]
    steps = by_step(km.reduce_block(program, block))
    degrees = [max(r.wavefronts() for r in rs if r.op == "ld") for rs in steps.values()]
    first, last = min(steps), max(steps)
    if len(set(degrees)) == 1:
        return f"{degrees[0]}-way at every step from s = {first} to s = {last}"
    return ", ".join(f"{d}-" for d in degrees[:-1]) + f" and {degrees[-1]}-way from s = {first} to s = {last}"


def worst_step(stage="01_naive", block=1024):
    steps = by_step(km.reduce_block(km.block_reduce_01 if stage == "01_naive" else km.block_reduce_03, block))
    return f"s = {max(steps, key=lambda s: max(r.wavefronts() for r in steps[s]))}"


def race_example(block=1024):
    """04's first read, in the warp's steps, of a word another lane wrote the step before."""
    requests = km.reduce_block(km.block_reduce_04, block)
    steps = [(s, rs) for s, rs in by_step(requests).items() if s >= block // 64]
    for (s0, before), (s1, now) in zip(steps, steps[1:]):
        writer = {w: lane for r in before if r.op == "st" for lane, w in r.lanes}
        own = {lane: w for r in now if r.op == "st" for lane, w in r.lanes}
        for r in now:
            for lane, w in r.lanes:
                if r.op == "ld" and w != own[lane] and writer.get(w, lane) != lane:
                    element = w - w // 33
                    return f"at s = {s1} lane {lane} reads element {element}, which lane {writer[w]} wrote at s = {s0}"
    return "no read of another lane's word"


def _per_block(value, blocks):
    v = value / blocks
    return f"{v:,.0f}" if v == int(v) else f"{v:,.2f}"


def _comparisons(stage, ncu_rows, compiled=True):
    out = []
    for s, variant in km.PROFILED:
        if s == stage:
            row = next((r for r in ncu_rows if r["stage"] == s and r["variant"] == variant), None)
            if row:
                out.append((row, km.compare(row, compiled)))
    return out


def _parting(c):
    """One comparison that fails the test, per block (a launch's totals would repeat its grid)."""
    counts = [(name, c.model[key], measured) for name, key, measured in
              (("instructions", "instructions", c.instructions), ("conflict-free wavefronts", "conflict_free",
               c.conflict_free), ("bank conflicts", "conflicts", c.conflicts))]
    return f"{c.variant} {'loads' if c.op == 'ld' else 'stores'}: " + ", ".join(
        f"{name} {_per_block(model, c.blocks)} in the model, {_per_block(measured, c.blocks)} measured"
        for name, model, measured in counts if model != measured)


def model_table(stage, ncu_rows):
    """The model of one block, times the blocks launched, against Nsight Compute, per profiled launch."""
    head = ["launch (first, n as profiled)", "access", "requests, model", "instructions, ncu",
            "conflict-free wavefronts, model", "ncu", "bank conflicts, model", "ncu", "excess"]
    body = []
    for row, comps in _comparisons(stage, ncu_rows):
        for c in comps:
            launch = f"{row['variant']}, {c.blocks:,} blocks"
            if stage == "08_gemm_tiled":
                launch += f" × {-(-int(row['n_or_size']) // km.dims(row['block'])[0])} steps of K"
            body.append([launch, "loads" if c.op == "ld" else "stores", f"{c.model['requests']:,}",
                         f"{c.instructions:,.0f}", f"{c.model['conflict_free']:,}", f"{c.conflict_free:,.0f}",
                         f"{c.model['conflicts']:,}", f"{c.conflicts:,.0f}", f"{100 * c.excess:+.2f}%"])
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join(["---"] * 2 + ["---:"] * 7) + " |"]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in body])


def model_check(stage, ncu_rows):
    """The table, then what agrees, what the compiler changed, and what is left over, in generated words."""
    pairs = _comparisons(stage, ncu_rows)
    if not pairs:
        return "(no profiled launch of this stage in ncu.csv: run ./ladder profile)"
    comps = [c for _, cs in pairs for c in cs]
    problems = [p for c in comps for p in c.problems()]
    exact = all(c.conflict_free == c.model["conflict_free"] and c.instructions == c.model["instructions"]
                for c in comps)
    lo, hi = min(100 * c.excess for c in comps), max(100 * c.excess for c in comps)
    out = [model_table(stage, ncu_rows), ""]
    agree = "equal the counters exactly" if exact else "do not all equal the counters"
    out.append(f"The model makes one block's requests and counts their wavefronts; times the blocks launched, its "
               f"instructions and conflict-free wavefronts {agree}"
               f" in these {len(comps)} rows, and the bank conflicts measured differ from its own by {lo:+.2f}% to "
               f"{hi:+.2f}% of the conflict-free wavefronts: "
               + ("within the test's tolerance of ±" if not problems else "beyond the test's tolerance of ±")
               + f"{100 * km.TOLERANCE:.0f}% (`thread_models`, run by `./ladder test`; "
               f"[why that tolerance](01_naive.md#why-that-tolerance)).")
    if problems:
        out.append(" Where they part, per block: " + "; ".join(_parting(c) for c in comps if c.problems()) + ".")
    facts = [text for text, _ in km.COMPILED.get(stage, [])]
    if facts:
        out.append(f" What the model takes from the machine code (`docs/results/sass_{stage}.txt`, checked by the same "
                   f"test): {'; and '.join(facts)}.")
    literal = [c for _, cs in _comparisons(stage, ncu_rows, compiled=False) for c in cs]
    for c, lit in zip(comps, literal):
        if lit.model["conflict_free"] != c.model["conflict_free"]:
            out.append(f" Read as written, the source would take {_per_block(lit.model['conflict_free'], c.blocks)} "
                       f"conflict-free {'load' if c.op == 'ld' else 'store'} wavefronts per block ({c.variant}); the "
                       f"profiler counts {_per_block(c.conflict_free, c.blocks)}.")
            break
    extra = [c for c in comps if c.instructions > c.model["requests"]]
    if extra:
        c = extra[0]
        out.append(f" The {'load' if c.op == 'ld' else 'store'} instructions ({_per_block(c.instructions, c.blocks)} "
                   f"per block, {c.variant}) outnumber the requests with an active thread "
                   f"({_per_block(c.model['requests'], c.blocks)}): the profiler counts the instructions of warps "
                   f"with no active thread too, and they take no wavefront.")
    return out[0] + "\n\n" + "".join(out[2:])


def tolerance_note(ncu_rows):
    """Why the test allows what it allows, from every profiled row."""
    comps = [c for s in dict.fromkeys(s for s, _ in km.PROFILED) for _, cs in _comparisons(s, ncu_rows) for c in cs]
    worst = max(comps, key=lambda c: abs(c.excess))
    exact = sum(c.conflict_free == c.model["conflict_free"] and c.instructions == c.model["instructions"]
                for c in comps)
    launches = len({(c.stage, c.variant) for c in comps})
    return (f"The test holds two kinds of count apart. The instructions and the conflict-free wavefronts (the "
            f"profiler's wavefronts less its bank conflicts) follow from which lanes are active in which request, "
            f"and must equal the model's exactly; they do in {exact} of {len(comps)} comparisons ({launches} profiled "
            f"launches, loads and stores). The bank conflicts may differ by ±{100 * km.TOLERANCE:.0f}% of the "
            f"conflict-free wavefronts. In most rows the profiler counts a few conflicts beyond the model's, on "
            f"requests whose lanes and words the model has right: the largest excess is {100 * worst.excess:+.2f}% "
            f"({worst.stage} {worst.variant}, {'loads' if worst.op == 'ld' else 'stores'}), and these runs do not show "
            f"where it comes from. A model that miscounts the conflicts by more than one wavefront in ten (less the "
            f"measured excess, where its error goes against it) falls outside the band, and "
            f"each drift planted in the test (the padding left out, the index 2·s·tid changed, the final read kept "
            f"in every thread, the GEMM's padding dropped, 06's boundary counted from the wrong end) fails it.")
