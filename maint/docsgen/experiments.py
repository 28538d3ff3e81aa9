"""The experiments kept as patches (docs/experiments/<stage>/) and the ./ladder try results beside them."""
import json
import re


from ..tests.check_try_file import CASES, ORIGINAL, STAGE
from scripts.stages import relative_error
from scripts.stages import stage_file
from scripts.tries import experiments
from .base import patch_target
from .base import (and_list, helper, docs_path, DocsError, f, md_table, measured, meta, NOT_MEASURED, not_measured, NotMeasured, optional,
                   pow2, ROOT, rows, select, state)
from .compare import compare_rows, distinct, NOISE, profile_command, profile_table, quicker, said
from .conditions import handoff_by_n
from .small_n import ncu, us, value_range
from .tables import cpu, try_table


@helper
def experiments_section(stage):
    """Every docs/experiments/<stage>/*.patch: the patch, its command, its measured rows and, where ./maint/do profile
    measured the patched build, the profiler rows beside the file's."""
    found = [p for s, p in experiments() if s == stage]
    if not found:  # nothing kept: the question above stands alone (method.md says how to keep one)
        return ""
    out = []
    for patch in found:
        name = patch.stem
        text = patch.read_text()
        intro, _, diff_text = text.partition("--- ")
        out.append(f"### {name}\n\n{' '.join(intro.split())}\n\n```diff\n--- {diff_text.rstrip()}\n```\n")
        out.append(f"`./ladder try {stage[:2]} {patch.relative_to(ROOT)}`, on the GPU measured here:\n")
        if not measured(f"try_{stage}_{name}"):  # a patch kept before it was measured
            not_measured.add(f"{stage}: the experiment {name}")
            out.append(NOT_MEASURED + " (`./maint/do measure` on a GPU)\n")
            continue
        out.append(try_table(f"try_{stage}_{name}") + "\n")
        profiled = [r for r in rows("ncu") if r["stage"] == stage and r["variant"].endswith(f", {name}")]
        if profiled:
            cases = []
            for r in profiled:
                regime = r["variant"].split(",")[0]
                cases += [(stage, regime), (stage, r["variant"])]
            out.append("<details>\n<summary><b>The profiler's rows</b>: first launch, the file beside the patch "
                       "(open it)</summary>\n\n`./maint/do profile` profiles every experiment that `./ladder try` has "
                       "built:\n")
            out.append(profile_table(cases) + "\n")
            variant = profiled[0]["variant"]
            command = profile_command(stage, variant.split(",")[0]).replace(
                f"build/bin/{stage}", f"build/try/bin/{patch_target(stage, patch)}")
            out.append(command + "\n")
            out.append(md_table(["kernel", "divergent branch targets", "active threads per instruction",
                                 "threads on per instruction", "warp instructions"],
                                [[f"{s} ({v})", ncu(s, v, "divergent"), ncu(s, v, "threads", ".1f"), ncu(s, v, "pred_on", ".1f"),
                                  ncu(s, v, "instructions")] for s, v in cases]) + "\n")
            out.append("</details>\n")
    return "\n".join(out)


@helper
def handoff_table():
    """07's handoff sweep: per n, atomic, last-block and the handoff in µs, the read-only kernel as the handoff's
    process timed it, the handoff's speed as % of that, and its time against atomic's. Where 07 runs one block (grid
    1) every column is the same one-block kernel, which the patch does not touch."""
    body = []
    for n, d in sorted(handoff_by_n().items()):
        checks = "PASS" if all(r["check"] == "PASS" for r in d.values()) else "FAIL"
        against = ("one block: the same kernel in every column" if d["atomic"]["grid"] == "1"
                   else compare_rows(d["atomic"], d["handoff"]))
        body.append([pow2(n), d["atomic"]["grid"], checks, *(f"{us(d[c]):.2f}" for c in ("atomic", "last-block", "handoff")),
                     f"{us(d['handoff'], 'read_ms_median'):.2f}", f"{pct_read(d['atomic']):.0f}%",
                     f"{pct_read(d['handoff']):.0f}%", against])
    return md_table(["n", "grid", "check", "atomic µs", "last-block µs", "handoff µs", "read-only µs (handoff's run)",
                     "atomic's speed, % of read-only (its run)", "handoff's speed, % of read-only",
                     "handoff against atomic"], body)


def pct_read(r):
    """A row's speed as % of the read-only kernel's, timed in the same process."""
    return 100 * us(r, "read_ms_median") / us(r)


@helper
def handoff_combined(lo, hi):
    """The sweep's sizes from lo to hi at which 07 ran more than one block (a combine to compare)."""
    return [n for n, d in sorted(handoff_by_n().items()) if lo <= n <= hi and d["atomic"]["grid"] != "1"]


