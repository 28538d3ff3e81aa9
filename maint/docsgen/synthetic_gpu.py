"""A second GPU for the docs check: the measured results rewritten as if from another, smaller GPU, from which --check
renders every page too. It differs in every fact a template may not type (name, SMs, L2, peak, grid), and the stages
rank differently (03 slower than 02 in the tree regime, 07 than CUB, 05 than 04 in the stream regime), so a typed
"faster" turns false. Where a page states a cause (a top stall, a bound, a ranking of the combines) its profile and
timings are set, not scaled: the conditions of the sentences in GUARDED are false here, and no page may hold them."""
import csv
import json
import pathlib
import shutil

from ..measure import NCU_SHORT

GPU = {"device": "Example GPU S46", "compute_capability": "8.9", "sms": 46, "l2_bytes": 25165824, "peak_gbps": 1008.0,
       "clock_mhz": 2100, "fp32_lanes_per_sm": 128, "mem_clock_mhz": 15750, "bus_width_bits": 256}  # 2×15750×256/8
GPU["fp32_peak_gflops"] = 2.0 * GPU["fp32_lanes_per_sm"] * GPU["sms"] * GPU["clock_mhz"] / 1e3
CPU = {"cpu": "Example CPU C8", "threads": "8"}  # the host of cpu_baseline's rows: its name and its hardware threads
# The clocks its timed series report: the SM clock moves during every series, and the size sweep throttles, so the
# pages' clock sentences take their other branch here.
CLOCKS = {"sm_clock_start_mhz": "2100", "sm_clock_end_mhz": "2040", "mem_clock_start_mhz": "15750",
          "mem_clock_end_mhz": "15750"}
THROTTLED_FILE = "sweep"

# Extra time factors on top of the bandwidth ratio, for the rows that match: a different ranking of the rungs.
# "file" matches the result file's name; every other key a column.
RERANK = [({"stage": "03_padding", "regime": "tree"}, 1.30), ({"stage": "04_warp_unroll", "regime": "stream"}, 0.97),
          ({"stage": "05_shuffle", "regime": "stream"}, 1.12), ({"stage": "07_multiblock", "regime": "stream"}, 1.15),
          ({"stage": "06_float4", "regime": "tree"}, 0.85), ({"stage": "01_naive", "regime": "tree"}, 0.9),
          # atomics slow on this GPU: 07 loses to 06 at small n, and its cost per block grows with the block size
          ({"stage": "07_multiblock", "n": "1048576"}, 1.5), ({"file": "combine_tree", "combine": "atomic", "block": "128"}, 1.5),
          ({"file": "combine_tree", "combine": "atomic", "block": "256"}, 2.2),
          ({"file": "combine_tree", "combine": "atomic", "block": "1024"}, 1.5),
          ({"combine": "last-block", "regime": "tree"}, 0.3),  # and tickets cheap: last-block not the costly combine
          # a CPU with little bandwidth (the loop on every hardware thread slower than the copy and 01 together)
          ({"file": "cpu", "row": "all_cores"}, 40.0)]
CUB_FACTOR = 0.93  # CUB relatively faster on this GPU
READ_FACTOR = 0.8  # the read-only kernel relatively faster: above the theoretical peak, and no stage reaches it
NCU_FACTOR = 0.9
# Accuracy and determinism differ too: one stage's float error is 12 times the measured one (its error over bound
# passes 0.5), and last-block, deterministic by design, is shown with two distinct results at 2^28.
ACCURACY_SCALE = ("05_shuffle", 12.0)
NOT_REPEATED = {"combine": "last-block", "n": "268435456"}

