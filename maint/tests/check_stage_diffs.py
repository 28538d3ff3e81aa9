#!/usr/bin/env python3
"""Each reduce stage must differ from the one before it only by its technique.

Compares the code below the header comment (everything from the first #include on) of each adjacent pair
of stages and fails if a diff changes more lines than its budget: harness code smeared into a stage, or a
rename that touches every line, shows up here.

Budgets (changed lines = removed + added, as `diff` counts them):
  40 lines: one technique in a ~60-line file
  105 lines: a rung whose combine strategies differ from the one before (the combine stage: three strategies
             replace the relaunch loop, and a kernel of its own sums an input one block covers, with no combine)
"""
import difflib
import sys

from scripts.stages import combines, reduce_stages, stage_file

DEFAULT_BUDGET = 40
COMBINE_BUDGET = 105  # a rung that changes how partial sums are combined (its --describe lists other combines)


def code(stage: str) -> list[str]:
    lines = stage_file(stage).read_text().splitlines()
    for i, line in enumerate(lines):
        if line.startswith("#include"):
            return lines[i:]
    raise SystemExit(f"{stage}/{stage_file(stage).name} has no #include line")


def changed_lines(a: list[str], b: list[str]) -> int:
    return sum(1 for d in difflib.ndiff(a, b) if d[:2] in ("- ", "+ "))


def main() -> int:
    failed = False
    stages = reduce_stages()
    for before, after in zip(stages, stages[1:]):
        changed = changed_lines(code(before), code(after))
        budget = COMBINE_BUDGET if combines(before) != combines(after) else DEFAULT_BUDGET
        verdict = "ok" if changed <= budget else "OVER BUDGET"
        print(f"{before} -> {after}: {changed} changed lines (budget {budget}) {verdict}")
        failed |= changed > budget
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
