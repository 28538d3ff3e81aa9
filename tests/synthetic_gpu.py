"""A second GPU for the docs test: the measured results rewritten as if they came from another, smaller GPU.

scripts/make_docs.py --check renders every page from these results too. A page that still shows a fact of the
GPU really measured (its name, SM count, L2, peak, grid) typed into a template, or a comparative word that
disagrees with the new numbers, fails the check. The GPU differs in every fact the templates may not type, and
the stages rank differently: 03 is slower than 02 in the tree regime, 07 slower than CUB, 05 slower than 04 in
the stream regime, so a "faster" typed by hand turns false here.
"""
import csv
import json
import pathlib
import shutil

GPU = {"device": "Example GPU S46", "compute_capability": "8.9", "sms": 46, "l2_bytes": 25165824,
       "peak_gbps": 1008.0, "clock_mhz": 2100, "fp32_lanes_per_sm": 128}
GPU["fp32_peak_gflops"] = 2.0 * GPU["fp32_lanes_per_sm"] * GPU["sms"] * GPU["clock_mhz"] / 1e3

# Extra time factors per (stage, regime) on top of the bandwidth ratio: a different ranking of the rungs.
RERANK = {("03_padding", "tree"): 1.30, ("04_warp_unroll", "stream"): 0.97, ("05_shuffle", "stream"): 1.12,
          ("07_multiblock", "stream"): 1.15, ("06_float4", "tree"): 0.85, ("01_naive", "tree"): 0.9}
CUB_FACTOR = 0.93  # CUB relatively faster on this GPU
NCU_FACTOR = 0.9


def _num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _fmt(v):
    return f"{v:.6g}"


def _rewrite_row(r, scale, old_sms):
    out = dict(r)
    for k in ("device", "compute_capability", "sms", "l2_bytes", "peak_gbps", "clock_mhz", "fp32_lanes_per_sm",
              "fp32_peak_gflops"):
        if k in out:
            out[k] = str(GPU[k])
    if "grid" in out and out.get("regime") == "stream" and _num(out.get("blocks_per_sm")):
        out["grid"] = str(int(_num(out["blocks_per_sm"])) * GPU["sms"])
    factor = scale * RERANK.get((out.get("stage"), out.get("regime")), 1.0)
    for k in list(out):
        if not k.endswith(("ms_median", "ms_min", "ms_max")) or _num(out[k]) is None:
            continue
        which = k.split("_ms_")[0] if "_ms_" in k else ""
        f = {"": factor, "cub": scale * CUB_FACTOR}.get(which, scale)
        out[k] = _fmt(_num(out[k]) * f)
    peak = GPU["peak_gbps"]
    if "m" in out:  # GEMM: 2 M N K FLOP
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
    n = _num(out.get("n"))
    if n:
        moved = {"": 4 * n, "cub_": 4 * n, "read_": 4 * n, "copy_": 8 * n}
        for prefix, b in moved.items():
            ms = _num(out.get(f"{prefix}ms_median"))
            if ms:
                out[f"{prefix}gbps"] = _fmt(b / (ms * 1e6))
                out[f"{prefix}pct_peak"] = _fmt(100 * b / (ms * 1e6) / peak)
        ms = _num(out.get("ms_median"))
        if ms and _num(out.get("cub_ms_median")):
            out["x_cub"] = _fmt(_num(out["cub_ms_median"]) / ms)
        if ms and _num(out.get("read_ms_median")):
            out["pct_read"] = _fmt(100 * _num(out["read_ms_median"]) / ms)
    return out


def _rewrite_ncu(r):
    out = dict(r)
    for k, v in r.items():
        if k in ("stage", "variant", "n_or_size", "kernel", "grid", "block", "launch__registers_per_thread") or \
                k in ("stall_1", "stall_2", "stall_3"):
            continue
        if _num(v) is not None:
            out[k] = _fmt(_num(v) * NCU_FACTOR)
    out["stall_1"], out["stall_2"] = r.get("stall_2", ""), r.get("stall_1", "")  # another top stall
    return out


def write(src, dst):
    """Writes the synthetic results set into dst from the measured one in src."""
    src, dst = pathlib.Path(src), pathlib.Path(dst)
    meta = json.loads((src / "meta.json").read_text())
    scale = float(meta["peak_gbps"]) / GPU["peak_gbps"]
    old_sms = int(meta["sms"])
    for path in src.iterdir():
        target = dst / path.name
        if path.suffix == ".csv":
            with open(path, newline="") as fh:
                data = list(csv.DictReader(fh))
            if not data:
                shutil.copy(path, target)
                continue
            rows = [_rewrite_ncu(r) if path.stem == "ncu" else _rewrite_row(r, scale, old_sms) for r in data]
            with open(target, "w", newline="") as fh:
                w = csv.DictWriter(fh, fieldnames=list(data[0]))
                w.writeheader()
                w.writerows(rows)
        elif path.suffix == ".json":
            m = json.loads(path.read_text())
            m.update({k: GPU[k] for k in m if k in GPU})
            if "date" in m:
                m["date"] = "2000-01-01"
            if "commit" in m:
                m["commit"] = "0000000"
            target.write_text(json.dumps(m, indent=2) + "\n")
        else:
            shutil.copy(path, target)
