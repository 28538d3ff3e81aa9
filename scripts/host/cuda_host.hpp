// Just enough CUDA to run a stage's device code on the host, one block at a time, and log what its threads do.
//
// scripts/host_run.py pastes a stage file's kernels and device functions, unchanged, after this header (only
// the __shared__ declarations are rewritten, into the arrays below). Every thread of a block is a fiber;
// __syncthreads(), __syncwarp() and the __shfl_*_sync() exchanges switch fibers, so the threads run as the
// CUDA model allows: up to the next barrier in any order. What the log records, one line each:
//   S op tid phase seq array byte bytes line value   a shared-memory access (op ld or st)
//   X tid phase kind src value result                 a shuffle: lane tid read lane src's value
//   G tid phase how region element dest               a float4 copied out of a global region
//   A tid                                             atomicAdd(p, value) on a float
//   T tid old written                                 a ticket: atomic_ref fetch_add; written lists the
//                                                     elements of the watched region that hold a value
//   L tid region element                              __ldcg(&region[element])
//   B block                                           a block starts (blocks run one after another)
// phase counts the barriers, warp barriers and shuffles a thread has passed; seq numbers its shared accesses
// since then. Threads of one warp that share (phase, seq) made one warp-wide request.
#pragma once

#undef _FORTIFY_SOURCE  // which makes _longjmp refuse to jump to another stack, as a switch does
#include <setjmp.h>
#include <ucontext.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#define __device__
#define __global__
#define __host__
// A kernel's printf prints nothing here: the host run's output is its results (a GPU run shows what a kernel prints).
inline int ladder_printf(const char*, ...) { return 0; }
#define printf ladder_printf
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__ __restrict

