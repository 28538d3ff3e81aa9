#!/usr/bin/env python3
"""Each reduce stage must differ from the one before it only by its technique.

Compares the code below the header comment (everything from the first #include on) of each adjacent pair
of stages and fails if a diff changes more lines than its budget: harness code smeared into a stage, or a
rename that touches every line, shows up here.

Budgets (changed lines = removed + added, as `diff` counts them):
  01 -> 02 ... 05 -> 06   40 lines: one technique in a ~60-line file
  06 -> 07               105 lines: three combine strategies replace the relaunch loop, and a kernel of its
                          own (one_block_kernel, about 25 lines) sums an input one block covers, with no combine
"""
import difflib
import pathlib
import sys

STAGES = sorted(p.parent.name for p in pathlib.Path(".").glob("0*/reduce.cu"))
BUDGET = {("06_float4", "07_multiblock"): 105}
DEFAULT_BUDGET = 40


def code(stage: str) -> list[str]:
    lines = pathlib.Path(stage, "reduce.cu").read_text().splitlines()
    for i, line in enumerate(lines):
        if line.startswith("#include"):
            return lines[i:]
    raise SystemExit(f"{stage}/reduce.cu has no #include line")


def changed_lines(a: list[str], b: list[str]) -> int:
    return sum(1 for d in difflib.ndiff(a, b) if d[:2] in ("- ", "+ "))


def main() -> int:
    failed = False
    for before, after in zip(STAGES, STAGES[1:]):
        changed = changed_lines(code(before), code(after))
        budget = BUDGET.get((before, after), DEFAULT_BUDGET)
        verdict = "ok" if changed <= budget else "OVER BUDGET"
        print(f"{before} -> {after}: {changed} changed lines (budget {budget}) {verdict}")
        failed |= changed > budget
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
