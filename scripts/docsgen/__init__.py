"""The docs builder behind ./ladder docs (scripts/make_docs.py is its command line): one module per concern, each
building on the ones before it, in this order."""
from . import base, compare, small_n, conditions, tables, accuracy, code, experiments, charts, glossary, render, \
    claims, links, evidence  # noqa: F401

MODULES = [base, compare, small_n, conditions, tables, accuracy, code, experiments, charts, glossary, render, claims,
           links, evidence]
