#!/usr/bin/env python3
"""The thread models behind the stage pages' diagrams (scripts/kernel_models.py), held to the kernels. No GPU:
it reads the committed docs/results/ncu.csv and sass_*.txt, and compiles 06's own lines with the host compiler.

  1. every CUDA line a model mirrors is in its stage file, and stages said to share a block_reduce() do;
  2. every fact of the machine code a model relies on (kernel_models.COMPILED) holds in sass_<stage>.txt;
  3. each profiled launch (kernel_models.PROFILED): the model's shared-memory instructions and conflict-free
     wavefronts for one block, times the blocks launched, equal the counters; its bank conflicts lie within
     kernel_models.TOLERANCE of them;
  4. 06's head / float4 body / tail split, and the thread that reads each element, from the model and from the
     kernel's lines compiled on the host, at input offsets 0-3 and every n mod 4 (no element read twice, none
     missed, none outside [in, in + n));
  5. planted drifts, models with one expression changed, must each fail 3 or 4.

  check_thread_models.py [--cxx COMPILER]
"""
import argparse
import csv
import pathlib
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results"
sys.path.insert(0, str(ROOT / "scripts"))
import kernel_models as km  # noqa: E402

CXX = "g++"


def stage_source(stage):
    return next((ROOT / stage).glob("*.cu")).read_text()


def ncu_rows():
    with open(RESULTS / "ncu.csv", newline="") as f:
        return list(csv.DictReader(f))


def ncu_row(stage, variant):
    return next(r for r in ncu_rows() if r["stage"] == stage and r["variant"] == variant)


def counter_problems(stage, variant, **kw):
    return [p for c in km.compare(ncu_row(stage, variant), **kw) for p in c.problems()]


def function_text(source, signature):
    """The text of the function that starts with signature, to its closing brace at column 0."""
    start = source.index(signature)
    return source[start:source.index("\n}\n", start) + 2]


# ---- 06 on the host: the kernel's own lines, every thread of a small grid -----------------------------------

HARNESS = r"""// 06_float4's reduce_kernel up to block_reduce(), its lines pasted from the stage file by
// tests/check_thread_models.py, run on the host for every thread of a small grid.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

struct alignas(16) float4 { float x, y, z, w; };
struct Index { unsigned x; };
static Index blockIdx, threadIdx, blockDim, gridDim;
@CONSTANT@

static float thread_sum(const float* __restrict__ in, std::size_t n, std::size_t* split) {
@LINES@
  split[0] = head;
  split[1] = vectors;
  split[2] = tail;
  return sum;
}

// argv: grid block n...; prints "offset n head vectors tail reader..." (reader: the one thread whose sum is
// exactly that element, x if none, several, or a read outside the input made a sum NaN).
int main(int argc, char** argv) {
  gridDim.x = static_cast<unsigned>(std::atoi(argv[1]));
  blockDim.x = static_cast<unsigned>(std::atoi(argv[2]));
  for (unsigned offset = 0; offset < 4; ++offset) {
    for (int a = 3; a < argc; ++a) {
      const std::size_t n = std::strtoull(argv[a], nullptr, 10);
      std::vector<float4> storage(n / 4 + 8);  // 16-byte aligned, as the allocation of a device buffer is
      float* base = &storage[0].x;
      for (std::size_t i = 0; i < 4 * storage.size(); ++i) base[i] = NAN;
      float* in = base + 4 + offset;
      std::size_t split[3] = {0, 0, 0};
      std::printf("%u %zu", offset, n);
      bool first = true;
      for (std::size_t j = 0; j < n; ++j) {
        for (std::size_t i = 0; i < n; ++i) in[i] = i == j ? 1.0f : 0.0f;
        long reader = -1;
        int nonzero = 0;
        for (blockIdx.x = 0; blockIdx.x < gridDim.x; ++blockIdx.x) {
          for (threadIdx.x = 0; threadIdx.x < blockDim.x; ++threadIdx.x) {
            const float s = thread_sum(in, n, split);
            if (s != 0.0f) {
              ++nonzero;
              reader = s == 1.0f ? long(blockIdx.x * blockDim.x + threadIdx.x) : -1;
            }
          }
        }
        if (first) std::printf(" %zu %zu %zu", split[0], split[1], split[2]);
        first = false;
        if (nonzero == 1 && reader >= 0) std::printf(" %ld", reader);
        else std::printf(" x");
      }
      if (first) {
        thread_sum(in, n, split);
        std::printf(" %zu %zu %zu", split[0], split[1], split[2]);
      }
      std::printf("\n");
    }
  }
  return 0;
}
"""
SIZES = list(range(0, 41)) + list(range(96, 112)) + [200, 201, 202, 203]  # every n mod 4; the unrolled loop runs
GRIDS = [(2, 3), (1, 5)]  # (grid, block): 6 and 5 threads