@helper
def handoff_summary(other, lo, hi):
    """How the handoff's runs compare with `other`'s (atomic or last-block) at each size of its sweep from lo to hi
    where 07 combines, counted by distinct(): faster, slower, the same within noise (zero counts left out)."""
    d = handoff_by_n()
    order = [distinct(d[n]["handoff"], d[n][other]) for n in handoff_combined(lo, hi)]
    words = [(f"faster than {other}", order.count(-1)), (f"slower than {other}", order.count(1)),
             (f"the same as {other} {NOISE}", order.count(0))]
    said_ = [f"{w} at {k}" for w, k in words if k]
    if len(said_) == 1:
        return said(f"{said_[0].rsplit(' at ', 1)[0]} at all {len(order)} sizes")
    return said(", ".join(said_[:-1]) + f" and {said_[-1]} of the {len(order)} sizes")


@helper
def handoff_ever_quicker(lo, hi):
    """At some size from lo to hi where 07 combines, the handoff was quicker than atomic."""
    d = handoff_by_n()
    return any(quicker(d[n]["handoff"], d[n]["atomic"]) for n in handoff_combined(lo, hi))


@helper
def handoff_pct_read(column, lo, hi):
    """The range of `column`'s (atomic, last-block, handoff) speed as % of the read-only kernel's timed in its own
    process, at the sizes from lo to hi where 07 combines."""
    d = handoff_by_n()
    return value_range([f"{pct_read(d[n][column]):.0f}" for n in handoff_combined(lo, hi)]) + "%"


@helper
def read_grids():
    """The grids the read-only kernel ran with in the handoff sweep ('528', or a list)."""
    return ", ".join(sorted({r["read_grid"] for r in optional("handoff_sweep")}, key=int))


helper(relative_error)


@helper
def cpu_all_cores_clear():
    """The every-core sum's relative error is below 1e-5 (the single-threaded loop's stall at 2^24 does not reach it)."""
    return relative_error(cpu("all_cores")) < 1e-5


@helper
def cpu_not_judged():
    """Some CPU sum's float result was not judged (the table marks its check with *)."""
    return any(r.get("float_check") == "skipped" for r in optional("cpu"))


@helper
def cpu_loop_stalled():
    """The single-threaded float loop's sum is exactly 2^24: from there on, adding a float below 1 changes nothing."""
    return f(cpu("loop")["result"]) == 2 ** 24


# ---- docs/own.md: ./ladder try STAGE mine.cu on maint/tests/check_try_file.py's planted copies of 05 ----------------------

def own_case(name):
    """A planted copy of maint/tests/check_try_file.py: (the stage, the file as the stage has it, the edited copy)."""
    return STAGE, ORIGINAL, next(c[1] for c in CASES if c[0] == name)(ORIGINAL)


@helper
def own_diff(name):
    """The case's edit as `diff -u stage_file mine.cu` shows it, with the file's own line numbers."""
    import difflib
    stage, before, after = own_case(name)
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), f"{stage}/{stage_file(stage).name}",
                                 "mine.cu", n=3, lineterm="")
    return "```diff\n" + "\n".join(lines) + "\n```"


@helper
def own_report(name):
    """What ./ladder try printed for the case on the GPU of these results (./maint/do measure saves it)."""
    path = state.results / f"own_{name}.txt"
    if not path.exists():
        not_measured.add(f"docs/results/own_{name}.txt: ./ladder try on a reader's file")
        raise NotMeasured(name)
    return "```text\n" + path.read_text().rstrip() + "\n```"


@helper
def own_failed(name, tool=None):
    """The checks the case failed, as its saved report names them (each name up to its colon); tool=True: only those
    where compute-sanitizer itself reported the error, tool=False: only the others."""
    lines = own_report(name).splitlines()
    out = []
    for i, line in enumerate(lines):
        if line.startswith("  FAIL "):
            by_tool = i + 1 < len(lines) and lines[i + 1].strip().startswith("compute-sanitizer:")
            if tool is None or tool == by_tool:
                out.append(line.split(None, 1)[1].split(":")[0])
    return out


@helper
def variant_checks(name, variant):
    """A try result's verdicts for one variant, per regime (or kernel): 'PASS (stream), PASS (tree)'."""
    return ", ".join(f"{r['check']} ({r.get('regime') or r['tile']})" for r in rows(name) if r["variant"] == variant)


@helper
def own_cases_table():
    """Every planted copy of 05 (maint/tests/check_try_file.py) that the test try_file hands to ./ladder try, and what the report must then say."""
    body = [[f"`{name}`", ", ".join(f"`{w}`" for w in wanted), " or ".join(str(s) for s in allowed)]
            for name, _, allowed, wanted in CASES]
    return md_table(["copy of 05", "the report must hold", "exit status"], body, ["---"] * 3)


