"""What the stage pages say of the host runs (block_requests.py): the conflict degrees of the trees, the race the
unrolled warp would have, and the host-run-against-profiler tables, line by line and in aggregate."""
from . import block_requests as br


def tree_degrees(stage, block=1024):
    """The conflict degree of each step's first read in the tree, at block threads, in words."""
    steps = br.tree(stage, block).steps
    degrees = [max(r.wavefronts() for r in rs if r.op == "ld") for rs in steps.values()]
    first, last = min(steps), max(steps)
    if len(set(degrees)) == 1:
        return f"{degrees[0]}-way at every step from s = {first} to s = {last}"
    return ", ".join(f"{d}-" for d in degrees[:-1]) + f" and {degrees[-1]}-way from s = {first} to s = {last}"


def worst_step(stage="01_naive", block=1024):
    steps = br.tree(stage, block).steps
    return f"s = {max(steps, key=lambda s: max(r.wavefronts() for r in steps[s]))}"


def race_example(block=1024):
    """04's first read, in the warp's steps, of a word another lane wrote the step before."""
    t = br.tree("04_warp_unroll", block)
    steps = [(s, rs) for s, rs in t.steps.items() if all(r.warp == 0 for r in rs) and len(br.writes(rs)) <= br.WARP]
    for (s0, before), (s1, now) in zip(steps, steps[1:]):
        writer = {w: lane for lane, w in br.writes(before).items()}
        own = br.writes(now)
        for r in now:
            for lane, w in zip(r.threads, (w for _, w in r.lanes)):
                if r.op == "ld" and w != own[lane] and writer.get(w, lane) != lane:
                    return (f"at s = {s1} lane {lane} reads element {t.element[w]}, which lane {writer[w]} wrote at "
                            f"s = {s0}")
    return "no read of another lane's word"


def _per_block(value, blocks):
    v = value / blocks
    return f"{v:,.0f}" if v == int(v) else f"{v:,.2f}"


def _comparisons(stage, ncu_rows, compiled=True):
    out = []
    for s, variant in br.PROFILED:
        if s == stage:
            row = next((r for r in ncu_rows if r["stage"] == s and r["variant"] == variant), None)
            if row:
                out.append((row, br.compare(row, compiled)))
    return out


def _parting(c):
    """One comparison that fails the test, per block (a launch's totals would repeat its grid)."""
    counts = [(name, c.model[key], measured) for name, key, measured in
              (("instructions", "instructions", c.instructions), ("conflict-free wavefronts", "conflict_free",
               c.conflict_free), ("bank conflicts", "conflicts", c.conflicts))]
    return f"{c.variant} {'loads' if c.op == 'ld' else 'stores'}: " + ", ".join(
        f"{name} {_per_block(model, c.blocks)} in the host run, {_per_block(measured, c.blocks)} measured"
        for name, model, measured in counts if model != measured)


def _line_comparisons(ncu_rows, source_rows, stage=None):
    """The line-by-line comparisons of every profiled launch (of one stage) that both result files have."""
    out = []
    for s, variant in br.PROFILED:
        row = next((r for r in ncu_rows if r["stage"] == s and r["variant"] == variant), None)
        if stage in (None, s) and row and any(x["stage"] == s and x["variant"] == variant for x in source_rows):
            out += br.compare_lines(row, source_rows)
    return out


def _table(head, align, body):
    return "\n".join(["| " + " | ".join(head) + " |", "| " + " | ".join(align) + " |"]
                     + ["| " + " | ".join(r) + " |" for r in body])


def line_table(lines):
    """Each source line that touches shared memory, per profiled launch (compare_lines()): the host run against the
    source counters."""
    body = [["", "", "", c.message] + [""] * 6 if not hasattr(c, "host") else
            [c.variant, str(c.line), f"`{c.text}`", "loads" if c.op == "ld" else "stores",
             *(f"{v:,}" for k in ("instructions", "wavefronts", "ideal") for v in (c.host[k], c.measured[k]))]
            for c in lines]
    return _table(["launch", "line", "source", "access", "instructions, host run", "ncu", "wavefronts, host run", "ncu",
                   "ideal wavefronts, host run", "ncu"], ["---"] * 4 + ["---:"] * 6, body)


