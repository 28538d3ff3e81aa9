"""Code on the pages: stage diffs, excerpts, the stage list from the stage files, and the build's own settings."""
import json
import re

from scripts.run import stage_diff
from scripts import sanitize
from scripts.stages import ladder_stages, reduce_stages, stage_file
from .base import helper, docs_path, DocsError, md_table, ROOT
from .tables import link


@helper
def diff_lines(stage):
    """How many lines the diff of a stage from the one before it has."""
    i = reduce_stages().index(stage)
    return len(stage_diff(reduce_stages()[i - 1], stage).splitlines())


@helper
def diff(stage):
    """The code this stage adds to the previous reduce stage: exactly what `./ladder diff` prints."""
    i = reduce_stages().index(stage)
    if i == 0:
        raise DocsError(f"{stage} has no previous stage")
    prev = reduce_stages()[i - 1]
    return ("```diff\n" + stage_diff(prev, stage) + "\n```\n\n"
            f"`./ladder diff {prev[:2]} {stage[:2]}` prints exactly this, with the files' own line numbers. It leaves out "
            f"the header comment, which says in words what changed and why; `diff -u {prev}/reduce.cu "
            f"{stage}/reduce.cu` shows that too.")


@helper
def excerpt(stage, start, end, through=False):
    """Lines of a stage file from the first line containing `start` up to the first after it containing `end`
    (that line too, with through), blank lines at its end dropped."""
    lines = stage_file(stage).read_text().splitlines()
    a = next(i for i, l in enumerate(lines) if start in l)
    b = next(i for i in range(a, len(lines)) if end in lines[i]) + (1 if through else 0)
    return "```cuda\n" + "\n".join(lines[a:b]).rstrip("\n") + "\n```"


def quoted(text, source, whose):
    """`text` as a page quotes it; the docs fail to render while source (spaces ignored) does not hold it."""
    if re.sub(r"\s+", "", text) not in re.sub(r"\s+", "", source):
        raise DocsError(f"a page quotes `{text}` from {whose}, which no longer holds it: update the sentence")
    return f"`{text}`"


@helper
def code(stage, text):
    """`text`, a quote of the stage's code (comments left out), so a sentence that quotes a kernel follows it."""
    return quoted(text, re.sub(r"//[^\n]*|/\*.*?\*/", "", stage_file(stage).read_text(), flags=re.S), stage)


@helper
def patch_code(stage, name, text):
    """`text`, a quote of the lines an experiment's patch adds."""
    patch = ROOT / "docs" / "experiments" / stage / f"{name}.patch"
    added = "".join(l[1:] for l in patch.read_text().splitlines() if l.startswith("+") and not l.startswith("+++"))
    return quoted(text, added, f"{patch.name}'s added lines")


@helper
def img(name, alt):
    return f"![{alt}]({docs_path('img/' + name)})"


@helper
def stage_list():
    """One row per stage (its folder, in order): the stage, the one change its file's first line names, its page."""
    body = []
    for stage in ladder_stages():
        first = stage_file(stage).read_text().splitlines()[0]
        summary = first.removeprefix("//").strip().removeprefix(f"{stage}:").strip().rstrip(".")
        summary = re.sub(r"\b(__\w+|k[A-Z]\w*)\b", r"`\1`", summary)  # code names, as code
        body.append([f"`{stage}`", summary, link(stage)])
    return md_table(["stage", "the one change", "page"], body, ["---", "---", "---"])


@helper
def sanitizer_runs():
    """The compute-sanitizer runs of every stage's tests (scripts/sanitize.py): the tools, and the arguments the stage
    is given."""
    tools = sanitize.TOOLS
    named = tools[0] if len(tools) == 1 else f"{', '.join(tools[:-1])} and {tools[-1]}"
    return f"{named} on `{' '.join(sanitize.ARGS)}`"


@helper
def sanitizer_args():
    """The arguments a stage is given under compute-sanitizer in its tests."""
    return " ".join(sanitize.ARGS)


@helper
def default_architectures():
    """The compute capabilities CMake builds for without a GPU (cmake/CudaArchitectures.cmake), as '7.5, 8.0 and
    9.0 (plus PTX for newer GPUs)': an entry without -real also embeds PTX."""
    m = re.search(r'LADDER_DEFAULT_CUDA_ARCHITECTURES "([^"]+)"', (ROOT / "cmake" / "CudaArchitectures.cmake").read_text())
    archs = m.group(1).split(";")
    names = [f"{a.split('-')[0][:-1]}.{a.split('-')[0][-1]}" for a in archs]
    ptx = " (plus PTX for newer GPUs)" if any(not a.endswith("-real") for a in archs) else ""
    return " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names) + ptx


@helper
def preset_jobs():
    """The job count of the build presets (CMakePresets.json), which test_runner presets holds equal."""
    jobs = {p["jobs"] for p in json.loads((ROOT / "CMakePresets.json").read_text())["buildPresets"]}
    if len(jobs) != 1:
        raise DocsError(f"CMakePresets.json's build presets run {sorted(jobs)} jobs: the README says one number")
    return jobs.pop()
