"""The line budget (maint/budget.txt): every line git tracks in each group of folders against the lines it may hold;
a group over its budget fails. The check's own planted bug: every budget one line lower must fail."""
import subprocess
import sys

from maint.tests import ROOT, verdict

def over(budget, counts):
    return [f"{g}: {counts[g]} lines, over its budget of {limit}" for g, (_, limit) in budget.items()
            if counts[g] > limit]

def main():
    budget = {}  # {group: (paths, lines)}: 'group lines path...' per line; a group named by others' names sums them
    for line in (ROOT / "maint" / "budget.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            group, lines, *paths = line.split()
            budget[group] = ([q for p in paths for q in budget.get(p, ([p], 0))[0]], int(lines))
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--cached", "--others", "--exclude-standard"],
                           capture_output=True, text=True, check=True).stdout.split()  # tracked, and new not ignored
    counts = {group: sum(len((ROOT / f).read_bytes().splitlines()) for f in files
                         if any(f == p or f.startswith(p.rstrip("/") + "/") for p in paths) and (ROOT / f).is_file())
              for group, (paths, _) in budget.items()}
    for group, (_, limit) in budget.items():
        print(f"{group:14} {counts[group]:6} of {limit}")
    planted = {g: (paths, counts[g] - 1) for g, (paths, _) in budget.items()}
    problems = over(budget, counts) + ([] if len(over(planted, counts)) == len(budget) else
                                       ["a budget one line below its folder's count was not reported"])
    return verdict("budget", problems, "every folder within its budget")

if __name__ == "__main__":
    sys.exit(main())