# The profile of this GPU where pages state causes: (match on stage and variant, counter, value or factor).
GEMM = "08_gemm_tiled"
NCU_SET = [({}, "stall_1", "barrier"),  # every reduce kernel: barriers, not memory, on top
           ({"stage": GEMM, "variant": "tiled"}, "stall_1", "long_scoreboard"),
           ({"stage": GEMM, "variant": "tiled padded"}, "stall_1", "long_scoreboard"),
           ({"stage": GEMM, "variant": "naive"}, "stall_1", "lg_throttle"),
           ({"stage": GEMM, "variant": "cuBLAS"}, "stall_1", "not_selected"),
           ({"stage": GEMM, "variant": "naive"}, NCU_SHORT["mem_pct"], "40"),
           ({"stage": GEMM, "variant": "naive"}, NCU_SHORT["dram_pct"], "35"),
           ({"stage": "05_shuffle", "variant": "tree"}, NCU_SHORT["dram_pct"], "80")]
NCU_SCALE = [({"stage": "02_grid_stride", "variant": "tree"}, NCU_SHORT["conflicts_ld"], 0.5),
             ({"stage": "02_grid_stride", "variant": "tree"}, NCU_SHORT["conflicts_st"], 0.5),
             ({"stage": "01_naive", "variant": "tree, interleaved"}, NCU_SHORT["wavefronts_ld"], 0.6)]

# The causal and comparative sentences the conditions guard (template, words): false on this GPU, so a page rendered
# from its results must not contain them. Each must still be in its template, inside an {% if %}.
GUARDED = [(page, words) for page, sentences in {
    "stages/02_grid_stride.md": ["the stream-regime launch spends its time waiting for it"],
    "stages/03_padding.md": ["the grid-stride loop's loads are the time"],
    "stages/06_float4.md": ["the threads still wait for memory"],
    "stages/05_shuffle.md": ["This is latency, not bandwidth"],
    "stages/08_gemm_tiled.md": ["the naive kernel is bound by cache throughput",
                                "the profile below puts it at the shared-memory pipeline"],
    "stages/07_multiblock.md": ["consistent with atomics that one address serialises", "it is the costly one",
                                "the atomics no longer set the pace"],
    "stages/01_naive.md": ["has as many", "the shared-load wavefronts stay about the same",
                           "the cost is per block, not per step of the tree"],
    "method.md": ["No kernel measured here reads DRAM at the theoretical peak", "a reference a stage can reach"],
    "index.md": ["Its step shows where the combine is a larger share of the time"],
    "accuracy.md": ["a correct sum stays inside it with room to spare"],
    "articles.md": ["while two-pass and last-block repeated their bits at every size", "the copy, not the kernel, decides"],
}.items() for words in sentences]

def _matches(row, match, file=None): return all((file == v) if k == "file" else (row.get(k) == v) for k, v in match.items())
def _num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None
def _fmt(v): return f"{v:.6g}"

def _rewrite_row(r, scale, old_sms, file):
    out = {**r, **{k: str(GPU[k]) for k in GPU if k in r}}
    if file == "cpu":
        out.update({"cpu": CPU["cpu"], **({"threads": CPU["threads"]} if r.get("row") == "all_cores" else {})})
    if out.get("sm_clock_start_mhz"):
        out.update(CLOCKS, **({"throttled": "yes", "clock_reasons": "sw_power_cap"} if file == THROTTLED_FILE else {}))
    if file == "accuracy" and r.get("stage") == ACCURACY_SCALE[0] and _num(r.get("abs_error")) is not None:
        out["abs_error"] = _fmt(_num(r["abs_error"]) * ACCURACY_SCALE[1])
        if _num(r.get("result")) is not None and _num(r.get("reference")) is not None:
            out["result"] = _fmt(_num(r["reference"]) + _num(out["abs_error"]))
    if file == "determinism" and _matches(r, NOT_REPEATED):
        out["distinct_results"], out["bitwise_identical"] = "2", "false"
    bps = _num(r.get("blocks_per_sm"))
    if "grid" in r and r.get("regime") == "stream" and bps and _num(r["grid"]) == bps * old_sms:
        out["grid"] = str(int(bps) * GPU["sms"])  # a grid the SM count set (not a one-block or a small-n launch)
    factor = scale  # every time scaled (the floors too), the stage's own reranked where RERANK says
    for match, extra in RERANK:
        factor *= extra if _matches(r, match, file) else 1
    for k in [k for k in out if _num(out[k]) is not None]:
        if k.endswith(("ms_median", "ms_min", "ms_max")):
            which = k.split("_ms_")[0] if "_ms_" in k else ""
            out[k] = _fmt(_num(out[k]) * {"": factor, "cub": scale * CUB_FACTOR, "read": scale * READ_FACTOR}.get(which, scale))
        elif k in ("empty_launch_ms", "memset4_ms"):
            out[k] = _fmt(_num(out[k]) * scale)
    return _rates(out)

