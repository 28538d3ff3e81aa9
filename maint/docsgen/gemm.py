"""The GEMM rung's tables and numbers: its measured sizes, its profile, and the roofline it shares with the sums."""
import re

from scripts.stages import gemm_stage
from .base import f, helper, md_table, meta, option, rows, select, stage_rows
from .code import code
from .compare import ncu_value, profile_table, which
from .machine_code import sass_lines
from .small_n import ncu


@helper
def gemm_other_tiles():
    """The tile edges the GEMM stage offers besides its default."""
    tile = option(gemm_stage(), "--tile")
    return [t for t in tile["values"] if t != tile["default"]]


@helper
def padded(tile):
    """'16×17': a tile and its padded shape; the docs fail while the stage's code no longer pads it by one."""
    code(gemm_stage(), f"launch_tiled<{tile}, 1>")
    return f"{tile}×{int(tile) + 1}"


def gemm_name(r):
    t = r["tile"]
    return f"tiled {padded(t)} (padded)" if r["pad"] == "true" else f"tiled {t}×{t}"


@helper
def gemm_table(stage, tile="16", sizes=None):
    body = []
    data = [r for r in stage_rows("gemm", stage) if r["tile"] == tile and (sizes is None or r["m"] in sizes)]
    for size in dict.fromkeys(r["m"] for r in data):
        group = [r for r in data if r["m"] == size]
        for r in group:
            body.append([f"{size}³", gemm_name(r), r["check"], f"{f(r['ms_median']):.3f}", f"{f(r['gflops']):.0f}",
                         f"{f(r['pct_cublas']):.1f}", f"{f(r['x_naive']):.2f}"])
        r = group[0]
        body.append([f"{size}³", "naive", r["naive_check"], f"{f(r['naive_ms_median']):.3f}", f"{f(r['naive_gflops']):.0f}",
                     f"{100 * f(r['cublas_ms_median']) / f(r['naive_ms_median']):.1f}", "1.00"])
        body.append([f"{size}³", "cuBLAS SGEMM", r["cublas_check"], f"{f(r['cublas_ms_median']):.3f}",
                     f"{f(r['cublas_gflops']):.0f}", "100.0", f"{f(r['naive_ms_median']) / f(r['cublas_ms_median']):.2f}"])
    return md_table(["M = N = K", "kernel", "check", "ms", "GFLOP/s", "% of cuBLAS", "× naive"], body)


@helper
def gemm_extreme(stage, field, pick, fmt=".2f", tile="16", pad="false"):
    return format(pick(f(r[field]) for r in stage_rows("gemm", stage) if r["tile"] == tile and r["pad"] == pad), fmt)


@helper
def gemm_lds(stage, tile, pad):
    """The shared-load instructions of one tiled-kernel instantiation, by width: '16 LDS and 4 LDS.128'."""
    lines, inside = sass_lines(stage), False
    counts = {}
    for line in lines:
        if line.startswith("Function :"):
            inside = f"gemm_kernelILi{tile}ELi{1 if pad else 0}E" in line
            continue
        m = re.search(r"\bLDS(?:\.U)?(\.\d+)?\b", line)  # sm_75 spells a shared load LDS.U, LDS.U.128
        if inside and m:
            name = "LDS" + (m.group(1) or "")
            counts[name] = counts.get(name, 0) + 1
    return " and ".join(f"{v} `{k}`" for k, v in sorted(counts.items()))


def gemm_steps(stage, variant):
    """Warp-steps of a profiled tiled GEMM (square size, tile x tile blocks): blocks x warps a block x K / tile."""
    row = select("ncu", stage=stage, variant=variant)
    size, tile = int(row["n_or_size"]), int(row["block"].strip("()").split(",")[0])
    return (size // tile) ** 2 * (tile * tile // 32) * (size // tile)


@helper
def gemm_per_warp_step(stage, variant, metric):
    return ncu_value(stage, variant, metric) / gemm_steps(stage, variant)


@helper
def ffma_per_shared_load(stage, variant):
    """FFMA warp instructions per shared-load instruction (FFMA thread instructions / 32)."""
    return ncu_value(stage, variant, "ffma") / 32 / ncu_value(stage, variant, "shared_ld")


@helper
def gemm_instr_change(stage):
    a, b = ncu_value(stage, "tiled", "instructions"), ncu_value(stage, "tiled padded", "instructions")
    return f"{abs(100 * (b - a) / a):.0f}% {'more' if b > a else 'fewer'}"


@helper
def naive_dram_ratio(stage):
    """Bytes the profiled naive GEMM read from DRAM over the bytes of A and B (square size)."""
    size = int(select("ncu", stage=stage, variant="naive")["n_or_size"])
    return ncu_value(stage, "naive", "dram") / (8 * size ** 2)


@helper
def gemm_ffma_per_mac(stage, variant):
    size = int(select("ncu", stage=stage, variant=variant)["n_or_size"])
    return ncu_value(stage, variant, "ffma") / size ** 3


@helper
def cublas_kernel(stage):
    name = select("ncu", stage=stage, variant="cuBLAS")["kernel"]
    return re.sub(r"^void ", "", name)


@helper
def gemm_profile_table(stage):
    return profile_table([(stage, v) for v in ("tiled", "naive", "cuBLAS")]) + "\n\n" + md_table(
        ["kernel", "FMA pipe busy, %", "tensor pipe busy, %", "FFMA thread instructions", "per multiply-add"],
        [[v, ncu(stage, v, "fma_pct", ".1f"), ncu(stage, v, "tensor_pct", ".1f"), ncu(stage, v, "ffma"),
          f"{gemm_ffma_per_mac(stage, v):.2f}"] for v in ("tiled", "naive", "cuBLAS")])


@helper
def padding_cost(stage, kind):
    """Extra shared-memory wavefronts (ld or st) of the padded tiled kernel over the unpadded one."""
    key = "wavefronts_ld" if kind == "ld" else "wavefronts_st"
    return ncu_value(stage, "tiled padded", key) - ncu_value(stage, "tiled", key)


def fp32_peak():
    return f(rows("gemm")[0]["fp32_peak_gflops"])


@helper
def ridge():
    return fp32_peak() / f(meta()["peak_gbps"])


def roofline_points():
    """(name, FLOP per byte, GFLOP/s attained) for every reduce stage (stream, 07 atomic) and GEMM kernel at 4096³."""
    pts = []
    for r in rows("ladder_stream"):
        pts.append((r["stage"] + (" (tree)" if r["regime"] == "tree" else ""), 0.25, 0.25 * f(r["gbps"])))
    g = select("gemm", m="4096", tile="16", pad="false")
    ai = 2 * 4096 ** 3 / (4 * 3 * 4096 ** 2)
    pts += [("tiled 16×16, 4096³", ai, f(g["gflops"])), ("naive, 4096³", ai, f(g["naive_gflops"])),
            ("cuBLAS, 4096³", ai, f(g["cublas_gflops"]))]
    return pts


@helper
def roofline_table():
    bw = f(meta()["peak_gbps"])
    body = []
    for name, ai, gf in roofline_points():
        roof = min(fp32_peak(), ai * bw)
        body.append([name, f"{ai:.2f}", f"{gf:,.0f}", f"{roof:,.0f}", f"{100 * gf / roof:.1f}",
                     which(ai * bw < fp32_peak(), "bandwidth", "FP32 peak")])
    return md_table(["kernel", "FLOP/B", "GFLOP/s", "roof GFLOP/s", "% of roof", "roof set by"], body)
