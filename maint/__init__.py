"""The maintainers' tools (./maint/do): measuring on a GPU, the docs, the planted bugs and the maintainers' tests.
Nothing on the reader's path (scripts/, common/, the stages) imports from here."""
from scripts.stages import ROOT, gemm_stages, regimes

def gemm_stage():
    """The first GEMM rung (the one the docs' GEMM tables are of), or None."""
    return next(iter(gemm_stages()), None)

def has_stream(stage):
    """Whether the stage has a grid-stride loop (the stream regime); a tree-only stage runs one element per thread."""
    return "stream" in regimes(stage)

def experiments():
    """Every experiment kept as a patch: docs/experiments/<stage>/<name>.patch -> [(stage, path)]."""
    return [(p.parent.name, p) for p in sorted((ROOT / "docs" / "experiments").glob("*/*.patch"))]
