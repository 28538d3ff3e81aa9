"""The maintainers' tools (./maint/do, maint/__main__.py): what regenerates the evidence on a GPU (measure.py, profile
and the studies), renders and checks the docs (make_docs.py, docsgen/, the pictures of diagrams.py), plants the bugs
the checks must catch (mutants.py), and the maintainers' tests (checks.py, tests/). Nothing on the reader's path
(scripts/, common/, the stages) imports from here."""
