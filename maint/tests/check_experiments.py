"""Every experiment (docs/experiments/<stage>/<name>.patch) applies to its stage file as ./ladder try applies it, and
changes it, at the lines its hunk headers name; planted: hunks one line off are flagged. (check_cli.py has ./ladder try
refuse a stale patch and one given to another stage.)"""
import re
import sys

from maint.tests import verdict
from maint import experiments
from scripts.stages import ROOT, UsageProblem, stage_file
from scripts.tries import patched_text

def misplaced_hunks(text, source):
    """The hunks of a patch whose old lines (context and removed) are not the stage file's at the line it names."""
    lines, out = source.splitlines(), []
    for m in re.finditer(r"^@@ -(\d+),(\d+) [^\n]*\n((?:[ +\-][^\n]*\n?)*)", text, re.M):
        start, count = int(m.group(1)), int(m.group(2))
        old = [l[1:] for l in m.group(3).splitlines() if l[:1] in " -"]
        if len(old) != count or lines[start - 1:start - 1 + count] != old:
            out.append(f"the hunk at line {start} is not at line {start} of the file")
    return out

def main():
    problems, found = [], experiments()
    for stage, patch in found:
        rel = patch.relative_to(ROOT)
        try:
            if patched_text(stage, patch) == stage_file(stage).read_text():
                problems.append(f"{rel}: applies but changes nothing")
        except UsageProblem as e:
            problems.append(str(e))
        text, source = patch.read_text(), stage_file(stage).read_text()
        problems += [f"{rel}: {p} (rewrite its hunk headers)" for p in misplaced_hunks(text, source)]
        shifted = re.sub(r"^@@ -(\d+)", lambda m: f"@@ -{int(m.group(1)) + 1}", text, flags=re.M)
        if not misplaced_hunks(shifted, source):
            problems.append(f"{rel}: a copy with its hunks one line off passed: the check is broken")
    return verdict("experiments", problems, f"{len(found)} patch(es) apply to their stage files with git apply, at "
                   "the lines they name") or int(not found)

if __name__ == "__main__":
    sys.exit(main())
