#!/usr/bin/env python3
"""Adding a stage is a directory, a line in CMakeLists.txt and a page template: tried on a copy of the project.

The copy gets 09_example, the combine stage's directory under a new name, its add_subdirectory() line, and a page
template of the shape CONTRIBUTING.md describes. Then, in the copy:
  - ./ladder docs renders every page, 09_example's included, saying "not measured yet" where it has no results,
    and --check passes, naming 09_example among what is not measured;
  - the runner's tests (stage roles, arguments) and the stage-diff budgets pass;
  - without the template, --check fails naming the missing page.
A PASS proves the docs and the runner take the stage list from CMakeLists.txt and the stage files, not from a
count or a number typed somewhere; it does not build or run the new stage (that needs the toolchain and a GPU).
"""
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
NEW = "09_example"
TEMPLATE = """# {stage}: an example rung

A copy of the combine stage under a new name, to show what adding a rung takes.

## The diff from the stage before

{{{{ diff("{stage}") }}}}

## Measured

{{{{ stage_table("{stage}") }}}}

## One thing to try

Measure it: `./ladder measure` on a GPU writes its rows, and `./ladder docs` puts them here.

{{{{ experiments_section("{stage}") }}}}

{{{{ next_rung("{stage}") }}}}

{{{{ evidence("{stage}", [("{stage}", "stream")]) }}}}
"""


def copy_project(dst):
    """The project's files as git sees them, tracked or new but not ignored and still there (what a clone of a
    commit of this tree has), or the tree without build directories outside git."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True)
    files = [f for f in listed.stdout.decode().split("\0") if f and (ROOT / f).is_file()] \
        if listed.returncode == 0 else None
    if not files:
        shutil.copytree(ROOT, dst, dirs_exist_ok=True, ignore=shutil.ignore_patterns("build*", ".git"))
        return
    for f in files:
        (dst / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, dst / f)


def add_stage(dst):
    sys.path.insert(0, str(ROOT / "scripts"))
    from runner.stages import STAGES, combine_stage
    base = combine_stage()
    shutil.copytree(dst / base, dst / NEW)
    source = dst / NEW / "reduce.cu"
    source.write_text(source.read_text().replace(f'"{base}", {{', f'"{NEW}", {{'))
    cmake = dst / "CMakeLists.txt"
    last = f"add_subdirectory({STAGES[-1]})\n"
    cmake.write_text(cmake.read_text().replace(last, last + f"add_subdirectory({NEW})\n"))
    (dst / "docs" / "templates" / "stages" / f"{NEW}.md").write_text(TEMPLATE.format(stage=NEW))


def run(dst, *cmd):
    return subprocess.run([sys.executable, *cmd], cwd=dst, capture_output=True, text=True)


def main():
    try:
        import jinja2  # noqa: F401  (the docs are Jinja2 templates)
    except ImportError:
        print("SKIPPED: the docs need Jinja2 (apt-get install python3-jinja2); ./ladder test installs it")
        return 77
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        dst = pathlib.Path(tmp)
        copy_project(dst)
        add_stage(dst)
        render = run(dst, "scripts/make_docs.py")
        check = run(dst, "scripts/make_docs.py", "--check")
        if render.returncode != 0 or check.returncode != 0:
            problems.append(f"the docs with {NEW}: render exit {render.returncode}, --check exit {check.returncode}:\n"
                            + (render.stderr + check.stderr)[-3000:])
        elif f"not measured yet: {NEW}" not in check.stdout:
            problems.append(f"--check did not name {NEW} among what is not measured:\n{check.stdout[-1500:]}")
        for cmd in (["tests/test_runner.py", "stage_roles"], ["tests/test_runner.py", "arguments"],
                    ["tests/check_stage_diffs.py"]):
            proc = run(dst, *cmd)
            if proc.returncode != 0:
                problems.append(f"{' '.join(cmd)} with {NEW}: exit {proc.returncode}:\n{(proc.stdout + proc.stderr)[-1500:]}")
        (dst / "docs" / "templates" / "stages" / f"{NEW}.md").unlink()
        missing = run(dst, "scripts/make_docs.py", "--check")
        if missing.returncode == 0 or f"docs/templates/stages/{NEW}.md" not in missing.stderr:
            problems.append(f"without its template, --check did not name it (exit {missing.returncode}):\n"
                            f"{missing.stderr[-1500:]}")
    for p in problems:
        print(f"add_stage: {p}", file=sys.stderr)
    if not problems:
        print(f"add_stage: {NEW} added as a directory, a line and a template: the docs, the runner's tests and the "
              f"stage diffs take it, and a missing template is named")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
