"""Accuracy: every stage's float error against n, the CPU's float sums, and the bound the check uses."""
import statistics

from scripts.stages import relative_error
from scripts.stages import combine_stage, reduce_stages
from .base import constant, helper, f, md_table, NOT_MEASURED, not_measured, oracle_constant, pow2, rows, select


@helper
def accuracy_sizes():
    return sorted({int(r["n"]) for r in rows("accuracy")})


@helper
def accuracy_series():
    """{name: {n: relative error}} for every stage, CUB and the two CPU float sums."""
    out = {}
    for r in rows("accuracy"):
        out.setdefault(r["stage"], {})[int(r["n"])] = relative_error(r)
    last = combine_stage()  # CUB is timed in the combine stage's process
    out["CUB"] = {int(r["n"]): relative_error(r, "cub_result") for r in rows("sweep") if r["stage"] == last}
    cpu = rows("accuracy_cpu")
    out["CPU float loop"] = {int(r["n"]): relative_error(r, "float_loop", "exact") for r in cpu}
    out["CPU Kahan, float"] = {int(r["n"]): relative_error(r, "kahan_float", "exact") for r in cpu}
    return out


@helper
def accuracy_table():
    series = accuracy_series()
    names = list(series)
    body = []
    for n in accuracy_sizes():
        body.append([pow2(n), *[f"{series[s][n]:.1e}" if n in series[s] else "" for s in names]])
    return md_table(["n", *names], body)


@helper
def bound_ratio_max():
    """The largest error over bound of the judged accuracy rows."""
    return max(f(r["abs_error"]) / f(r["bound"]) for r in rows("accuracy") if r["float_check"] == "PASS")


@helper
def bound_table():
    """The bound each stage's launch gets from its own shape (common/oracle.cpp, stage_shape), relative to the exact
    sum, against the CPU loop's worst case n u."""
    body = []
    for n in accuracy_sizes():
        cells = [pow2(n)]
        for stage in reduce_stages():
            r = [x for x in rows("accuracy") if x["stage"] == stage and int(x["n"]) == n]
            cells.append(f"{f(r[0]['bound']) / f(r[0]['reference']):.1e}" if r else NOT_MEASURED)
        body.append(cells + [f"{n * 2.0 ** -24:.1e}"])
    return md_table(["n", *reduce_stages(), "CPU float loop, n u"], body)


@helper
def bound_ratio_range():
    vals = [f(r["abs_error"]) / f(r["bound"]) for r in rows("accuracy") if r["float_check"] == "PASS"]
    return f"{min(vals):.2g} to {max(vals):.2g}"


@helper
def cpu_row(n):
    return select("accuracy_cpu", n=n)


@helper
def accuracy_ulps():
    """{name: {n: error in ulps of the float nearest the exact sum}}."""
    import math
    exact = {int(r["n"]): f(r["exact"]) for r in rows("accuracy_cpu")}
    out = {}
    for name, pts in accuracy_series().items():
        out[name] = {}
        for n, e in pts.items():
            if n in exact:
                ulp = 2.0 ** (math.floor(math.log2(exact[n])) - 23)
                out[name][n] = e * exact[n] / ulp
    return out


@helper
def accuracy_ulp_table():
    series = accuracy_ulps()
    names = list(series)
    body = [[pow2(n), *[f"{series[s][n]:.2f}" if n in series[s] else "" for s in names]] for n in accuracy_sizes()]
    return md_table(["n", *names], body)


@helper
def loop_gap_line():
    """From which n on every stage is two orders of magnitude closer to the exact sum than the CPU loop."""
    series = accuracy_series()
    sizes = accuracy_sizes()
    gap = [n for n in sizes if all(100 * series[s][n] < series["CPU float loop"][n] for s in reduce_stages() if s in series)]
    start = next((n for i, n in enumerate(sizes) if all(m in gap for m in sizes[i:])), None)
    if start is None:
        return " At no size here is every tree two orders of magnitude closer than the loop."
    return (f" From n = {pow2(start)} on, every tree is closer to the exact sum than the loop by two orders of magnitude "
            f"or more: there, a GPU sum that differs from a CPU loop's says more about the loop.")


@helper
def stage_error_range(n):
    vals = [accuracy_series()[s][n] for s in reduce_stages() if s in accuracy_series()]
    return f"{min(vals):.1e} to {max(vals):.1e}"