def _rates(out):
    """A row's rates from its new times: the FLOP of a GEMM (2 M N K), the bytes of a sum, each over its time."""
    def ms(prefix=""): return _num(out.get(f"{prefix}ms_median"))
    if "m" in out:  # a GEMM
        flop = 2.0 * _num(out["m"]) * _num(out["n"]) * _num(out["k"])
        out.update({f"{p}gflops": _fmt(flop / (ms(p) * 1e6)) for p in ("", "naive_", "cublas_") if ms(p)})
        if ms():
            out.update(pct_cublas=_fmt(100 * ms("cublas_") / ms()), x_naive=_fmt(ms("naive_") / ms()),
                       pct_fp32_peak=_fmt(100 * _num(out["gflops"]) / GPU["fp32_peak_gflops"]),
                       cublas_pct_fp32_peak=_fmt(100 * _num(out["cublas_gflops"]) / GPU["fp32_peak_gflops"]))
        return out
    n = _num(out.get("n"))
    for prefix, moved in ({"": 4 * n, "cub_": 4 * n, "read_": 4 * n, "copy_": 8 * n} if n else {}).items():
        if ms(prefix):
            out[f"{prefix}gbps"] = _fmt(moved / (ms(prefix) * 1e6))
            if f"{prefix}pct_peak" in out:  # not in the CPU's rows
                out[f"{prefix}pct_peak"] = _fmt(100 * moved / (ms(prefix) * 1e6) / GPU["peak_gbps"])
    out.update({key: _fmt(k * ms(ref) / ms()) for key, ref, k in (("x_cub", "cub_", 1), ("pct_read", "read_", 100))
                if n and ms() and ms(ref)})
    return out

def _rewrite_ncu(r):
    kept = ("stage", "variant", "n_or_size", "kernel", "grid", "block", "launch__registers_per_thread")
    out = {k: v if k in kept or _num(v) is None else _fmt(_num(v) * NCU_FACTOR) for k, v in r.items()}
    out.update({key: value for match, key, value in NCU_SET if _matches(r, match) and key in out})
    out.update({key: _fmt(_num(out[key]) * factor) for match, key, factor in NCU_SCALE
                if _matches(r, match) and _num(out.get(key)) is not None})
    if out["stall_1"] == r.get("stall_2"):
        out["stall_2"] = r.get("stall_1", "")  # the measured top stall takes second place
    return out

def write(src, dst):  # writes the synthetic results set into dst from the measured one in src; returns dst
    src, dst = pathlib.Path(src), pathlib.Path(dst)
    meta = json.loads((src / "meta.json").read_text())
    scale, old_sms = float(meta["peak_gbps"]) / GPU["peak_gbps"], int(meta["sms"])
    for path in src.iterdir():
        if path.suffix == ".json":
            data = json.loads(path.read_text())
            for m in data if isinstance(data, list) else [data]:  # a record, or a list of them
                m.update({k: GPU[k] for k in m if k in GPU})
                m.update({k: v for k, v in (("date", "2000-01-01"), ("commit", "0000000")) if k in m})
            (dst / path.name).write_text(json.dumps(data, indent=2) + "\n")
            continue
        with open(path, newline="") as fh:
            data = list(csv.DictReader(fh)) if path.suffix == ".csv" else None
        if not data:
            shutil.copy(path, dst / path.name)
            continue
        with open(dst / path.name, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(data[0]))
            w.writeheader()
            w.writerows(_rewrite_ncu(r) if path.stem == "ncu" else _rewrite_row(r, scale, old_sms, path.stem) for r in data)
    return dst
