"""What the stage pages say of the host runs (block_requests.py): the conflict degrees of the trees, the race the
unrolled warp would have, and the host run against the profiler's source counters, line by line."""
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

def model_check(stage, ncu_rows, source_rows):
    """Line by line (each profiled launch of the stage with source counters), then what the compiler changed."""
    found, measured = {(r["stage"], r["variant"]): r for r in ncu_rows}, {(x["stage"], x["variant"]) for x in source_rows}
    lines = [c for p in br.PROFILED if p[0] == stage and p in found and p in measured
             for c in br.compare_lines(found[p], source_rows)]
    if not lines:
        return ("(no profiled launch of this stage in ncu.csv: run ./maint/do profile)" if not any(r["stage"] == stage
                for r in ncu_rows) else "(no source counters of this stage in ncu_source.csv: run ./maint/do profile)")
    wrong = [p for c in lines for p in c.problems()]
    by_line = [["", "", "", c.text] + [""] * 6 if c.host is None else [c.variant, str(c.line), f"`{c.text}`",
               ACCESS[c.op], *(f"{v:,}" for k in br.COUNTS for v in (c.host[k], c.measured[k]))] for c in lines]
    facts = [text for text, _ in br.COMPILED.get(stage, [])]
    notes = [f"The host run follows the machine code (`docs/results/sass_{stage}.txt`, checked by the same test) "
             "where it differs from the source."] * bool(facts) + [f"{t[0].upper()}{t[1:]}." for t in facts]
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
        *[" ".join(notes)] * bool(notes)])

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
