"""The plumbing in one place: a reader's page (README, the stage pages) names only the commands a reader runs
(./ladder run, diff, try, the stage binaries); the commands that regenerate the evidence, test names, build and try
paths, the project's own scripts and tool history belong to method.md or the folded evidence."""
import re

from .base import NOT_MEASURED
from .lengths import unfolded

PLUMBING = re.compile(r"\./ladder (?:measure|profile|sweep|probe|mutants|docs)\b|cuobjdump|`ncu\b|scripts/[\w/]+\.py|"
                      r"\btests/[\w/.]+|build/try|build/tests|docs/results/|common/[\w.]+|CCCL \d|"
                      r"compute-sanitizer --|the test `[\w.]+`")


def plumbing_problems(rendered):
    """{page: text}: each unfolded line of a reader's page that names plumbing."""
    out = []
    for page, text in rendered.items():
        if not (str(page) == "README.md" or str(page).startswith("docs/stages/")):
            continue
        for line in unfolded(text).splitlines():
            found = PLUMBING.search(line)
            # a note of what is not measured yet may say which command measures it: it lasts until the results do
            if found and not line.startswith(("|", "#", "<", "![")) and NOT_MEASURED not in line:
                out.append(f"{page}: names `{found.group(0)}` in the reader's text (move it to method.md or fold it)")
    return out