# docs/results/memcheck.txt: the output of `./maint/do measure`'s compute-sanitizer memcheck runs of 06, each run
# introduced by a line "$ <the command>" and closed by its "========= ERROR SUMMARY: N errors" line.
MEMCHECK_SUMMARY = re.compile(r"ERROR SUMMARY: (\d+) error")


def memcheck_runs():
    """[(command, errors)] from docs/results/memcheck.txt, or None where it has not been measured."""
    path = state.results / "memcheck.txt"
    if not path.exists():
        return None
    runs, command = [], None
    for line in path.read_text().splitlines():
        if line.startswith("$ "):
            command = line[2:].strip()
        m = MEMCHECK_SUMMARY.search(line)
        if m:
            runs.append((command, int(m.group(1))))
            command = None
    if not runs or any(c is None for c, _ in runs):
        raise DocsError("docs/results/memcheck.txt: every run must start with '$ <command>' and end with its "
                        "ERROR SUMMARY line")
    return runs


@helper
def memcheck_line():
    runs = memcheck_runs()
    if runs is None:
        return "compute-sanitizer's memcheck on this stage: *not measured yet*."
    errors = sum(e for _, e in runs)
    sizes = ", ".join(re.search(r"-n (\S+)", c).group(1) + (f" at offset {m.group(1)}" if (m := re.search(
        r"--offset (\d+)", c)) else "") for c, _ in runs)
    if errors == 0:
        return (f"compute-sanitizer's memcheck reports 0 errors (no access outside an allocation, none misaligned) at "
                f"n = {sizes} ([method]({docs_path('method.md#profiling-and-sanitizers')}) has the commands); a read "
                f"just past either end of the input would meet the NaN guards around it and fail the check "
                f"([over-reads]({docs_path('method.md#what-a-pass-proves')})).")
    return (f"compute-sanitizer's memcheck reports {errors} errors at n = {sizes} "
            f"([method]({docs_path('method.md#profiling-and-sanitizers')}) has the commands).")


@helper
def memcheck_commands():
    """The memcheck runs of docs/results/memcheck.txt, one command a line, as a code block."""
    runs = memcheck_runs()
    return "```\n" + "\n".join(c for c, _ in runs) + "\n```" if runs else "*not measured yet*"


@helper
def racecheck():
    text = (state.results / "racecheck.txt").read_text().strip()
    return "```\n" + text + "\n```"


@helper
def build_time_line():
    """How long first builds took, from docs/results/first_build.json (one record, or a list of them, each written
    by a first ./ladder build: copy <build>/first_build.json there, or add it to the list)."""
    path = state.results / "first_build.json"
    if not path.exists():
        raise DocsError("docs/results/first_build.json is missing: copy <build>/first_build.json from a fresh clone's "
                        "first ./ladder build")
    data = json.loads(path.read_text())
    builds = data if isinstance(data, list) else [data]

    def took(b):
        s = int(b["seconds"])
        return f"{s} s" if s < 120 else f"{s / 60:.0f} minutes"

    def where(b):
        return f"{b['cpus']} CPU cores, {'without a GPU' if b['gpu'] == 'none' else 'with a GPU'}"

    if len(builds) == 1:
        b = builds[0]
        return f"on a machine with {where(b)}, it took {took(b)} ({b['command']}, on {b['date']})."
    listed = "; ".join(f"{took(b)} with {where(b)} ({b['command']}, on {b['date']})" for b in builds)
    return (f"the recorded first builds took {listed}. They are not runs of one command on one quiet machine, so take "
            f"them as a rough guide.")


# The result files whose rows carry the clocks of their timed series (common/gpu_clocks.hpp): every timed study.
def clocked():
    """Every result file (sweep.csv whole, every combine): clock_summary counts the rows that hold a timed series."""
    return ["sweep_all" if p.stem == "sweep" else p.stem for p in sorted(state.results.glob("*.csv"))]


def clock_summary():
    """Over every timed series in the results: the SM and memory clocks read at their first and last
    repetitions, how many series reported throttling (and why), and how many stream holds timed out."""
    s = {"series": 0, "sm": set(), "mem": set(), "throttled": 0, "reasons": set(), "timeouts": 0, "unclocked": {}}
    for name in clocked():
        try:
            data = rows(name)
        except DocsError:
            continue
        for r in data:
            if not r.get("sm_clock_start_mhz"):
                if r.get("ms_median"):  # a timed row without clocks: the CPU's, or one from before they were recorded
                    s["unclocked"][name] = s["unclocked"].get(name, 0) + 1
                continue
            s["series"] += 1
            s["sm"].update(int(r[k]) for k in ("sm_clock_start_mhz", "sm_clock_end_mhz"))
            s["mem"].update(int(r[k]) for k in ("mem_clock_start_mhz", "mem_clock_end_mhz"))
            s["timeouts"] += int(r.get("hold_timeouts") or 0)
            if r.get("throttled") == "yes":
                s["throttled"] += 1
                s["reasons"].update(r["clock_reasons"].split("+"))
    return s