def kernel_lines_06():
    """The constant and the lines of 06's reduce_kernel from `stride` to the tail, verbatim."""
    source = stage_source("06_float4")
    constant = next(l for l in source.splitlines() if l.startswith("constexpr int kLoadsInFlight"))
    body = function_text(source, "__global__ void reduce_kernel").splitlines()
    first = next(i for i, l in enumerate(body) if "const std::size_t stride" in l)
    last = next(i for i, l in enumerate(body) if "if (tid < tail)" in l)
    return constant, "\n".join(body[first:last + 1])


def kernel_split_06(workdir):
    """{(grid, block): output lines} from 06's lines compiled with CXX."""
    constant, lines = kernel_lines_06()
    src, exe = pathlib.Path(workdir) / "split06.cpp", pathlib.Path(workdir) / "split06"
    src.write_text(HARNESS.replace("@CONSTANT@", constant).replace("@LINES@", lines))
    build = subprocess.run([CXX, "-std=c++17", "-O1", "-fno-strict-aliasing", "-Wall", "-Wextra", "-Werror",
                            "-Wno-unknown-pragmas", "-o", str(exe), str(src)], capture_output=True, text=True)
    if build.returncode:
        raise AssertionError(f"06's lines do not compile on the host:\n{build.stderr}")
    out = {}
    for grid, block in GRIDS:
        run = subprocess.run([str(exe), str(grid), str(block), *map(str, SIZES)], capture_output=True, text=True,
                             check=True)
        out[(grid, block)] = run.stdout.splitlines()
    return out


def model_split_06(grid, block):
    lines = []
    for offset in range(4):
        for n in SIZES:
            head, vectors, tail = km.split(4 * offset, n)
            who = [str(w[0]) if w else "x" for w in km.readers(4 * offset, n, grid * block)]
            lines.append(" ".join([str(offset), str(n), str(head), str(vectors), str(tail), *who]))
    return lines


def split_problems(kernel):
    """The first line per launch shape where model and kernel disagree, and any element the kernel reads in no
    thread, in several, or with a read outside the input."""
    out = []
    for shape, lines in kernel.items():
        where = f"06 split, grid {shape[0]} x block {shape[1]}"
        wrong = [(got, want) for got, want in zip(lines, model_split_06(*shape)) if got != want]
        if wrong:
            out.append(f"{where}: the kernel gives '{wrong[0][0][:48]}', the model '{wrong[0][1][:48]}'")
        unread = [line for line in lines if "x" in line.split()[5:]]
        if unread:
            out.append(f"{where}: an element read by no thread or by several, or a read outside the input: "
                       f"'{unread[0][:48]}'")
    return out


# ---- planted drifts: a model with one expression changed, which the checks above must catch --------------------

def _split_from_wrong_end(address, n):
    to_boundary = address % 16 // 4  # drift: the floats since the boundary below, not those to the one above
    head = to_boundary if to_boundary < n else n
    return head, (n - head) // 4, (n - head) % 4


