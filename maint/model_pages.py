"""What the stage pages say of the host runs (block_requests.py): the conflict degrees of the trees, the race the
unrolled warp would have, and the host-run-against-profiler tables, line by line and in aggregate."""
from . import block_requests as br
from .block_requests import ACCESS


def tree_degrees(stage, block=1024):
    """The conflict degree of each step's first read in the tree, at block threads, in words."""
    steps = br.tree(stage, block).steps
    degrees = [max(r.wavefronts() for r in rs if r.op == "ld") for rs in steps.values()]
    where = f"from s = {min(steps)} to s = {max(steps)}"
    if len(set(degrees)) == 1:
        return f"{degrees[0]}-way at every step {where}"
    return ", ".join(f"{d}-" for d in degrees[:-1]) + f" and {degrees[-1]}-way {where}"


def worst_step(stage="01_naive", block=1024):
    steps = br.tree(stage, block).steps
    return f"s = {max(steps, key=lambda s: max(r.wavefronts() for r in steps[s]))}"


def race_example(block=1024):
    """04's first read, in the warp's steps, of a word another lane wrote the step before."""
    t = br.tree("04_warp_unroll", block)
    steps = list(br.warp_steps(t).items())
    for (s0, before), (s1, now) in zip(steps, steps[1:]):
        writer = {w: lane for lane, w in br.writes(before).items()}
        for lane, w in br.other_reads(now).items():
            if writer.get(w, lane) != lane:
                return f"at s = {s1} lane {lane} reads element {t.element[w]}, which lane {writer[w]} wrote at s = {s0}"
    return "no read of another lane's word"


def _per_block(value, blocks):
    v = value / blocks
    return f"{v:,.0f}" if v == int(v) else f"{v:,.2f}"


def _comparisons(stage, ncu_rows, compiled=True):
    return [c for row in br.profiled_rows(ncu_rows, stage) for c in br.compare(row, compiled)]


def _line_comparisons(ncu_rows, source_rows, stage=None):
    """The line-by-line comparisons of every profiled launch (of one stage) that both result files have."""
    measured = {(x["stage"], x["variant"]) for x in source_rows}
    return [c for row in br.profiled_rows(ncu_rows, stage) if (row["stage"], row["variant"]) in measured
            for c in br.compare_lines(row, source_rows)]


def _table(head, align, body):
    return "\n".join("| " + " | ".join(r) + " |" for r in [head, align, *body])


def _parting(c):
    """One comparison that fails the test, per block (a launch's totals would repeat its grid)."""
    return f"{c.variant} {ACCESS[c.op]}: " + ", ".join(
        f"{name} {_per_block(c.host[k], c.blocks)} in the host run, {_per_block(c.measured[k], c.blocks)} measured"
        for name, k in (("instructions", "instructions"), ("conflict-free wavefronts", "ideal"),
                        ("bank conflicts", "conflicts")) if c.host[k] != c.measured[k])


