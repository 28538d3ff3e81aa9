"""The docs builder behind ./maint/do docs (maint/make_docs.py is its command line). Each module imports what it uses
from the ones before it: base (paths, result files, formatting), compare (the only comparative words), small_n,
conditions (the causes a page may state), tables, accuracy, code, experiments, charts, glossary, render (Jinja2),
claims, links, evidence; synthetic_gpu writes a second GPU's results for the claims check. A template may call the
functions marked @helper (base.py), and no other."""