def _mhz(values):
    lo, hi = min(values), max(values)
    return f"{lo} MHz at every reading" if lo == hi else f"between {lo} and {hi} MHz"


@helper
def nvml_memory_clock():
    """The memory clock NVML read over the timed series beside the attribute the peak is computed from."""
    s = clock_summary()
    attribute = sorted({int(r["mem_clock_mhz"]) for r in rows("ladder")})
    if not s["series"]:
        return "The results carry no NVML clock readings: *not measured yet*."
    same = s["mem"] == set(attribute)
    return (f"The memory clock NVML read over the timed series ([Clocks](#timing)) was {_mhz(s['mem'])}; the attribute "
            f"the peak comes from says {', '.join(map(str, attribute))} MHz{': the same' if same else ''}.")


@helper
def peak_line():
    """The theoretical peak and, where the results record them, the attributes it is computed from."""
    r = rows("ladder")[0]
    peak = f"{f(meta()['peak_gbps']):.0f} GB/s"
    if not r.get("mem_clock_mhz"):
        return peak
    return f"2 × {r['mem_clock_mhz']} MHz × {r['bus_width_bits']} bits / 8 = {peak}"


@helper
def clocks_line():
    """What the clocks of the measured series were, and whether any throttled: a sentence from the results."""
    s = clock_summary()
    if not s["series"]:
        return "The results on these pages carry no clock readings: *not measured yet*."
    throttle = (f"{s['throttled']} of them reported throttling ({', '.join(sorted(s['reasons']))})" if s["throttled"]
                else "none of them reported throttling")
    return (f"Over the {s['series']} timed series of the stages in the results on these pages (one per timed row; the "
            f"untimed studies' rows have none; the references' series beside them are checked and warned about the same way, not recorded) the SM clock "
            f"read {_mhz(s['sm'])} and the memory clock {_mhz(s['mem'])}; {throttle}.")


@helper
def hold_timeouts():
    s = clock_summary()
    if not s["series"]:
        return "*not measured yet*"
    return (f"{s['timeouts']} repetitions were not held to the end over the stages' {s['series']} timed series"
            if s["timeouts"] else f"no hold timed out over the stages' {s['series']} timed series")


@helper
def provenance():
    m = meta()
    s = clock_summary()
    clocks = ""
    if s["series"]:
        none = s["unclocked"]
        older = (f" (the {sum(none.values())} timed rows of {and_list(f'{k}.csv' for k in sorted(none))} record none)"
                 if none else "")
        clocks = (f" SM clock {_mhz(s['sm'])}, memory clock {_mhz(s['mem'])}, read at the first and last repetition "
                  f"of each timed series{older}"
                  + (f"; **the GPU throttled in {s['throttled']} of {s['series']} series** "
                     f"({', '.join(sorted(s['reasons']))})." if s["throttled"] else "; no throttling reported."))
    profile = m.get("profile")
    profiled = (f" The profiler's rows, the saved machine code and the sanitizer reports ({', '.join(profile['files'])}) "
                f"come from the measurement at {profile['commit']} on {profile['date']}: {profile['why']}."
                if profile else "")
    return (f"Measured on an {m['device']} (compute capability {m['compute_capability']}, {m['sms']} SMs, "
            f"{int(m['l2_bytes']) / 1e6:.1f} MB L2, {f(m['peak_gbps']):.0f} GB/s theoretical from the device "
            f"attributes), driver {m['driver']}, CUDA runtime {m['cuda_runtime']}, nvcc \"{m['nvcc']}\", "
            f"at commit {m['commit']} on {m['date']}, with `{m['command']}`.{parts_line(m)}{clocks}{profiled}")


def parts_line(m):
    """Which parts of ./maint/do measure come from another commit than the ladder's (--part measures some alone)."""
    by = {}
    for part, p in m.get("parts", {}).items():
        if (p["commit"], p["date"]) != (m["commit"], m["date"]):
            by.setdefault((p["commit"], p["date"]), []).append(part)
    def listed(names):
        return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return "".join(f" The {listed(names)} part{'s' * (len(names) > 1)} come{'s' * (len(names) == 1)} from commit {commit} "
                   f"on {date} (`./maint/do measure --part {','.join(names)}` repeats {'them' if len(names) > 1 else 'it'} "
                   f"alone)." for (commit, date), names in by.items())