def model_check(stage, ncu_rows, source_rows=()):
    """Line by line, then in aggregate, then what the compiler changed, in generated words."""
    comps = _comparisons(stage, ncu_rows)
    if not comps:
        return "(no profiled launch of this stage in ncu.csv: run ./maint/do profile)"
    lines = _line_comparisons(ncu_rows, source_rows, stage)
    if not lines:
        return "(no source counters of this stage in ncu_source.csv: run ./maint/do profile)"
    wrong = [p for c in lines for p in c.problems()]
    rows = [["", "", "", c.text] + [""] * 6 if c.host is None else
            [c.variant, str(c.line), f"`{c.text}`", ACCESS[c.op],
             *(f"{v:,}" for k in br.COUNTS for v in (c.host[k], c.measured[k]))] for c in lines]
    out = ["The host run executes this stage's own kernel code for one block (`scripts/host_run.py`) and logs every "
           "shared-memory access with its thread, step and source line. Times the blocks launched, each line's "
           "instructions, wavefronts and ideal wavefronts against Nsight Compute's source counters (the same profile, "
           "per SASS instruction, `docs/results/ncu_source.csv`): "
           + (f"all {len(lines)} rows agree exactly." if not wrong else f"{len(wrong)} of {len(lines)} rows differ: "
              + "; ".join(wrong)) + " The test `thread_models` (run by `./ladder test`) demands that they do.",
           _table(["launch", "line", "source", "access", "instructions, host run", "ncu", "wavefronts, host run", "ncu",
                   "ideal wavefronts, host run", "ncu"], ["---"] * 4 + ["---:"] * 6, rows)]
    problems = [p for c in comps for p in c.problems()]
    excess = [100 * c.excess for c in comps]
    out.append(f"The aggregate counters of the same launches (`docs/results/ncu.csv`) count more bank conflicts than "
               f"the instructions do: {min(excess):+.2f}% to {max(excess):+.2f}% of the conflict-free wavefronts here, "
               + ("within" if not problems else "beyond") + f" the test's tolerance of ±{100 * br.TOLERANCE:.0f}% "
               f"([why](01_naive.md#why-that-tolerance))." + (" Where they part, per block: " + "; ".join(
                   _parting(c) for c in comps if c.problems()) + "." if problems else ""))
    rows = [[f"{c.variant}, {c.blocks:,} blocks" + (f" × {c.repeat // c.blocks} steps of K" if c.stage == "08_gemm_tiled"
                                                    else ""), ACCESS[c.op], f"{c.host['requests']:,}",
             f"{c.measured['instructions']:,}", f"{c.host['ideal']:,}", f"{c.measured['ideal']:,}",
             f"{c.host['conflicts']:,}", f"{c.measured['conflicts']:,}", f"{100 * c.excess:+.2f}%"] for c in comps]
    out += [_table(["launch (first, n as profiled)", "access", "requests, host run", "instructions, ncu",
                    "conflict-free wavefronts, host run", "ncu", "bank conflicts, host run", "ncu", "excess"],
                   ["---"] * 2 + ["---:"] * 7, rows), ""]
    facts = [text for text, _ in br.COMPILED.get(stage, [])]
    if facts:
        out[-1] += (f"What the host run takes from the machine code (`docs/results/sass_{stage}.txt`, checked by the "
                    f"same test): {'; and '.join(facts)}.")
    for c, lit in zip(comps, _comparisons(stage, ncu_rows, compiled=False)):
        if lit.host["ideal"] != c.host["ideal"]:
            out[-1] += (f" Read as written, the source would take {_per_block(lit.host['ideal'], c.blocks)} "
                        f"conflict-free {ACCESS[c.op][:-1]} wavefronts per block ({c.variant}); the profiler counts "
                        f"{_per_block(c.measured['ideal'], c.blocks)}.")
            break
    c = next((c for c in comps if c.measured["instructions"] > c.host["requests"]), None)
    if c:
        out[-1] += (f" The {ACCESS[c.op][:-1]} instructions ({_per_block(c.measured['instructions'], c.blocks)} per "
                    f"block, {c.variant}) outnumber the requests with an active thread "
                    f"({_per_block(c.host['requests'], c.blocks)}): the profiler counts the instructions of warps "
                    f"with no active thread too, and they take no wavefront.")
    return "\n\n".join(p.strip() for p in out if p.strip())


def tolerance_note(ncu_rows, source_rows=()):
    """Why the aggregate comparison allows what it allows, from every profiled row."""
    worst = max(_comparisons(None, ncu_rows), key=lambda c: abs(c.excess))
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
            f"{ACCESS[worst.op]}). So only the aggregate comparison keeps a tolerance, ±{100 * br.TOLERANCE:.0f}% of the "
            f"conflict-free wavefronts, and the line-by-line one decides: each drift planted in the test (kernel "
            f"edits such as 03's padding i / 16, 01's transposed tid, 08's kPad 2, and edits of the analysis such as "
            f"a broadcast counted as a conflict) fails it, or fails the sums or the machine-code checks, with a "
            f"message that names the stage and the line.")


def gemm_access(stage, texts, op, tile, pad=0):
    """How warp 0 of gemm_kernel<tile, pad> makes the access `texts` (an array and its indices as the source writes
    them; a list where a sentence speaks of several at once, which must then agree) in the host run of the source:
    the distinct words of one request, whether they are consecutive, their span, and the most wavefronts any of
    its requests takes (1: no conflict)."""
    found = []
    for text in [texts] if isinstance(texts, str) else texts:
        line, array = br.line_of(stage, text), text.split("[", 1)[0]
        reqs = [r for r in br.gemm_block(stage, tile, pad, compiled=False)
                if (r.line, r.array, r.op, r.warp) == (line, array, op, 0)]
        if not reqs:
            raise br.host_run.HostRunError(f"{stage}: the host run made no {op} of {array} at line {line}")
        words = sorted({w for _, w in reqs[0].lanes})
        found.append({"words": len(words), "consecutive": words == list(range(words[0], words[0] + len(words))),
                      "span": words[-1] - words[0] + 1, "degree": max(r.wavefronts() for r in reqs)})
    if any(a != found[0] for a in found):
        raise br.host_run.HostRunError(f"{stage}: {texts} differ in the host run ({found}); a page speaks of them as one")
    return found[0]