struct uint3 {  // dim3 too (runtime.hpp)
  unsigned x, y, z;
  uint3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

namespace ladder_host {

[[noreturn]] inline void fail(const char* format, ...) {
  std::va_list args;
  va_start(args, format);
  std::fputs("host run: ", stderr);
  std::vfprintf(stderr, format, args);
  std::fputc('\n', stderr);
  va_end(args);
  std::_Exit(3);  // not exit(): a fiber that fails must not unwind the stack it runs on
}

constexpr unsigned kWarp = 32;
constexpr std::size_t kStack = 256 * 1024;
constexpr unsigned kMaxThreads = 1024;  // in a block, as on the GPU

enum class Wait { kNone, kBarrier, kSyncwarp, kShuffle, kDone };
enum Op { kDown, kUp, kXor, kIdx, kBallot, kReduceAdd };  // a warp operation (a vote or a reduction from kBallot on)

struct Fiber {
  uint3 idx;
  unsigned tid = 0;
  Wait wait = Wait::kNone;
  unsigned mask = 0, phase = 0, seq = 0;
  int kind = kDown, arg = 0, width = 32;  // a warp operation (Op), its delta or lane, its width
  unsigned uvalue = 0, uresult = 0;       // a vote's predicate or a reduction's value, and their result
  int line = 0;                           // the line of the __syncthreads() or warp operation it waits at
  float value = 0.0f, result = 0.0f;
  bool seen = false;  // first: the value of its first shared store or shuffle (what it brings to the block's sum)
  float first = 0.0f;
};

inline void first_value(Fiber& f, float v) {
  if (!f.seen) f.seen = true, f.first = v;
}

struct Region {
  std::string name;
  const void* base;
  std::size_t bytes;
};

struct Shared {  // one block's shared memory: the dynamic array, then the static ones in the order they are declared
  std::vector<unsigned char> bytes, written;
  std::vector<std::pair<std::string, std::size_t>> arrays;  // name, byte offset
  std::size_t dynamic_bytes = 0;
};

struct Run {
  uint3 grid, block, block_idx;
  std::vector<Fiber> fibers;
  Fiber* current = nullptr;
  // Thread t of every block runs on stack t, in trampoline(); a switch is a _longjmp (swapcontext makes a system call)
  std::unique_ptr<char[]> stacks{new char[kMaxThreads * kStack]};  // pages are touched as they are used
  std::unique_ptr<jmp_buf[]> resume{new jmp_buf[kMaxThreads]};     // where thread t yielded
  std::vector<bool> started = std::vector<bool>(kMaxThreads);
  jmp_buf back;  // where the scheduler switched to a thread
  std::function<void()> body;
  std::function<void(unsigned)> on_block_end;
  Shared shared;
  std::vector<Region> regions;
  Region watched{};         // the region a ticket reports on
  bool reverse = false;     // run the threads from the last to the first, up to each barrier
  int block_order = 0;      // a launch's blocks (runtime.hpp): 0 first to last, 1 last to first, 2 shuffled (seeded)
  int launches = 0;         // made so far
  std::FILE* log = stdout;  // nullptr: log nothing
};

inline Run& run() {
  static Run r;
  return r;
}
inline Fiber& self() {
  if (!run().current) fail("a CUDA built-in was used outside a running block");
  return *run().current;
}

inline void logf(const char* format, ...) {
  if (run().log == nullptr) return;  // a quiet run: only its results are printed
  std::va_list args;
  va_start(args, format);
  std::vfprintf(run().log, format, args);
  va_end(args);
}

inline const Region* region_of(const void* p, std::size_t* element, std::size_t size) {
  const auto* c = static_cast<const char*>(p);
  for (const Region& r : run().regions) {
    const auto* base = static_cast<const char*>(r.base);
    if (c >= base && c < base + r.bytes) {
      *element = static_cast<std::size_t>(c - base) / size;
      return &r;
    }
  }
  return nullptr;
}

// ---- switching threads ----------------------------------------------------------------------------------------

inline void yield(Wait why) {
  Fiber& f = self();
  f.wait = why;
  if (_setjmp(run().resume[f.tid]) == 0) _longjmp(run().back, 1);  // resumed as f, or after kDone the next block's
}

// A warp operation's mask, which must name the lane that calls it (CUDA leaves the result undefined otherwise).
inline void take_mask(Fiber& f, unsigned mask, int line) {
  if (!(mask >> f.tid % kWarp & 1u))
    fail("line %d: thread %u calls a warp operation with the mask 0x%08x, which leaves out its own lane %u: every "
         "lane that calls one must be in its mask", line, f.tid, mask, f.tid % kWarp);
  f.mask = mask, f.line = line;
}

inline void passed(Fiber& f) {
  f.wait = Wait::kNone;
  ++f.phase;
  f.seq = 0;
}

inline void trampoline() {  // on stack t: thread t of one block, then of the next
  for (;; yield(Wait::kDone)) run().body();
}

// Resolves the warp-wide operation `first` waits at, once every lane of its mask waits there too.
inline bool resolve_group(unsigned w, const std::vector<Fiber*>& lanes, const Fiber* first) {
  const unsigned mask = first->mask;
  for (unsigned l = 0; l < kWarp; ++l) {
    const Fiber* f = lanes[l];
    if (!(mask >> l & 1u) || !f) continue;  // !f: past the end of a block smaller than a warp, an inactive lane
    if (f->wait == Wait::kDone) fail("warp %u: lane %u has exited, but the mask of a warp operation names it", w, l);
    if (f->wait != first->wait || f->mask != mask) return false;  // not there yet
    if (f->wait == Wait::kShuffle && (f->kind >= kBallot || first->kind >= kBallot) && f->kind != first->kind)
      fail("warp %u: lanes %u and %u wait at different warp operations (a vote or reduction and another)", w,
           first->tid % kWarp, l);
  }
  for (unsigned l = 0; l < kWarp; ++l) {
    Fiber* f = lanes[l];
    if (!(mask >> l & 1u) || !f) continue;
    if (f->wait == Wait::kShuffle && f->kind >= kBallot) {  // over the lanes of the mask
      f->uresult = 0;
      for (unsigned k = 0; k < kWarp; ++k)
        if ((mask >> k & 1u) && lanes[k])
          f->uresult += f->kind == kBallot ? (lanes[k]->uvalue != 0u) << k : lanes[k]->uvalue;
    } else if (f->wait == Wait::kShuffle) {
      const int width = f->width, base = static_cast<int>(l) / width * width, in = static_cast<int>(l) - base;
      int src = f->kind == kDown ? in + f->arg
                : f->kind == kUp ? in - f->arg
                : f->kind == kXor ? in ^ f->arg
                                  : (f->arg % width + width) % width;  // __shfl_sync wraps its lane into the segment
      if (src < 0 || src >= width) src = in;  // out of the segment: the lane keeps its own value
      src += base;
      const bool named = (mask >> src & 1u) && lanes[static_cast<unsigned>(src)];
      f->result = named ? lanes[static_cast<unsigned>(src)]->value : NAN;
      logf("X %u %u %d %d %.9g %.9g\n", f->tid, f->phase, f->kind, named ? src : -1, f->value, f->result);
    }
    passed(*f);  // what the others read of it (value, uvalue) stays
  }
  return true;
}

// Resolves a warp-wide operation the lanes of warp w wait at: the first group whose every lane waits there.
inline bool resolve_warp(unsigned w) {
  Run& r = run();
  std::vector<Fiber*> lanes(kWarp, nullptr);
  for (unsigned l = 0; l < kWarp && w * kWarp + l < r.fibers.size(); ++l) lanes[l] = &r.fibers[w * kWarp + l];
  for (const Fiber* first : lanes)  // each waiting lane's group in turn: the tiles of one warp wait at their own ops
    if (first && (first->wait == Wait::kSyncwarp || first->wait == Wait::kShuffle) && resolve_group(w, lanes, first))
      return true;
  return false;
}

[[noreturn]] inline void deadlock(const Run& r) {  // each place threads wait at: how many, the first of them
  std::map<std::string, std::pair<unsigned, unsigned>> at;  // {where: (its first thread, its threads)}
  for (const Fiber& f : r.fibers) {
    const std::string where = f.wait == Wait::kBarrier ? "__syncthreads() at line " : "a warp operation at line ";
    if (f.wait != Wait::kDone) ++at.try_emplace(where + std::to_string(f.line), f.tid, 0).first->second.second;
  }
  std::string said;
  for (const auto& [where, who] : at)
    said += (said.empty() ? " " : "; ") + (who.second == 1 ? "thread " : std::to_string(who.second) + " threads from ")
            + std::to_string(who.first) + " at " + where;
  fail("deadlock: no thread can go on, and not all wait at one barrier:%s", said.c_str());
}

// Runs one block: every thread to its next barrier, then the barrier, until all have returned.
inline void run_block(uint3 block_idx) {
  Run& r = run();
  r.block_idx = block_idx;
  const unsigned threads = r.block.x * r.block.y * r.block.z;
  // The block's threads as fibers, each at the start of the kernel, and its shared memory NaN, unwritten.
  r.shared.bytes.assign(r.shared.dynamic_bytes, 0xff);  // NaN in every word, as the harness leaves it on the GPU
  r.shared.written.assign(r.shared.dynamic_bytes, 0);
  r.shared.arrays.clear();
  if (threads > kMaxThreads) fail("a block of %u threads: a GPU runs at most %u", threads, kMaxThreads);
  r.fibers = std::vector<Fiber>(threads);
  for (unsigned t = 0; t < threads; ++t) {
    r.fibers[t].tid = t;
    r.fibers[t].idx = {t % r.block.x, t / r.block.x % r.block.y, t / (r.block.x * r.block.y)};
  }
  const unsigned linear = block_idx.x + r.grid.x * (block_idx.y + r.grid.y * block_idx.z);
  logf("B %u\n", linear);
  for (;;) {
    bool moved = false, alive = false, at_barrier = true;
    for (unsigned k = 0; k < threads; ++k) {
      Fiber& f = r.fibers[r.reverse ? threads - 1 - k : k];
      if (f.wait == Wait::kNone) {
        r.current = &f;
        if (_setjmp(r.back) == 0) {  // the thread runs until it yields, which jumps back here
          if (r.started[f.tid]) _longjmp(r.resume[f.tid], 1);
          r.started[f.tid] = true;
          ucontext_t start;
          getcontext(&start);
          start.uc_stack.ss_sp = r.stacks.get() + f.tid * kStack;
          start.uc_stack.ss_size = kStack;
          makecontext(&start, trampoline, 0);
          setcontext(&start);
        }
        r.current = nullptr;
        moved = true;
      }
    }
    for (unsigned w = 0; w * kWarp < threads; ++w) moved = resolve_warp(w) || moved;
    for (Fiber& f : r.fibers) {
      alive = alive || f.wait != Wait::kDone;
      at_barrier = at_barrier && (f.wait == Wait::kBarrier || f.wait == Wait::kDone);
    }
    if (!alive) {
      if (r.on_block_end) r.on_block_end(linear);
      return;
    }
    if (at_barrier) {  // every thread waits at a __syncthreads(): they must all wait at the same one; then all pass it
      const Fiber* one = nullptr;
      for (Fiber& f : r.fibers) {
        if (f.wait != Wait::kBarrier) continue;
        if (one && f.line != one->line)
          fail("threads %u and %u wait at different __syncthreads() (lines %d and %d): a barrier inside code "
               "not every thread runs", one->tid, f.tid, one->line, f.line);
        one = one ? one : &f;
        passed(f);
      }
    } else if (!moved) {
      deadlock(r);
    }
  }
}

}  // namespace ladder_host

#include "shared.hpp"  // shared memory that logs every access

// ---- the CUDA built-ins ---------------------------------------------------------------------------------------

#define threadIdx (::ladder_host::self().idx)
#define blockIdx (::ladder_host::run().block_idx)
#define blockDim (::ladder_host::run().block)
#define gridDim (::ladder_host::run().grid)

inline void __syncthreads(int line = __builtin_LINE()) {
  ladder_host::self().line = line;
  ladder_host::yield(ladder_host::Wait::kBarrier);
}

inline void __syncwarp(unsigned mask = 0xffffffffu, int line = __builtin_LINE()) {
  ladder_host::take_mask(ladder_host::self(), mask, line);
  ladder_host::yield(ladder_host::Wait::kSyncwarp);
}

// A lane's part in a warp operation: it waits there until every lane of the mask does (resolve_group).
inline ladder_host::Fiber& ladder_warp_op(unsigned mask, ladder_host::Op kind, float v, unsigned u, int line,
                                          int arg = 0, int width = 32) {
  ladder_host::Fiber& f = ladder_host::self();
  ladder_host::take_mask(f, mask, line);
  f.kind = kind, f.value = v, f.uvalue = u, f.arg = arg, f.width = width;
  if (kind < ladder_host::kBallot) ladder_host::first_value(f, v);
  ladder_host::yield(ladder_host::Wait::kShuffle);
  return f;
}
#define LADDER_SHUFFLE(name, Arg, kind)                                                              \
  inline float name(unsigned mask, float v, Arg arg, int width = 32, int line = __builtin_LINE()) {  \
    return ladder_warp_op(mask, ladder_host::kind, v, 0, line, static_cast<int>(arg), width).result; \
  }
LADDER_SHUFFLE(__shfl_down_sync, unsigned, kDown)
LADDER_SHUFFLE(__shfl_up_sync, unsigned, kUp)
LADDER_SHUFFLE(__shfl_xor_sync, int, kXor)
LADDER_SHUFFLE(__shfl_sync, int, kIdx)
#undef LADDER_SHUFFLE
inline unsigned __ballot_sync(unsigned mask, int predicate, int line = __builtin_LINE()) {  // bit k: lane k's predicate
  return ladder_warp_op(mask, ladder_host::kBallot, 0.0f, predicate != 0, line).uresult;
}
inline unsigned __reduce_add_sync(unsigned mask, unsigned v, int line = __builtin_LINE()) {
  return ladder_warp_op(mask, ladder_host::kReduceAdd, 0.0f, v, line).uresult;
}

struct alignas(16) float4 {  // copying one out of a global region is a logged 128-bit load
  float x = 0, y = 0, z = 0, w = 0;
  float4() = default;
  float4(float a, float b, float c, float d) : x(a), y(b), z(c), w(d) {}
  float4(const float4& o) : x(o.x), y(o.y), z(o.z), w(o.w) { loaded(o, "construct"); }
  float4& operator=(const float4& o) {
    x = o.x, y = o.y, z = o.z, w = o.w;
    loaded(o, "assign");
    return *this;
  }
  void loaded(const float4& from, const char* how) const {
    std::size_t element = 0;
    if (const auto* r = ladder_host::region_of(&from, &element, sizeof(float))) {
      if (reinterpret_cast<std::uintptr_t>(&from) % 16)
        ladder_host::fail("a float4 load from %s[%zu], which is not on a 16-byte boundary (on the GPU: misaligned "
                          "address)", r->name.c_str(), element);
      const auto& f = ladder_host::self();
      ladder_host::logf("G %u %u %s %s %zu %p\n", f.tid, f.phase, how, r->name.c_str(), element,
                        static_cast<const void*>(this));
    }
  }
};
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
inline unsigned __float_as_uint(float v) { return __builtin_bit_cast(unsigned, v); }
inline float __uint_as_float(unsigned u) { return __builtin_bit_cast(float, u); }

using std::max, std::min;
inline float min(float a, float b) { return std::fmin(a, b); }  // as CUDA's min of two floats: a NaN loses
inline float max(float a, float b) { return std::fmax(a, b); }

// An unsigned atomic in global memory (the launch's ticket, a __device__ counter) that hands out the grid's last
// ticket: every block's partial sum is stored by then.
inline void ticket_taken(const void* p, unsigned old) {
  const auto& shared = ladder_host::run().shared.bytes;
  const bool in_shared = p >= shared.data() && p < shared.data() + shared.size();  // a block's own counter
  const ladder_host::Region& w = ladder_host::run().watched;  // the partial sums (where a launch stores none: skipped)
  if (in_shared || old + 1 != gridDim.x * gridDim.y * gridDim.z) return;
  const auto* sums = static_cast<const float*>(w.base);
  const auto end = sums + std::min<std::size_t>(old + 1, w.bytes / sizeof(float));
  const auto hole = std::find_if(sums, end, [](float x) { return std::isnan(x); });
  if (hole != end && std::any_of(sums, end, [](float x) { return !std::isnan(x); }))
    ladder_host::fail("block %u takes the grid's last ticket before partials[%td] holds a sum: on a GPU the last "
                      "block may read a slot before it is stored (store the sum, then fence or release, then take "
                      "the ticket)", blockIdx.x + blockIdx.y * gridDim.x, hole - sums);
}
template <typename T>
T ladder_exchange(T* p, T v) {
  const T old = *p;
  if constexpr (std::is_same_v<T, unsigned>) ticket_taken(p, old);  // atomicAdd, atomicInc, CAS, atomic_ref
  *p = v;
  return old;
}
inline float atomicAdd(float* p, float v) {
  ladder_host::logf("A %u\n", ladder_host::self().tid);
  return ladder_exchange(p, *p + v);
}

inline float __ldcg(const float* p) {
  std::size_t element = 0;
  const auto* r = ladder_host::region_of(p, &element, sizeof(float));
  ladder_host::logf("L %u %s %zu\n", ladder_host::self().tid, r ? r->name.c_str() : "?", element);
  return *p;
}

// The other loads and stores with a cache hint, and the atomics readers reach for: on the host every thread runs
// alone until it yields, so each is its plain operation. What their hints and scopes mean on a GPU (a non-coherent
// read of what another block wrote, an atomic of block scope across blocks) is the machine-code check's
// (scripts/sass.py), not the host run's.
inline float __ldg(const float* p) { return *p; }
inline float __ldcs(const float* p) { return *p; }
inline float __ldca(const float* p) { return *p; }
inline float4 __ldg(const float4* p) { return *p; }
inline float4 __ldcg(const float4* p) { return *p; }
inline float4 __ldcs(const float4* p) { return *p; }
inline void __stcg(float* p, float v) { *p = v; }
inline float atomicAdd_block(float* p, float v) { return atomicAdd(p, v); }
inline float atomicAdd_system(float* p, float v) { return atomicAdd(p, v); }
inline unsigned atomicAdd(unsigned* p, unsigned v) { return ladder_exchange(p, *p + v); }
inline int atomicAdd(int* p, int v) { return ladder_exchange(p, *p + v); }
inline unsigned atomicAdd_block(unsigned* p, unsigned v) { return atomicAdd(p, v); }
inline unsigned atomicAdd_system(unsigned* p, unsigned v) { return atomicAdd(p, v); }
inline float atomicExch(float* p, float v) { return ladder_exchange(p, v); }
inline unsigned atomicExch(unsigned* p, unsigned v) { return ladder_exchange(p, v); }
inline int atomicExch(int* p, int v) { return ladder_exchange(p, v); }
inline unsigned atomicCAS(unsigned* p, unsigned compare, unsigned v) {
  return ladder_exchange(p, *p == compare ? v : *p);
}
inline int atomicCAS(int* p, int compare, int v) { return ladder_exchange(p, *p == compare ? v : *p); }
inline unsigned atomicInc(unsigned* p, unsigned limit) { return ladder_exchange(p, *p >= limit ? 0u : *p + 1); }
inline void __threadfence() {}
inline void __threadfence_block() {}
inline void __threadfence_system() {}

namespace cuda {
enum thread_scope { thread_scope_system, thread_scope_device, thread_scope_block, thread_scope_thread };
enum memory_order { memory_order_relaxed, memory_order_consume, memory_order_acquire, memory_order_release,
                    memory_order_acq_rel, memory_order_seq_cst };
inline void atomic_thread_fence(memory_order, thread_scope = thread_scope_system) {}  // as __threadfence()
template <typename T, thread_scope = thread_scope_system>
class atomic_ref {  // fetch_add logs the ticket it hands out and what the watched region holds
 public:
  explicit atomic_ref(T& ref) : ref_(ref) {}
  T fetch_add(T v, memory_order = memory_order_seq_cst) const {
    const ladder_host::Region& w = ladder_host::run().watched;
    const auto* values = static_cast<const float*>(w.base);
    std::string written;
    for (std::size_t i = 0; i < w.bytes / sizeof(float); ++i)
      if (!std::isnan(values[i])) written += (written.empty() ? "" : ",") + std::to_string(i);
    ladder_host::logf("T %u %llu %s\n", ladder_host::self().tid, static_cast<unsigned long long>(ref_),
                      written.empty() ? "-" : written.c_str());
    return ladder_exchange(&ref_, ref_ + v);
  }
  T load(memory_order = memory_order_seq_cst) const { return ref_; }
  void store(T v, memory_order = memory_order_seq_cst) const { ref_ = v; }
  T exchange(T v, memory_order = memory_order_seq_cst) const { return ladder_exchange(&ref_, v); }

