// The main() of a host run: which kernel, on which launch and input; the log goes to stdout (cuda_host.hpp).
//
//   run ENTRY [grid=X[,Y]] [block=X[,Y]] [n=N] [offset=F] [order=B,B,...] [m=M] [k=K] [readers=1] [reverse=1]
//       [launches=N] [quiet=1] [outs=N] [combine=C] [limit=L] [blocks=O] [tile=T] [pad=P] [cycle=C]
//
// ENTRY "launcher" is the stage's own launcher (runtime.hpp runs the launches it makes), called with block, limit
// (the grid limit), combine (an index into Combine) and two partial-sum buffers of grid floats each, or for GEMM with
// tile and pad; blocks=0, 1 or 2 runs every launch's blocks first to last, last to first or shuffled. The other
// entries are one kernel each, launched with grid and block, its blocks one after another in `order` (default 0, 1..).
//
// A reduce kernel sums n floats in[i] = i + 1 (exact in float below 2^24; cycle=C: i % C + 1) from `offset` floats
// past a 16-byte boundary; the input is NaN outside [in, in + n), so a read past it shows in the sum. A GEMM kernel
// multiplies an m x k A by a k x n B with A[i] = i + 1 and B[i] = -(i + 1), so a tile's stored value says which
// element it holds. Afterwards "R region element value" for every element of out, ticket and C.
// readers=1: for each element e of a reduce input, a run with in[e] = 1 and every other element 0, printing
// "E e sum thread:value..." (the result, and each thread whose first value, its first shared store or shuffle, is
// not 0). reverse=1: each block's threads run from the last to the first up to every barrier. launches=N: the blocks
// run N times in one process (the kernel's __device__ variables and the ticket carry over; out and partials are reset
// as the harness resets them), the results are the last launch's. quiet=1: the results alone, no log of the accesses.
#pragma once  // included after cuda_host.hpp, whose standard headers it uses

namespace ladder_host {

struct Args {
  const float* in = nullptr;
  std::size_t n = 0;
  float *out = nullptr, *partials = nullptr;
  unsigned* ticket = nullptr;
  const float *A = nullptr, *B = nullptr;
  float* C = nullptr;
  int M = 0, N = 0, K = 0;
  ladder::ReduceLaunch launch{};  // the launcher's
  ladder::GemmLaunch gemm{};
};

struct Entry {
  const char* name;
  void (*call)(Args&);
  std::size_t (*dynamic_smem)(unsigned block);
  bool gemm;
};

inline std::vector<unsigned> numbers(const std::string& text) {  // "3,1,2"
  std::vector<unsigned> out;
  for (std::size_t at = 0, used = 0; at < text.size(); at += used + 1)
    out.push_back(static_cast<unsigned>(std::stoul(text.substr(at), &used)));
  return out;
}

struct Options {  // every option but the lists is a number (readers, reverse, quiet, pad: 0 or 1)
  std::vector<unsigned> grid{1}, block{32}, order;
  std::size_t n = 32, offset = 0, m = 0, k = 0, readers = 0, reverse = 0, launches = 1, quiet = 0, cycle = 0, outs = 0,
              combine = 0, limit = 2147483647u, blocks = 0, tile = 16, pad = 0;  // outs 0: one result per block
};

inline Options parse(int argc, char** argv) {
  Options o;
  using Lists = std::map<std::string, std::vector<unsigned>*>;
  const Lists lists{{"grid", &o.grid}, {"block", &o.block}, {"order", &o.order}};
  const std::map<std::string, std::size_t*> scalars{
      {"n", &o.n}, {"offset", &o.offset}, {"m", &o.m}, {"k", &o.k}, {"readers", &o.readers}, {"reverse", &o.reverse},
      {"launches", &o.launches}, {"quiet", &o.quiet}, {"cycle", &o.cycle}, {"outs", &o.outs}, {"combine", &o.combine},
      {"limit", &o.limit}, {"blocks", &o.blocks}, {"tile", &o.tile}, {"pad", &o.pad}};
  for (int a = 2; a < argc; ++a) {
    const std::string arg = argv[a], key = arg.substr(0, arg.find('='));
    if (key == arg) fail("'%s' is not key=value", arg.c_str());
    const std::string value = arg.substr(key.size() + 1);
    if (lists.count(key)) *lists.at(key) = numbers(value);
    else if (scalars.count(key)) *scalars.at(key) = std::stoull(value);
    else fail("unknown option '%s'", key.c_str());
  }
  run().reverse = o.reverse;
  run().block_order = static_cast<int>(o.blocks);
  o.grid.resize(2, 1);
  o.block.resize(2, 1);
  const unsigned blocks = o.grid[0] * o.grid[1];
  if (o.order.empty())
    for (unsigned b = 0; b < blocks; ++b) o.order.push_back(b);
  if (o.order.size() != blocks) fail("order names %zu blocks, the grid has %u", o.order.size(), blocks);
  return o;
}

inline void print_region(const char* name, const float* p, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) logf("R %s %zu %.9g\n", name, i, static_cast<double>(p[i]));
}

// The NaN past a buffer the launch may write only up to `count`: a write past it is found afterwards.
inline void check_guard(const char* name, const std::vector<float>& v, std::size_t count) {
  for (std::size_t i = count; i < v.size(); ++i)
    if (!std::isnan(v[i]))
      fail("the kernel writes %s[%zu], past the %zu element%s the launch may write", name, i, count,
           count == 1 ? "" : "s");
}