def model_table(stage, ncu_rows):
    """The host run of one block, times the blocks launched, against Nsight Compute's aggregate counters."""
    body = []
    for row, comps in _comparisons(stage, ncu_rows):
        for c in comps:
            launch = f"{row['variant']}, {c.blocks:,} blocks"
            if stage == "08_gemm_tiled":
                launch += f" × {-(-int(row['n_or_size']) // br.dims(row['block'])[0])} steps of K"
            body.append([launch, "loads" if c.op == "ld" else "stores", f"{c.model['requests']:,}",
                         f"{c.instructions:,.0f}", f"{c.model['conflict_free']:,}", f"{c.conflict_free:,.0f}",
                         f"{c.model['conflicts']:,}", f"{c.conflicts:,.0f}", f"{100 * c.excess:+.2f}%"])
    return _table(["launch (first, n as profiled)", "access", "requests, host run", "instructions, ncu",
                   "conflict-free wavefronts, host run", "ncu", "bank conflicts, host run", "ncu", "excess"],
                  ["---"] * 2 + ["---:"] * 7, body)


def model_check(stage, ncu_rows, source_rows=()):
    """Line by line, then in aggregate, then what the compiler changed, in generated words."""
    pairs = _comparisons(stage, ncu_rows)
    if not pairs:
        return "(no profiled launch of this stage in ncu.csv: run ./maint/do profile)"
    lines = _line_comparisons(ncu_rows, source_rows, stage)
    wrong = [p for c in lines for p in c.problems()]
    if not lines:
        return "(no source counters of this stage in ncu_source.csv: run ./maint/do profile)"
    out = ["The host run executes this stage's own kernel code for one block (`scripts/host_run.py`) and logs every "
           "shared-memory access with its thread, step and source line. Times the blocks launched, each line's "
           "instructions, wavefronts and ideal wavefronts against Nsight Compute's source counters (the same profile, "
           "per SASS instruction, `docs/results/ncu_source.csv`): "
           + (f"all {len(lines)} rows agree exactly." if not wrong else f"{len(wrong)} of {len(lines)} rows differ: "
              + "; ".join(wrong)) + " The test `thread_models` (run by `./ladder test`) demands that they do.",
           line_table(lines)]
    comps = [c for _, cs in pairs for c in cs]
    problems = [p for c in comps for p in c.problems()]
    lo, hi = min(100 * c.excess for c in comps), max(100 * c.excess for c in comps)
    out.append(f"The aggregate counters of the same launches (`docs/results/ncu.csv`) count more bank conflicts than "
               f"the instructions do: {lo:+.2f}% to {hi:+.2f}% of the conflict-free wavefronts here, "
               + ("within" if not problems else "beyond") + f" the test's tolerance of ±{100 * br.TOLERANCE:.0f}% "
               f"([why](01_naive.md#why-that-tolerance)).")
    if problems:
        out[-1] += " Where they part, per block: " + "; ".join(_parting(c) for c in comps if c.problems()) + "."
    out += [model_table(stage, ncu_rows), ""]
    facts = [text for text, _ in br.COMPILED.get(stage, [])]
    if facts:
        out[-1] += (f"What the host run takes from the machine code (`docs/results/sass_{stage}.txt`, checked by the "
                    f"same test): {'; and '.join(facts)}.")
    literal = [c for _, cs in _comparisons(stage, ncu_rows, compiled=False) for c in cs]
    for c, lit in zip(comps, literal):
        if lit.model["conflict_free"] != c.model["conflict_free"]:
            out[-1] += (f" Read as written, the source would take {_per_block(lit.model['conflict_free'], c.blocks)} "
                       f"conflict-free {'load' if c.op == 'ld' else 'store'} wavefronts per block ({c.variant}); the "
                        f"profiler counts {_per_block(c.conflict_free, c.blocks)}.")
            break
    extra = [c for c in comps if c.instructions > c.model["requests"]]
    if extra:
        c = extra[0]
        out[-1] += (f" The {'load' if c.op == 'ld' else 'store'} instructions ({_per_block(c.instructions, c.blocks)} "
                   f"per block, {c.variant}) outnumber the requests with an active thread "
                   f"({_per_block(c.model['requests'], c.blocks)}): the profiler counts the instructions of warps "
                   f"with no active thread too, and they take no wavefront.")
    return "\n\n".join(p.strip() for p in out if p.strip())


