"""A stage is a folder: in a scratch copy of the project, the last stage copied as NN_scratch (the next free number),
its main() and page template renamed, as CONTRIBUTING.md tells a contributor. Then in the copy: CMake registers its
tests and builds it; the docs render and --check passes, naming it as not measured, and every other page keeps every
line but those naming it; the runner's checks, the stage diffs, the saved machine code and the thread models pass;
without its template, --check fails naming the missing page. Builds the new stage for one GPU; LADDER_BUILD the rest."""
import concurrent.futures
import difflib
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

from maint.tests import scratch_copy, verdict
from scripts.stages import ROOT, build_dir, ladder_stages, stage_file

def add_stage(dst):
    last = ladder_stages()[-1]
    new = f"{int(last[:2]) + 1:02d}_scratch"
    shutil.copytree(dst / last, dst / new)
    source = dst / new / stage_file(last).name
    source.write_text(source.read_text().replace(f'"{last}"', f'"{new}"'))
    pages = dst / "docs" / "templates" / "stages"  # the new page keeps the last's pictures; its title is its name's
    (pages / f"{new}.md").write_text((pages / f"{last}.md").read_text().replace(f'"{last}"', f'"{new}"'))
    return new

def build(dst, new):
    out = dst / "build"
    cache = (build_dir() / "CMakeCache.txt").read_text().splitlines()
    archs = next((line.split("=", 1)[1] for line in cache if line.startswith("CMAKE_CUDA_ARCHITECTURES:")), "75")
    archs = archs.split(";")[0]  # one GPU is enough to build and describe the stage
    ninja = ["-G", "Ninja"] if shutil.which("ninja") else []  # as ./ladder configures: it builds faster than make
    steps = [["cmake", "-S", str(dst), "-B", str(out), *ninja, f"-DCMAKE_CUDA_ARCHITECTURES={archs}"],
             ["cmake", "--build", str(out), "--target", new, "--parallel", str(os.cpu_count() or 2)]]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True)
        if done.returncode != 0:
            return f"{' '.join(step[:2])} failed in the copy:\n{(done.stdout + done.stderr)[-3000:]}"
    for program in (build_dir() / "bin").iterdir():  # the other programs are this build's
        if not (out / "bin" / program.name).exists():
            (out / "bin" / program.name).symlink_to(program)
    listed = subprocess.run(["ctest", "-N"], cwd=out, capture_output=True, text=True).stdout
    if f"{new}.self_test" not in listed:
        return f"CMake did not register {new}'s tests:\n{listed[-1500:]}"

def run(dst, *args, build=None):
    build = str(build or dst / "build")  # BUILD_DIR too: maint reads it before LADDER_BUILD (CI sets it)
    env = {**os.environ, "LADDER_BUILD": build, "BUILD_DIR": build, "PYTHONPATH": str(dst)}
    return subprocess.run([sys.executable, "-m", *args], cwd=dst, capture_output=True, text=True, env=env)

CHECKS = [["maint", "docs", "--check"], ["maint.tests.test_runner", "stage_roles", "arguments"],
          ["maint.tests.check_stage_diffs"], ["maint.tests.check_saved_sass", "{new}"],
          ["maint.tests.check_thread_models", "--stage={new}"]]

def checks(dst, new, other):
    """other: a second copy with the stage but not its template, checked beside the rest with dst's build."""
    render = run(dst, "maint", "docs")
    if render.returncode != 0:
        return [f"the docs with {new}: rendering exited {render.returncode}:\n{render.stderr[-3000:]}"]
    problems = []  # lines of the project's pages that the copy changed without naming it (or only in a number)
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        rel = page.relative_to(ROOT)
        if rel.parts[:2] == ("docs", "templates") or not (dst / rel).exists():
            continue
        old, now = page.read_text().splitlines(), (dst / rel).read_text().splitlines()
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, now, autojunk=False).get_opcodes():
            counted = [re.sub(r"\d+", "#", l) for l in old[i1:i2]] == [re.sub(r"\d+", "#", l) for l in now[j1:j2]]
            if tag != "equal" and not counted and not any(new in line for line in now[j1:j2]):
                problems.append(f"{rel}: lines {i1 + 1}-{i2} changed, and nothing there names {new}: "
                                f"{(old[i1:i2] or now[j1:j2])[:2]}")
    (other / "docs" / "templates" / "stages" / f"{new}.md").unlink()
    jobs = [(dst, [arg.format(new=new) for arg in cmd]) for cmd in CHECKS] + [(other, ["maint", "docs", "--check"])]
    with concurrent.futures.ThreadPoolExecutor(len(jobs)) as pool:  # each a process of its own
        *done, missing = pool.map(lambda job: run(job[0], *job[1], build=dst / "build"), jobs)
    problems += [f"{' '.join(cmd)} with {new}: exit {proc.returncode}:\n{(proc.stdout + proc.stderr)[-1500:]}"
                 for (_, cmd), proc in zip(jobs, done) if proc.returncode not in (0, 77)]
    if f"not measured yet: {new}" not in done[0].stdout:
        problems.append(f"--check did not name {new} among what is not measured:\n{done[0].stdout[-1500:]}")
    if missing.returncode == 0 or f"docs/templates/stages/{new}.md" not in missing.stderr:
        problems.append(f"without its template, --check did not name it (exit {missing.returncode}):\n"
                        f"{missing.stderr[-1500:]}")
    return problems

def main():
    with tempfile.TemporaryDirectory() as tmp:
        dst, other = scratch_copy(tmp), scratch_copy(pathlib.Path(tmp) / "other")
        new = add_stage(dst)
        add_stage(other)
        problems = [problem] if (problem := build(dst, new)) else checks(dst, new, other)
    return verdict("add_stage", problems, f"{new} added as a folder and a page template: CMake, the docs, the "
                   "runner's checks and the stage diffs take it, no other page loses a line, and a missing template "
                   "is named")

if __name__ == "__main__":
    sys.exit(main())