@helper
def loop_stalls():
    """Whether the CPU float loop's result at the largest n is exactly 2^24 (stuck: every later input is below half
    an ulp of the running sum)."""
    r = cpu_row(accuracy_sizes()[-1])
    return f(r["float_loop"]) == 2.0 ** 24


@helper
def float_error_table():
    body = []
    for r in rows("ladder"):
        bounded = r["float_check"] != "skipped"
        body.append([r["stage"], r["regime"], r["combine"], f"{r['grid']} x {r['threads']}", r["abs_error"],
                     r["bound"] if bounded else "skipped", f"{f(r['error_bound_ratio']):.2g}" if bounded else "",
                     f"{r['launches_checked']} of {r['launches']}", r["check"]])
    return md_table(["stage", "regime", "combine", "first launch (blocks x threads)", "abs error", "bound",
                     "error / bound", "launches checked", "verdict"], body, ["---"] * 4 + ["---:"] * 4 + ["---"])


# The error study (--error-study, docs/results/error_bound.csv): the bound against the errors of random
# configurations. BINS are the edges of the distribution's columns.
ERROR_BINS = [0.01, 0.03, 0.1, 0.3, 0.5, 1.0]


def error_quantile(values, q):
    ordered = sorted(values)
    return ordered[int(q * (len(ordered) - 1))]


@helper
def error_study():
    """Every judged ratio of the study, by stage and in all; and how many configurations were not judged or failed."""
    data = rows("error_bound")
    judged = [r for r in data if r["check"] != "skipped"]
    by_stage = {s: [f(r["error_bound_ratio"]) for r in judged if r["stage"] == s] for s in reduce_stages()}
    # error_sigmas (each error over its sigma, for the centring test) came with a later harness than some results
    sigmas = {s: [f(r["error_sigmas"]) for r in judged if r["stage"] == s and r.get("error_sigmas")] for s in reduce_stages()}
    if not any(sigmas.values()):
        not_measured.add("the error study's signed errors: docs/results/error_bound.csv has no error_sigmas column")
    every = [v for vals in by_stage.values() for v in vals]
    return {"configs": len(data), "judged": len(judged), "skipped": len(data) - len(judged),
            "failed": sum(r["check"] == "FAIL" for r in data), "ratios": every, "by_stage": by_stage,
            "seeds": len({r["seed"] for r in data}), "max_n": max(int(r["n"]) for r in data), "sigmas": sigmas,
            "large_sizes": [pow2(n) for n in sorted({int(r["n"]) for r in data
                                                      if int(r["n"]) >= 2 ** constant("common/reduce_run.hpp", "kStudyMaxLog2")})],
            "median": error_quantile(every, 0.5), "p99": error_quantile(every, 0.99), "max": max(every),
            "min": min(every)}


@helper
def error_study_table():
    """The distribution of error / bound per stage: quantiles and how many fall between the bins' edges."""
    study = error_study()
    edges = [0.0] + ERROR_BINS
    heads = [f"{lo:g} to {hi:g}" for lo, hi in zip(edges, edges[1:])] + [f"over {ERROR_BINS[-1]:g}"]
    body = []
    for stage, vals in [*study["by_stage"].items(), ("all", study["ratios"])]:
        if not vals:
            body.append([stage, "0"] + [NOT_MEASURED] * (5 + len(heads)))
            continue
        counts = [sum(lo < v <= hi or (lo == 0 and v == 0) for v in vals) for lo, hi in zip(edges, edges[1:])]
        counts.append(sum(v > ERROR_BINS[-1] for v in vals))
        z = study["sigmas"].get(stage)
        limit = f"{oracle_constant('kCentringLambda') / len(z) ** 0.5:.2g}" if z else ""
        mean_z = "" if stage == "all" else f"{statistics.fmean(z):.3g} (limit {limit})" if z else NOT_MEASURED
        body.append([stage, str(len(vals)), *[f"{error_quantile(vals, q):.3g}" for q in (0.5, 0.9, 0.99, 1.0)],
                     mean_z, *[str(c) for c in counts]])
    return md_table(["stage", "configurations", "median", "90th pct", "99th pct", "max", "mean error / σ", *heads],
                    body, ["---"] + ["---:"] * (6 + len(heads)))
