"""Machine-code facts the pages quote, read from the saved SASS (docs/results/sass_<stage>.txt)."""
from .base import helper, not_measured, NotMeasured, state


def sass_lines(stage):
    path = state.results / f"sass_{stage}.txt"
    if not path.exists():  # a stage not profiled yet: its page says so where it would quote the machine code
        not_measured.add(f"{stage}: no docs/results/sass_{stage}.txt (./maint/do profile on a GPU)")
        raise NotMeasured(f"{stage} is not profiled yet")
    return path.read_text().splitlines()


def sass_span(stage, start, end, last=False):
    """From the first instruction containing start to the first (or last) after it containing end."""
    lines = sass_lines(stage)
    a = next(i for i, l in enumerate(lines) if start in l)
    after = [i for i in range(a + 1, len(lines)) if end in lines[i]]
    return lines[a:(after[-1] if last else after[0]) + 1]


@helper
def sass(stage, start, end, last=False):
    return "```\n" + "\n".join(sass_span(stage, start, end, last)) + "\n```"


@helper
def sass_tree(stage):
    """The shared-memory tree of a stage's kernel: from the first block barrier to the last."""
    return sass(stage, "BAR.SYNC", "BAR.SYNC", last=True)


@helper
def lds_predicated(stage):
    """Whether the tree's shared loads carry a predicate (@P) instead of being branched around."""
    return any(" LDS" in l and l.split("*/ ")[1].startswith("@") for l in sass_span(stage, "BAR.SYNC", "BAR.SYNC", True))


@helper
def loads_per_iteration(stage):
    """Global loads in the body of the grid-stride loop (from the first LDG to the branch back)."""
    return sum("LDG" in l for l in sass_span(stage, "LDG", "BRA"))


@helper
def sass_has(stage, text):
    """Whether the stage's saved machine code holds an instruction containing text ('CCTL.IVALL')."""
    return any(text in l for l in sass_lines(stage))
