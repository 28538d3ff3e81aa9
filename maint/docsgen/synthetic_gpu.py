"""A second GPU for the docs check: the measured results rewritten as if they came from another, smaller GPU, from
which --check renders every page too. It differs in every fact a template may not type (name, SM count, L2, peak,
grid), and the stages rank differently (03 is slower than 02 in the tree regime, 07 slower than CUB, 05 slower than
04 in the stream regime), so a "faster" typed by hand turns false here. Wherever a page states a cause (a top stall,
a bound, a ranking of the combines) its profile and timings are set, not scaled: every condition of compare.py is
false here for the sentences in GUARDED, and none of them may appear in a page rendered from these results.
"""
import csv
import json
import pathlib
import shutil

GPU = {"device": "Example GPU S46", "compute_capability": "8.9", "sms": 46, "l2_bytes": 25165824,
       "peak_gbps": 1008.0, "clock_mhz": 2100, "fp32_lanes_per_sm": 128,
       "mem_clock_mhz": 15750, "bus_width_bits": 256}  # 2 x 15750 MHz x 256 bits / 8 = 1008 GB/s
CPU = {"cpu": "Example CPU C8", "threads": "8"}  # the host of cpu_baseline's rows: its name and its hardware threads
GPU["fp32_peak_gflops"] = 2.0 * GPU["fp32_lanes_per_sm"] * GPU["sms"] * GPU["clock_mhz"] / 1e3
# The clocks its timed series report: the SM clock moves during every series, and the size sweep throttles, so
# the pages' clock sentences take their other branch here.
CLOCKS = {"sm_clock_start_mhz": "2100", "sm_clock_end_mhz": "2040", "mem_clock_start_mhz": "15750",
          "mem_clock_end_mhz": "15750"}
THROTTLED_FILE = "sweep"

# Extra time factors on top of the bandwidth ratio, for the rows that match: a different ranking of the rungs.
# "file" matches the result file's name; every other key a column.
RERANK = [({"stage": "03_padding", "regime": "tree"}, 1.30), ({"stage": "04_warp_unroll", "regime": "stream"}, 0.97),
          ({"stage": "05_shuffle", "regime": "stream"}, 1.12), ({"stage": "07_multiblock", "regime": "stream"}, 1.15),
          ({"stage": "06_float4", "regime": "tree"}, 0.85), ({"stage": "01_naive", "regime": "tree"}, 0.9),
          # atomics slow on this GPU: 07 loses to 06 at small n, and its cost per block grows with the block size
          ({"stage": "07_multiblock", "n": "1048576"}, 1.5),
          ({"file": "combine_tree", "combine": "atomic", "block": "128"}, 1.5),
          ({"file": "combine_tree", "combine": "atomic", "block": "256"}, 2.2),
          ({"file": "combine_tree", "combine": "atomic", "block": "1024"}, 1.5),
          # and tickets cheap: last-block is not the costly combine in the tree regime
          ({"combine": "last-block", "regime": "tree"}, 0.3),
          # a CPU with little bandwidth: the loop on every hardware thread is slower than the copy and 01 together
          ({"file": "cpu", "row": "all_cores"}, 40.0),
          # and a handoff that gains nothing: slower than atomic at every size of its sweep
          ({"file": "handoff_sweep", "variant": "handoff (the patch)"}, 1.6)]
CUB_FACTOR = 0.93  # CUB relatively faster on this GPU
READ_FACTOR = 0.8  # the read-only kernel relatively faster: above the theoretical peak, and no stage reaches it
NCU_FACTOR = 0.9
# Accuracy and determinism differ too: one stage's float error is 12 times the measured one (its error over bound
# passes 0.5), and last-block, deterministic by design, is shown with two distinct results at 2^28.
ACCURACY_SCALE = ("05_shuffle", 12.0)
NOT_REPEATED = {"combine": "last-block", "n": "268435456"}

