"""The reader's Python, run from the repository's root (python3 -m scripts.ladder): ./ladder's commands (ladder.py;
run.py: run, diff, test; tries.py: try), the stages and their programs (stages.py), the build (build.py), and what
judges a stage's code without a GPU or beside one: its kernels run on the host (host_run.py, host_checks.py), the
rules of its machine code (sass.py) and compute-sanitizer (sanitize.py)."""
