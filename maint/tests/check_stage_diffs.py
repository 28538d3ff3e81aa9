"""Each reduce stage differs from the one before only by its technique: from the first #include on, each adjacent pair
may change no more lines (removed + added) than its budget; harness code smeared into a stage, or a rename, shows."""
import sys

from scripts.run import stage_diff
from scripts.stages import combines, reduce_stages

DEFAULT_BUDGET = 40  # one technique in a ~60-line file
COMBINE_BUDGET = 105  # a rung whose combines differ from the one before: three strategies replace the relaunch loop

def main():
    failed, stages = False, reduce_stages()
    for before, after in zip(stages, stages[1:]):
        changed = sum(line[:1] in "+-" for line in stage_diff(before, after, context=0).splitlines()[2:])  # no ---/+++
        budget = COMBINE_BUDGET if combines(before) != combines(after) else DEFAULT_BUDGET
        print(f"{before} -> {after}: {changed} changed lines (budget {budget}) "
              f"{'ok' if changed <= budget else 'OVER BUDGET'}")
        failed |= changed > budget
    return 1 if failed else 0

if __name__ == "__main__":
    sys.exit(main())
