"""The docs builder behind ./ladder docs (scripts/make_docs.py is its command line): one module per concern, each
building on the one before it (a star import), in this order: base, compare, small_n, conditions, tables, accuracy,
code, experiments, charts, glossary, render, claims, links, evidence. evidence, the last, holds every helper."""
