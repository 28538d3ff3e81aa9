"""Code on the pages: stage diffs, and the machine-code facts read from the saved SASS."""

from .accuracy import *  # noqa: F401,F403 (each module builds on the ones before it)


def diff_lines(stage):
    """How many lines the diff of a stage from the one before it has."""
    i = REDUCE.index(stage)
    return len(stage_diff(REDUCE[i - 1], stage).splitlines())


def diff(stage):
    """The code this stage adds to the previous reduce stage: exactly what `./ladder diff` prints."""
    i = REDUCE.index(stage)
    if i == 0:
        raise DocsError(f"{stage} has no previous stage")
    prev = REDUCE[i - 1]
    return ("```diff\n" + stage_diff(prev, stage) + "\n```\n\n"
            f"`./ladder diff {prev[:2]} {stage[:2]}` prints exactly this, with the files' own line numbers. It leaves out "
            f"the header comment, which says in words what changed and why; `diff -u {prev}/reduce.cu "
            f"{stage}/reduce.cu` shows that too.")


def excerpt(stage, start, end, through=False):
    """Lines of a stage file from the first line containing `start` up to the first after it containing `end`
    (that line too, with through), blank lines at its end dropped."""
    lines = stage_file(stage).read_text().splitlines()
    a = next(i for i, l in enumerate(lines) if start in l)
    b = next(i for i in range(a, len(lines)) if end in lines[i]) + (1 if through else 0)
    return "```cuda\n" + "\n".join(lines[a:b]).rstrip("\n") + "\n```"


def img(name, alt):
    return f"![{alt}]({docs_path('img/' + name)})"