# The profile of this GPU where pages state causes: (match on stage and variant, column, value).
NCU_SET = [({}, "stall_1", "barrier"),  # every reduce kernel: barriers, not memory, on top
           ({"stage": "08_gemm_tiled", "variant": "tiled"}, "stall_1", "long_scoreboard"),
           ({"stage": "08_gemm_tiled", "variant": "tiled padded"}, "stall_1", "long_scoreboard"),
           ({"stage": "08_gemm_tiled", "variant": "naive"}, "stall_1", "lg_throttle"),
           ({"stage": "08_gemm_tiled", "variant": "cuBLAS"}, "stall_1", "not_selected"),
           ({"stage": "08_gemm_tiled", "variant": "naive"}, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "40"),
           ({"stage": "08_gemm_tiled", "variant": "naive"}, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "35"),
           ({"stage": "05_shuffle", "variant": "tree"}, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "80")]
NCU_SCALE = [({"stage": "02_grid_stride", "variant": "tree"}, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", 0.5),
             ({"stage": "02_grid_stride", "variant": "tree"}, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", 0.5),
             ({"stage": "01_naive", "variant": "tree, interleaved"}, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", 0.6)]

# The causal and comparative sentences the conditions guard (template, words): false on this GPU, so a page
# rendered from its results must not contain them. Each must still be in its template, inside an {% if %}.
GUARDED = [
    ("stages/02_grid_stride.md", "the stream-regime launch spends its time waiting for it"),
    ("stages/03_padding.md", "the grid-stride loop's loads are the time"),
    ("stages/06_float4.md", "the threads still wait for memory"),
    ("stages/05_shuffle.md", "This is latency, not bandwidth"),
    ("stages/08_gemm_tiled.md", "the naive kernel is bound by cache throughput"),
    ("stages/08_gemm_tiled.md", "the profile below puts it at the shared-memory pipeline"),
    ("stages/07_multiblock.md", "consistent with atomics that one address serialises"),
    ("stages/07_multiblock.md", "it is the costly one"),
    ("stages/07_multiblock.md", "the atomics no longer set the pace"),
    ("stages/01_naive.md", "has as many"),
    ("stages/01_naive.md", "the shared-load wavefronts stay about the same"),
    ("stages/01_naive.md", "the cost is per block, not per step of the tree"),
    ("method.md", "No kernel measured here reads DRAM at the theoretical peak"),
    ("method.md", "a reference a stage can reach"),
    ("index.md", "Its step shows where the combine is a larger share of the time"),
    ("accuracy.md", "a correct sum stays inside it with room to spare"),
    ("articles.md", "while two-pass and last-block repeated their bits at every size"),
    ("articles.md", "the copy, not the kernel, decides"),
]

def _matches(row, match, file=None):
    return all((file == v) if k == "file" else (row.get(k) == v) for k, v in match.items())

def _num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None

def _fmt(v):
    return f"{v:.6g}"

def _rewrite_row(r, scale, old_sms, file=None):
    out = dict(r)
    out.update({k: str(GPU[k]) for k in GPU if k in out})
    if file == "cpu":
        out["cpu"] = CPU["cpu"]
        if out.get("row") == "all_cores":
            out["threads"] = CPU["threads"]
    if out.get("sm_clock_start_mhz"):
        out.update(CLOCKS)
        if file == THROTTLED_FILE:
            out["throttled"], out["clock_reasons"] = "yes", "sw_power_cap"
    if file == "accuracy" and out.get("stage") == ACCURACY_SCALE[0] and _num(out.get("abs_error")) is not None:
        out["abs_error"] = _fmt(_num(out["abs_error"]) * ACCURACY_SCALE[1])
        if _num(out.get("result")) is not None and _num(out.get("reference")) is not None:
            out["result"] = _fmt(_num(out["reference"]) + _num(out["abs_error"]))
    if file == "determinism" and _matches(r, NOT_REPEATED):
        out["distinct_results"], out["bitwise_identical"] = "2", "false"
    bps = _num(out.get("blocks_per_sm"))
    if "grid" in out and out.get("regime") == "stream" and bps and _num(out["grid"]) == bps * old_sms:
        out["grid"] = str(int(bps) * GPU["sms"])  # a grid the SM count set (not a one-block or a small-n launch)
    factor = scale  # every time scaled (the floors too), the stage's own reranked where RERANK says
    for match, extra in RERANK:
        factor *= extra if _matches(r, match, file) else 1
    for k in list(out):
        if k.endswith(("ms_median", "ms_min", "ms_max")) and _num(out[k]) is not None:
            which = k.split("_ms_")[0] if "_ms_" in k else ""
            out[k] = _fmt(_num(out[k]) * {"": factor, "cub": scale * CUB_FACTOR, "read": scale * READ_FACTOR}.get(which, scale))
        elif k in ("empty_launch_ms", "memset4_ms") and _num(out[k]) is not None:
            out[k] = _fmt(_num(out[k]) * scale)
    return _gemm_rates(out) if "m" in out else _sum_rates(out)

def _gemm_rates(out):
    """A GEMM row's rates from its new times: 2 M N K FLOP."""
    flop = 2.0 * _num(out["m"]) * _num(out["n"]) * _num(out["k"])
    for prefix in ("", "naive_", "cublas_"):
        if _num(out.get(f"{prefix}ms_median")):
            out[f"{prefix}gflops"] = _fmt(flop / (_num(out[f"{prefix}ms_median"]) * 1e6))
    ms = _num(out.get("ms_median"))
    if ms:
        out["pct_cublas"] = _fmt(100 * _num(out["cublas_ms_median"]) / ms)
        out["x_naive"] = _fmt(_num(out["naive_ms_median"]) / ms)
        out["pct_fp32_peak"] = _fmt(100 * _num(out["gflops"]) / GPU["fp32_peak_gflops"])
        out["cublas_pct_fp32_peak"] = _fmt(100 * _num(out["cublas_gflops"]) / GPU["fp32_peak_gflops"])
    return out

def _sum_rates(out):
    """A sum's rates from its new times: the bytes each moves over its time."""
    n = _num(out.get("n"))
    if not n:
        return out
    for prefix, moved in {"": 4 * n, "cub_": 4 * n, "read_": 4 * n, "copy_": 8 * n}.items():
        ms = _num(out.get(f"{prefix}ms_median"))
        if ms:
            out[f"{prefix}gbps"] = _fmt(moved / (ms * 1e6))
            if f"{prefix}pct_peak" in out:  # not in the CPU's rows
                out[f"{prefix}pct_peak"] = _fmt(100 * moved / (ms * 1e6) / GPU["peak_gbps"])
    ms = _num(out.get("ms_median"))
    if ms and _num(out.get("cub_ms_median")):
        out["x_cub"] = _fmt(_num(out["cub_ms_median"]) / ms)
    if ms and _num(out.get("read_ms_median")):
        out["pct_read"] = _fmt(100 * _num(out["read_ms_median"]) / ms)
    return out

def _rewrite_ncu(r):
    out = {k: _fmt(_num(v) * NCU_FACTOR) if _num(v) is not None and k not in (
        "stage", "variant", "n_or_size", "kernel", "grid", "block", "launch__registers_per_thread") else v
        for k, v in r.items()}
    for match, key, value in NCU_SET:
        if _matches(r, match) and key in out:
            out[key] = value
    for match, key, factor in NCU_SCALE:
        if _matches(r, match) and _num(out.get(key)) is not None:
            out[key] = _fmt(_num(out[key]) * factor)
    if out["stall_1"] == r.get("stall_2"):
        out["stall_2"] = r.get("stall_1", "")  # the measured top stall takes second place
    return out

def write(src, dst):
    """Writes the synthetic results set into dst from the measured one in src."""
    src, dst = pathlib.Path(src), pathlib.Path(dst)
    meta = json.loads((src / "meta.json").read_text())
    scale, old_sms = float(meta["peak_gbps"]) / GPU["peak_gbps"], int(meta["sms"])
    for path in src.iterdir():
        target = dst / path.name
        if path.suffix == ".json":
            data = json.loads(path.read_text())
            for m in data if isinstance(data, list) else [data]:  # a record, or a list of them
                m.update({k: GPU[k] for k in m if k in GPU})
                m.update({k: v for k, v in (("date", "2000-01-01"), ("commit", "0000000")) if k in m})
            target.write_text(json.dumps(data, indent=2) + "\n")
            continue
        with open(path, newline="") as fh:
            data = list(csv.DictReader(fh)) if path.suffix == ".csv" else None
        if not data:
            shutil.copy(path, target)
            continue
        with open(target, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(data[0]))
            w.writeheader()
            w.writerows(_rewrite_ncu(r) if path.stem == "ncu" else _rewrite_row(r, scale, old_sms, path.stem) for r in data)
