"""The docs builder behind ./maint/do docs (maint/make_docs.py): a template may call the functions of base, numbers,
compare (the only comparative words and the conditions), sources and tables; render, checks, synthetic_gpu."""