 private:
  T& ref_;
};
}  // namespace cuda

// Cooperative groups as readers use them: the block, its tiles of 32 lanes or fewer, their sync, shuffles, size and
// rank, and reduce with plus, less or greater (every lane gets the result, as cg::reduce gives it).
namespace cooperative_groups {
struct thread_block {
  void sync(int line = __builtin_LINE()) const { __syncthreads(line); }  // the caller's line, in messages
  unsigned thread_rank() const { return ladder_host::self().tid; }
  unsigned num_threads() const { return blockDim.x * blockDim.y * blockDim.z; }
  unsigned size() const { return num_threads(); }
};
inline thread_block this_thread_block() { return {}; }
template <unsigned N>
struct thread_block_tile {
  static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "a tile of a power of two lanes, at most 32");
  static unsigned mask() { return (N == 32 ? ~0u : (1u << N) - 1) << (ladder_host::self().tid % 32 / N * N); }
  unsigned thread_rank() const { return ladder_host::self().tid % N; }
  unsigned num_threads() const { return N; }
  unsigned size() const { return N; }
  unsigned meta_group_rank() const { return ladder_host::self().tid / N; }
  void sync(int line = __builtin_LINE()) const { __syncwarp(mask(), line); }
  float shfl(float v, int lane, int line = __builtin_LINE()) const { return __shfl_sync(mask(), v, lane, N, line); }
  float shfl_down(float v, unsigned d, int line = __builtin_LINE()) const {
    return __shfl_down_sync(mask(), v, d, N, line);
  }
  float shfl_up(float v, unsigned d, int line = __builtin_LINE()) const {
    return __shfl_up_sync(mask(), v, d, N, line);
  }
  float shfl_xor(float v, int m, int line = __builtin_LINE()) const { return __shfl_xor_sync(mask(), v, m, N, line); }
};
template <unsigned N, typename Parent>
thread_block_tile<N> tiled_partition(const Parent&) {
  return {};
}
template <typename Group>
void sync(const Group& g, int line = __builtin_LINE()) {
  g.sync(line);
}
template <typename T>
using plus = std::plus<T>;
template <typename T>
struct less {
  T operator()(T a, T b) const { return a < b ? a : b; }
};
template <typename T>
struct greater {
  T operator()(T a, T b) const { return a > b ? a : b; }
};
template <unsigned N, typename T, typename Op>
T reduce(const thread_block_tile<N>& t, T v, Op op, int line = __builtin_LINE()) {
  for (unsigned m = N / 2; m > 0; m /= 2) v = op(v, t.shfl_xor(v, static_cast<int>(m), line));
  return v;
}
}  // namespace cooperative_groups
