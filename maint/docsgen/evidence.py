"""The evidence a reviewer wants, once per stage page and folded at its end, off the reader's path: the host run
of the stage's code against Nsight Compute's counters, the profiler's rows of the launches the page compares, and the command
that repeats them."""

from ..model_pages import model_check

from .base import helper, NOT_MEASURED, not_measured, NotMeasured, rows
from .compare import profile_command, profile_table


@helper
def evidence(stage, cases, command=None, extra=""):
    """The folded evidence of a stage page: model_check, profile_table(cases), the ncu command for `command` (a
    (stage, variant) pair; the first case by default), then `extra` (Markdown the page adds, e.g. machine code)."""
    command = command or cases[0]
    try:
        profile = [profile_table(cases), "", profile_command(*command)]
    except NotMeasured:  # a stage not profiled yet: the section is there, and says so
        not_measured.add(f"{stage}: no rows in docs/results/ncu.csv")
        profile = [NOT_MEASURED + " (`./maint/do profile` on a GPU)"]
    parts = ['<a id="evidence"></a>', "<details>",
             "<summary><b>Evidence</b>: the host run of this stage's code against Nsight Compute's counters, the "
             "profiler's rows and the command that repeats them</summary>", "",
             "### The host run against the counters", "", model_check(stage, rows("ncu"), rows("ncu_source")), "",
             "### The profiler's rows", "", "The first launch of each, as `./maint/do profile` saved it:", "",
             *profile, ""]
    if extra:
        parts += [extra.strip(), ""]
    return "\n".join(parts + ["</details>"])
