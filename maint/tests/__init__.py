"""The maintainers' checks, each a program that ./maint/do test runs (maint/checks.py lists them)."""
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]

def verdict(name, problems, passed):
    """Each problem on stderr as `name: problem`, or else `name: passed` on stdout; the exit status, 1 or 0."""
    for p in problems:
        print(f"{name}: {p}", file=sys.stderr)
    if not problems:
        print(f"{name}: {passed}")
    return 1 if problems else 0

def scratch_copy(tmp):
    """A clone of the project in tmp/tree with the working tree's changes and new files that git does not ignore."""
    tree = pathlib.Path(tmp) / "tree"
    subprocess.run(["git", "clone", "--quiet", "--shared", str(ROOT), str(tree)], check=True)
    diff = subprocess.run(["git", "-C", str(ROOT), "diff", "HEAD", "--binary"], capture_output=True, check=True).stdout
    if diff:
        subprocess.run(["git", "-C", str(tree), "apply", "--whitespace=nowarn"], input=diff, check=True)
    for f in subprocess.run(["git", "-C", str(ROOT), "ls-files", "--others", "--exclude-standard"],
                            capture_output=True, text=True, check=True).stdout.split():
        (tree / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, tree / f)
    return tree
