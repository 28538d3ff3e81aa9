"""Accuracy: every stage's float error against n, the CPU's float sums, and the bound the check uses."""

from ..runner.results import relative_error
from ..runner.stages import combine_stage, reduce_stages
from .base import helper, f, md_table, NOT_MEASURED, pow2, rows, select


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
