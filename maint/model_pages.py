"""What the stage pages say of the host runs (block_requests.py): the conflict degrees of the trees, the race the
unrolled warp would have, and the host-run-against-profiler tables, line by line and in aggregate."""
from . import block_requests as br
from .block_requests import ACCESS
from .docsgen.base import md_table

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
    return f"{value / blocks:,.0f}" if value % blocks == 0 else f"{value / blocks:,.2f}"

def _comparisons(ncu_rows, stage=None, compiled=True, source_rows=None):
    """The comparisons of the profiled launches in ncu_rows (of one stage): in aggregate, or by line (source_rows)."""
    found = {(r["stage"], r["variant"]): r for r in ncu_rows}
    held = [p for p in br.PROFILED if p in found and stage in (None, p[0])]
    if source_rows is None:
        return [c for p in held for c in br.compare(found[p], compiled)]
    measured = {(x["stage"], x["variant"]) for x in source_rows}
    return [c for p in held if p in measured for c in br.compare_lines(found[p], source_rows)]

def model_check(stage, ncu_rows, source_rows=()):
    """Line by line, then in aggregate, then what the compiler changed, in generated words."""
    comps, lines = _comparisons(ncu_rows, stage), _comparisons(ncu_rows, stage, source_rows=source_rows)
    if not comps or not lines:
        return ("(no profiled launch of this stage in ncu.csv: run ./maint/do profile)" if not comps else
                "(no source counters of this stage in ncu_source.csv: run ./maint/do profile)")
    wrong, excess = [p for c in lines for p in c.problems()], [100 * c.excess for c in comps]
    parting = [f"{c.variant} {ACCESS[c.op]}: " + ", ".join(
        f"{name} {_per_block(c.host[k], c.blocks)} in the host run, {_per_block(c.measured[k], c.blocks)} measured"
        for name, k in (("instructions", "instructions"), ("conflict-free wavefronts", "ideal"),
                        ("bank conflicts", "conflicts")) if c.host[k] != c.measured[k]) for c in comps if c.problems()]
    by_line = [["", "", "", c.text] + [""] * 6 if c.host is None else [c.variant, str(c.line), f"`{c.text}`",
               ACCESS[c.op], *(f"{v:,}" for k in br.COUNTS for v in (c.host[k], c.measured[k]))] for c in lines]
    by_launch = [[f"{c.variant}, {c.blocks:,} blocks" + f" × {c.repeat // c.blocks} steps of K"
                  * (c.stage == "08_gemm_tiled"), ACCESS[c.op], f"{c.host['requests']:,}",
                  f"{c.measured['instructions']:,}",
                  *(f"{v:,}" for k in ("ideal", "conflicts") for v in (c.host[k], c.measured[k])),
                  f"{100 * c.excess:+.2f}%"] for c in comps]
    facts = [text for text, _ in br.COMPILED.get(stage, [])]
    notes = [f"The host run follows the machine code (`docs/results/sass_{stage}.txt`, checked by the same test) "
             "where it differs from the source."] * bool(facts) + [f"{t[0].upper()}{t[1:]}." for t in facts]
    notes += [f"Read as written, the source would take {_per_block(lit.host['ideal'], c.blocks)} conflict-free "
              f"{ACCESS[c.op][:-1]} wavefronts per block ({c.variant}); the profiler counts "
              f"{_per_block(c.measured['ideal'], c.blocks)}." for c, lit in zip(comps, _comparisons(
                  ncu_rows, stage, compiled=False)) if lit.host["ideal"] != c.host["ideal"]][:1]
    notes += [f"The {ACCESS[c.op][:-1]} instructions ({_per_block(c.measured['instructions'], c.blocks)} per block, "
              f"{c.variant}) outnumber the requests with an active thread ({_per_block(c.host['requests'], c.blocks)})"
              ": the profiler counts the instructions of warps with no active thread too, and they take no wavefront."
              for c in comps if c.measured["instructions"] > c.host["requests"]][:1]
    return "\n\n".join([
        "The host run executes this stage's own kernel code for one block (`scripts/host_run.py`) and logs every "
        "shared-memory access with its thread, step and source line. Multiplied by the blocks launched, each line's "
        "instructions, wavefronts and ideal wavefronts are set against Nsight Compute's source counters (the same profile, per "
        "SASS instruction, `docs/results/ncu_source.csv`): "
        + (f"{len(wrong)} of {len(lines)} rows differ: " + "; ".join(wrong) if wrong else
           f"all {len(lines)} rows agree exactly.") + " The maintainers' check `thread_models` (`./maint/do test`) demands that "
        "they do.",
        md_table(["launch", "line", "source", "access", "instructions, host run", "ncu", "wavefronts, host run", "ncu",
                  "ideal wavefronts, host run", "ncu"], by_line, left=4),
        f"The aggregate counters of the same launches (`docs/results/ncu.csv`) count more bank conflicts than the "
        f"instructions do: {min(excess):+.2f}% to {max(excess):+.2f}% of the conflict-free wavefronts here, "
        f"{'beyond' if parting else 'within'} the test's tolerance of ±{100 * br.TOLERANCE:.0f}% "
        f"([why](01_naive.md#why-that-tolerance))." + (f" Where they part, per block: {'; '.join(parting)}." if parting
                                                       else ""),
        md_table(["launch (first, n as profiled)", "access", "requests, host run", "instructions, ncu",
                  "conflict-free wavefronts, host run", "ncu", "bank conflicts, host run", "ncu", "excess"], by_launch,
                 left=2),
        *[" ".join(notes)] * bool(notes)])

def tolerance_note(ncu_rows, source_rows=()):
    """Why the aggregate comparison allows what it allows, from every profiled row."""
    worst = max(_comparisons(ncu_rows), key=lambda c: abs(c.excess))
    lines = _comparisons(ncu_rows, source_rows=source_rows)
    return (f"Per source line the comparison is exact: {sum(not c.problems() for c in lines)} of {len(lines)} lines "
            f"of the {len(br.PROFILED)} profiled launches have the host run's instructions, wavefronts and ideal "
            f"wavefronts, to the last one. Those per-instruction counts are Nsight Compute's source counters, which it "
            f"gathers by instrumenting the kernel's machine code (its SASS-patching metrics: "
            f"forums.developer.nvidia.com/t/definition-of-sass-inst-executed) and which follow from the addresses each "
            f"warp's instruction touches, as the host run's do. The aggregate bank-conflict counters "
            f"(`l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld/st.sum`) are the L1's own, and count more than "
            f"the instructions add up to: the largest excess is {100 * worst.excess:+.2f}% of the conflict-free "
            f"wavefronts ({worst.stage} {worst.variant}, {ACCESS[worst.op]}). So only the aggregate comparison keeps a "
            f"tolerance, ±{100 * br.TOLERANCE:.0f}% of the conflict-free wavefronts. The line-by-line one decides: "
            "each drift planted in the test fails it, or fails the sums or the machine-code checks, with a message "
            "that names the stage and the line. The drifts edit a kernel (03's padding i / 16, 01's transposed tid, "
            "08's kPad 2) or the analysis (a broadcast counted as a conflict).")

def gemm_access(stage, texts, op, tile, pad=0):
    """Warp 0's access `texts` (as the source writes it; a list must agree) in gemm_kernel<tile, pad>'s host run:
    distinct words of one request, whether consecutive, their span, and the most wavefronts of its requests."""
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
        raise br.host_run.HostRunError(f"{stage}: {texts} differ in the host run ({found}); a page speaks of them as "
                                       "one")
    return found[0]