// One kernel's blocks in o.order, or the launcher, which makes its own launches.
inline void run_blocks(const Entry& e, Args& args, const Options& o) {
  Run& r = run();
  std::FILE* log = r.log;
  if (o.quiet) r.log = nullptr;
  if (e.dynamic_smem == nullptr) {
    e.call(args);
  } else {
    r.grid = {o.grid[0], o.grid[1], 1};
    r.block = {o.block[0], o.block[1], 1};
    r.shared.dynamic_bytes = e.dynamic_smem(o.block[0] * o.block[1]);
    r.body = [&] { e.call(args); };
    for (unsigned b : o.order) run_block({b % o.grid[0], b / o.grid[0], 0});
  }
  r.log = log;
}

inline void run_gemm(const Entry& entry, const Options& o) {
  Args args;
  const int m = static_cast<int>(o.m), n = static_cast<int>(o.n), k = static_cast<int>(o.k);
  // NaN past A and B (a read past either makes a NaN in C) and past C (a write past it is found afterwards)
  const std::size_t guard = 64, a_size = std::size_t(m) * k, b_size = std::size_t(k) * n, c_size = std::size_t(m) * n;
  // C's NaN covers 32 rows past it as well: a last row of tiles that stores without its row guard stays in it
  std::vector<float> A(a_size + guard, NAN), B(b_size + guard, NAN), C(c_size + 32 * std::size_t(n) + guard, NAN);
  for (std::size_t i = 0; i < a_size; ++i) A[i] = static_cast<float>(i + 1);
  for (std::size_t i = 0; i < b_size; ++i) B[i] = -static_cast<float>(i + 1);
  run().regions = {{"A", A.data(), a_size * 4}, {"B", B.data(), b_size * 4}, {"C", C.data(), c_size * 4}};
  args.A = A.data(), args.B = B.data(), args.C = C.data(), args.M = m, args.N = n, args.K = k;
  args.gemm = {static_cast<int>(o.tile), o.pad != 0};
  run_blocks(entry, args, o);
  check_guard("C", C, c_size);
  print_region("C", C.data(), c_size);
}

// out holds exactly the results the launch writes (outs=1, or one per block), partials one per block (the launcher:
// two such buffers), each followed by NaN. Before each launch of a kernel out is 0 (as the launcher's memset leaves
// it); before each call of the launcher it is NaN, as are the partials, as the harness leaves them.
inline void run_reduce(const Entry& entry, const Options& o) {
  Run& r = run();
  Args args;
  const unsigned blocks = o.grid[0] * o.grid[1];
  const std::size_t outs = o.outs ? o.outs : blocks, guard = 64;
  std::vector<float4> storage(o.n / 4 + o.offset / 4 + 4);  // 16-byte aligned, as a device allocation is
  float* in = &storage[0].x + o.offset;
  std::fill(&storage[0].x, &storage[0].x + 4 * storage.size(), NAN);  // a read outside [in, in + n) makes a NaN
  std::vector<float> out(outs + guard, NAN), partials(blocks + guard, NAN), partials1(blocks + guard, NAN);
  const bool launcher = entry.dynamic_smem == nullptr;
  unsigned ticket = 0;
  r.regions = {{"in", in, o.n * 4}, {"out", out.data(), outs * 4}, {"partials", partials.data(), blocks * 4},
               {"partials1", partials1.data(), blocks * 4}, {"ticket", &ticket, 4}};
  r.watched = r.regions[2];  // partials
  args.in = in, args.n = o.n, args.out = out.data(), args.partials = partials.data(), args.ticket = &ticket;
  args.launch = {o.block[0], static_cast<unsigned>(o.limit), static_cast<ladder::Combine>(o.combine),
                 {partials.data(), partials1.data()}, &ticket};
  if (o.readers) {
    for (std::size_t e = 0; e < o.n; ++e) {
      for (std::size_t i = 0; i < o.n; ++i) in[i] = i == e ? 1.0f : 0.0f;
      std::fill(out.begin(), out.end(), 0.0f);  // guards too: a readers run looks at first values, not at writes
      std::fill(partials.begin(), partials.end(), NAN);
      ticket = 0;
      std::string found;
      r.on_block_end = [&](unsigned block) {
        for (const Fiber& f : r.fibers)
          if (f.seen && f.first != 0.0f)
            found += " " + std::to_string(block * r.fibers.size() + f.tid) + ":" + std::to_string(f.first);
      };
      r.log = nullptr;
      run_blocks(entry, args, o);
      r.log = stdout;
      logf("E %zu %.9g%s\n", e, std::accumulate(out.begin(), out.begin() + outs, 0.0), found.c_str());
    }
    return;
  }
  for (std::size_t i = 0; i < o.n; ++i) in[i] = static_cast<float>((o.cycle ? i % o.cycle : i) + 1);
  for (std::size_t launch = 0; launch < o.launches; ++launch) {  // what one launch leaves, the next one finds
    std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(outs), launcher ? NAN : 0.0f);
    std::fill(partials.begin(), partials.begin() + blocks, NAN);
    std::fill(partials1.begin(), partials1.begin() + blocks, NAN);
    run_blocks(entry, args, o);
  }
  check_guard("out", out, outs);
  check_guard(launcher ? "launch.partials[0]" : "partials", partials, blocks);
  check_guard("launch.partials[1]", partials1, blocks);
  print_region("out", out.data(), outs);
  logf("R ticket 0 %u\n", ticket);
}

inline void main(int argc, char** argv, const std::vector<Entry>& entries) {
  if (argc < 2) fail("usage: %s ENTRY [key=value ...]", argv[0]);
  const Entry* entry = nullptr;
  for (const Entry& e : entries)
    if (argv[1] == std::string(e.name)) entry = &e;
  if (!entry) fail("no kernel entry '%s' in this stage", argv[1]);
  const Options o = parse(argc, argv);
  entry->gemm ? run_gemm(*entry, o) : run_reduce(*entry, o);
}

}  // namespace ladder_host
