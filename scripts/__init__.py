"""The project's Python, one package: the runner behind ./ladder (ladder.py, runner/), the docs builder (make_docs.py,
docsgen/), the host run of the stages' own kernels (host_run.py and what reads it), the planted bugs (mutants.py) and
the machine-code rules (sass.py). Run from the repository's root: python3 -m scripts.ladder, python3 -m
scripts.make_docs; the tests import it as `scripts`."""
