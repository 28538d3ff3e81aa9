"""The docs builder behind ./maint/do docs (maint/make_docs.py): base (result files, formatting), numbers, compare (the
only comparative words, and the conditions a cause rests on), sources, tables, render (Jinja2, the glossary's links),
checks, charts, and synthetic_gpu (a second GPU for the claims check); a template may call the functions of the first
five."""