def _gemm_without_padding(tid, smem, tile, pad, **kw):
    return km.gemm_thread(tid, smem, tile, 0, **kw)  # drift: the padded tile modelled as the unpadded one


def drift_unpadded_03(_):
    with mock.patch.object(km, "padded", lambda i: i):
        return counter_problems("03_padding", "tree")


def drift_tree_index_01(_):
    with mock.patch.object(km, "tree_index", lambda s, tid: s * tid):
        return counter_problems("01_naive", "tree")


def drift_final_read_01(_):
    return counter_problems("01_naive", "tree", compiled=False)


def drift_padding_08(_):
    return counter_problems("08_gemm_tiled", "tiled padded", models={"08_gemm_tiled": _gemm_without_padding})


def drift_split_06(kernel06):
    with mock.patch.object(km, "split", _split_from_wrong_end):
        return split_problems(kernel06)


DRIFTS = {
    "03 without its padding word (padded(i) = i)": drift_unpadded_03,
    "01's tree indexed s * tid, not 2 * s * tid": drift_tree_index_01,
    "01's final read in every thread, as the source reads it (compiled=False)": drift_final_read_01,
    "08's padded tile modelled without its padding": drift_padding_08,
    "06's 16-byte boundary counted from the wrong end": drift_split_06,
}


# ---- the tests -----------------------------------------------------------------------------------------------

class Models(unittest.TestCase):
    kernel06 = None

    @classmethod
    def setUpClass(cls):
        with tempfile.TemporaryDirectory() as tmp:
            cls.kernel06 = kernel_split_06(tmp)

    def test_mirrored_lines_are_in_the_stage_files(self):
        for stage in km.MODELS:
            source = stage_source(stage)
            self.assertTrue(km.mirrored(stage), f"the models of {stage} copy no line of it")
            for line in km.mirrored(stage):
                with self.subTest(stage=stage, line=line):
                    self.assertTrue(line in source, f"{stage} no longer has the line its model mirrors: {line}")
        for stage, same in km.SAME_AS.items():
            with self.subTest(stage=stage):
                signature = "__device__ float block_reduce"
                self.assertEqual(function_text(stage_source(stage), signature),
                                 function_text(stage_source(same), signature),
                                 f"{stage}'s block_reduce() is no longer {same}'s: it needs its own model")

    def test_machine_code_facts(self):
        for stage, facts in km.COMPILED.items():
            lines = (RESULTS / f"sass_{stage}.txt").read_text().splitlines()
            for text, holds in facts:
                with self.subTest(stage=stage, fact=holds.__name__):
                    self.assertTrue(holds(lines), f"sass_{stage}.txt no longer shows: {text}")

    def test_counters(self):
        print()
        for stage, variant in km.PROFILED:
            for c in km.compare(ncu_row(stage, variant)):
                print(f"  {stage:15} {variant:13} {c.op}: conflict-free {c.model['conflict_free']:>12,} model "
                      f"{c.conflict_free:>12,.0f} ncu; conflicts {c.model['conflicts']:>11,} model "
                      f"{c.conflicts:>11,.0f} ncu ({100 * c.excess:+.2f}%)")
                with self.subTest(stage=stage, variant=variant, op=c.op):
                    self.assertEqual(c.problems(), [])

    def test_split_06(self):
        self.assertEqual(split_problems(self.kernel06), [])
        self.assertEqual(sum(len(v) for v in self.kernel06.values()), 4 * len(SIZES) * len(GRIDS))

    def test_planted_drifts_fail(self):
        print()
        for name in DRIFTS:
            found = DRIFTS[name](self.kernel06)
            print(f"  planted drift: {name}: {'caught: ' + '; '.join(found) if found else 'MISSED'}")
            with self.subTest(drift=name):
                self.assertTrue(found, f"the planted drift '{name}' passes the checks")


def main():
    global CXX
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cxx", default="g++", help="the host C++ compiler for 06's lines (default g++)")
    a, rest = p.parse_known_args()
    CXX = a.cxx
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)


if __name__ == "__main__":
    main()
