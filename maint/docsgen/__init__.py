"""The docs builder behind ./maint/do docs (maint/make_docs.py is its command line). Each module imports what it uses
from the ones before it: base (paths, result files, formatting), numbers (what the prose quotes), compare (the only
comparative words, and the conditions a cause rests on), sources (code, machine code, saved reports), tables, render
(Jinja2 and the glossary's links), checks and charts; synthetic_gpu writes a second GPU's results for the claims
check. A template may call the functions of base, numbers, compare, sources and tables (render.py)."""
