#!/usr/bin/env python3
"""Every experiment kept as a patch (docs/experiments/<stage>/<name>.patch) applies to its stage file as it is now,
with git apply, as ./ladder try applies it, and changes it; and the check is seen to work: each patch with one
context line altered must be refused, and each patch given to another stage must be refused as that stage's."""
import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
from scripts.runner.stages import UsageProblem, reduce_stages, stage_file
from scripts.runner.tries import experiments, patched_text


def refused(stage, patch_text):
    with tempfile.NamedTemporaryFile("w", suffix=".patch") as f:
        f.write(patch_text)
        f.flush()
        try:
            patched_text(stage, pathlib.Path(f.name))
        except UsageProblem as e:
            return str(e)
    return None


def main():
    problems, found = [], experiments()
    for stage, patch in found:
        rel = patch.relative_to(ROOT)
        try:
            if patched_text(stage, patch) == stage_file(stage).read_text():
                problems.append(f"{rel}: applies but changes nothing")
        except UsageProblem as e:
            problems.append(str(e))
        # The planted bugs: a stale patch (one context line no longer in the file) must not apply...
        lines = patch.read_text().splitlines(keepends=True)
        i = next(k for k, line in enumerate(lines) if line.startswith(" ") and line.strip())
        stale = "".join(lines[:i] + [" " + lines[i][1:].rstrip("\n") + " // changed\n"] + lines[i + 1:])
        if not refused(stage, stale) or "does not apply" not in refused(stage, stale):
            problems.append(f"{rel}: a stale copy (context line {i + 1} altered) applied: the check is broken")
        # ...and a patch given to another stage is refused as the other stage's.
        other = next(s for s in reduce_stages() if s != stage)
        if f"it is an experiment of {stage}" not in (refused(other, patch.read_text()) or ""):
            problems.append(f"{rel}: given to {other}, it was not refused as an experiment of {stage}")
    for p in problems:
        print(f"experiments: {p}", file=sys.stderr)
    if not problems:
        print(f"experiments: {len(found)} patch(es) apply to their stage files with git apply; stale copies and "
              "copies given to another stage are refused")
    return 1 if problems or not found else 0


if __name__ == "__main__":
    sys.exit(main())