def tolerance_note(ncu_rows, source_rows=()):
    """Why the aggregate comparison allows what it allows, from every profiled row."""
    comps = [c for s in dict.fromkeys(s for s, _ in br.PROFILED) for _, cs in _comparisons(s, ncu_rows) for c in cs]
    worst = max(comps, key=lambda c: abs(c.excess))
    lines = _line_comparisons(ncu_rows, source_rows)
    exact = sum(not c.problems() for c in lines)
    return (f"Per source line the comparison is exact: {exact} of {len(lines)} lines of the {len(br.PROFILED)} profiled "
            f"launches have the host run's instructions, wavefronts and ideal wavefronts, to the last one. Those "
            f"per-instruction counts are Nsight Compute's source counters, which it gathers by instrumenting the "
            f"kernel's machine code (its SASS-patching metrics: forums.developer.nvidia.com/t/definition-of-sass-inst-"
            f"executed) and which follow from the addresses each warp's instruction touches, as the host run's do. The "
            f"aggregate bank-conflict counters (`l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld/st.sum`) are the "
            f"L1's own, and count more than the instructions add up to: the largest excess is "
            f"{100 * worst.excess:+.2f}% of the conflict-free wavefronts ({worst.stage} {worst.variant}, "
            f"{'loads' if worst.op == 'ld' else 'stores'}). So only "
            f"the aggregate comparison keeps a tolerance, ±{100 * br.TOLERANCE:.0f}% of the "
            f"conflict-free wavefronts, and the line-by-line one decides: each drift planted in the test (kernel "
            f"edits such as 03's padding i / 16, 01's transposed tid, 08's kPad 2, and edits of the analysis such as "
            f"a broadcast counted as a conflict) fails it, or fails the sums or the machine-code checks, with a "
            f"message that names the stage and the line.")


def gemm_access(stage, texts, op, tile, pad=0):
    """How warp 0 of gemm_kernel<tile, pad> makes the access `texts` (an array and its indices as the source writes
    them; a list where a sentence speaks of several at once, which must then agree) in the host run of the source:
    the distinct words of one request, whether they are consecutive, their span, and the most wavefronts any of
    its requests takes (1: no conflict)."""
    found = [_gemm_access(stage, text, op, tile, pad) for text in ([texts] if isinstance(texts, str) else texts)]
    if any(a != found[0] for a in found):
        raise br.host_run.HostRunError(f"{stage}: {texts} differ in the host run ({found}); a page speaks of them as one")
    return found[0]


def _gemm_access(stage, text, op, tile, pad):
    line = br.line_of(stage, text)
    array = text.split("[", 1)[0]
    reqs = [r for r in br.gemm_block(stage, tile, pad, compiled=False)
            if r.line == line and r.array == array and r.op == op and r.warp == 0]
    if not reqs:
        raise br.host_run.HostRunError(f"{stage}: the host run made no {op} of {array} at line {line}")
    words = sorted({w for _, w in reqs[0].lanes})
    return {"words": len(words), "consecutive": words == list(range(words[0], words[0] + len(words))),
            "span": words[-1] - words[0] + 1, "degree": max(r.wavefronts() for r in reqs)}
