#!/usr/bin/env python3
"""Every experiment kept as a patch (docs/experiments/<stage>/<name>.patch) applies to its stage file as it is
now, and changes it; and the check is seen to work: each patch with one context line altered must be refused."""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from ladder import StageError, apply_patch, experiments, stage_file  # noqa: E402


def main():
    problems, found = [], experiments()
    for stage, patch in found:
        rel = patch.relative_to(ROOT)
        text = stage_file(stage).read_text()
        try:
            if apply_patch(text, patch.read_text(), str(rel)) == text:
                problems.append(f"{rel}: applies but changes nothing")
        except StageError as e:
            problems.append(str(e))
        # The planted bug: a stale patch (one context line no longer in the file) must not apply.
        lines = patch.read_text().splitlines(keepends=True)
        i = next(k for k, l in enumerate(lines) if l.startswith(" ") and l.strip())
        stale = "".join(lines[:i] + [" " + lines[i][1:].rstrip("\n") + " // changed\n"] + lines[i + 1:])
        try:
            apply_patch(text, stale, str(rel))
            problems.append(f"{rel}: a stale copy (context line {i + 1} altered) applied: the check is broken")
        except StageError:
            pass
    for p in problems:
        print(f"experiments: {p}", file=sys.stderr)
    if not problems:
        print(f"experiments: {len(found)} patch(es) apply to their stage files; stale copies are refused")
    return 1 if problems or not found else 0


if __name__ == "__main__":
    sys.exit(main())
