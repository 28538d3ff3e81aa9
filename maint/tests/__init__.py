"""The maintainers' checks, each a program that ./maint/do test runs (maint/checks.py lists them)."""
import sys


def verdict(name, problems, passed):
    """Each problem on stderr as `name: problem`, or else `name: passed` on stdout; the exit status, 1 or 0."""
    for p in problems:
        print(f"{name}: {p}", file=sys.stderr)
    if not problems:
        print(f"{name}: {passed}")
    return 1 if problems else 0
