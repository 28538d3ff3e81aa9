// The host side of the harness: every bad command-line value exits 2 with one line naming the option, good ones
// parse; CSV and JSON carry the same fields; the verdict; NVML's reasons.
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "harness.hpp"
#include "options.hpp"

namespace ladder {
namespace {

const ReduceStage kTreeOnly{"01_naive", {Regime::kTree}, {Combine::kRelaunch}};
const ReduceStage kStreaming{"05_shuffle", {Regime::kStream, Regime::kTree}, {Combine::kRelaunch}};
const ReduceStage kMulti{"07_multiblock", {Regime::kStream, Regime::kTree},
                         {Combine::kAtomic, Combine::kLastBlock, Combine::kTwoPass}};

std::vector<const char*> argv_of(const char* program, const std::vector<std::string>& args) {
  std::vector<const char*> argv{program};
  for (const auto& a : args) argv.push_back(a.c_str());
  return argv;
}
// Parses `args` into a fresh *out (or a scratch copy).
ParseOutcome parse(const ReduceStage& stage, const std::vector<std::string>& args, ReduceOptions* out = nullptr) {
  const auto argv = argv_of(stage.name, args);
  ReduceOptions scratch;
  return parse_reduce_options(stage, static_cast<int>(argv.size()), argv.data(), out ? (*out = {}) : scratch);
}
ParseOutcome parse_gemm(const std::vector<std::string>& args, GemmOptions* out = nullptr) {
  const auto argv = argv_of("08_gemm_tiled", args);
  GemmOptions scratch;
  return parse_gemm_options("08_gemm_tiled", static_cast<int>(argv.size()), argv.data(), out ? (*out = {}) : scratch);
}

using Cases = std::vector<std::pair<std::vector<std::string>, std::string>>;  // arguments, a fragment of the message
void expect_usage_error(const ParseOutcome& r, const std::string& fragment) {
  ASSERT_TRUE(r.exit_status.has_value()) << "accepted, expected: " << fragment;
  EXPECT_EQ(*r.exit_status, 2);
  EXPECT_NE(r.text.find(fragment), std::string::npos) << r.text;
  EXPECT_EQ(r.text.find('\n'), std::string::npos) << "not one line: " << r.text;
}

TEST(Options, DefaultsListsAndRangesParse) {
  ReduceOptions o;
  const auto r = parse(kStreaming, {}, &o);
  EXPECT_FALSE(r.exit_status.has_value()) << r.text;
  EXPECT_EQ(o.sizes, std::vector<std::uint64_t>{std::uint64_t{1} << 28});
  EXPECT_EQ(o.blocks, std::vector<unsigned>{1024});
  EXPECT_EQ(o.regimes, std::vector<Regime>{Regime::kStream});
  EXPECT_EQ(o.combines, std::vector<Combine>{Combine::kRelaunch});
  parse(kTreeOnly, {}, &o);
  EXPECT_EQ(o.regimes, std::vector<Regime>{Regime::kTree});  // the stage's first regime is its default
  ASSERT_FALSE(parse(kMulti, {"-n", "2^10..2^12,20000000", "--block", "64,1024", "--combine", "all"}, &o).exit_status);
  EXPECT_EQ(o.sizes, (std::vector<std::uint64_t>{1024, 2048, 4096, 20000000}));
  EXPECT_EQ(o.blocks, (std::vector<unsigned>{64, 1024}));
  EXPECT_EQ(o.combines, (std::vector<Combine>{Combine::kAtomic, Combine::kLastBlock, Combine::kTwoPass}));
  for (auto [args, flush] : {std::pair<std::vector<std::string>, Flush>{{}, Flush::kClean},
                             {{"--hot"}, Flush::kNone}, {{"--flush", "write"}, Flush::kWrite}}) {
    parse(kStreaming, args, &o);
    EXPECT_EQ(o.flush, flush);
  }
}

TEST(Options, CountSyntax) {
  for (auto [text, value] : {std::pair<const char*, std::uint64_t>{"268435456", 268435456}, {"2^28", 1u << 28},
                             {"3*2^20", 3u << 20}, {"1e6", 1000000}, {" 42 ", 42}}) {
    EXPECT_EQ(parse_count(text), value) << text;
  }
  for (const char* bad : {"", "-1", "1.5", "abc", "2^", "3^4", "2^63", "1e", "0x10", "99999999999999999999"}) {
    EXPECT_FALSE(parse_count(bad).has_value()) << bad;
  }
  EXPECT_FALSE(parse_count_list("2^3..2^1").has_value());
  EXPECT_FALSE(parse_count_list("3..8").has_value());
}

TEST(Options, BadValuesAreRefusedInOneLineNamingTheOption) {
  const Cases streaming = {
      {{"-n", "0"}, "-n/--size 0 is out of range"},
      {{"-n", "-5"}, "-n/--size -5 is out of range"},  // a number, negative
      {{"-n", "ten"}, "-n/--size 'ten' is not a size"},
      {{"-n", "2^40"}, "-n/--size 1099511627776 is out of range"},
      {{"-n", "100,0"}, "-n/--size 0 is out of range"},
      {{"--block", "big"}, "--block 'big' is not a number"},
      {{"--reps", "0"}, "--reps"}, {{"--reps", "-3"}, "--reps"}, {{"--reps", "many"}, "--reps"},
      {{"--warmup", "-1"}, "--warmup"}, {{"--device", "-1"}, "--device"}, {{"--offset", "2000"}, "--offset"},
      {{"--grid", "-4"}, "--grid"}, {{"--determinism", "1"}, "--determinism"}, {{"--seed", "x"}, "--seed"},
      {{"--input", "double"}, "--input"}, {{"--format", "xml"}, "--format"}, {{"--regime", "fast"}, "--regime"},
      {{"--regime", "tree", "--grid", "64"}, "--grid 64: the tree regime"},
      {{"--combine", "atomic"}, "05_shuffle combines partial sums by relaunch only"},
      {{"--combine", "twopass"}, "05_shuffle combines partial sums by relaunch only"},
      {{"--self-test", "full", "--check-only"}, "--self-test and --check-only: give one"},
      {{"--unknown"}, "--unknown"}, {{"--flush", "maybe"}, "--flush"},
      {{"--hot", "--flush", "write"}, "--hot and --flush: give one"}};
  for (const auto& [args, message] : streaming) expect_usage_error(parse(kStreaming, args), message);
  for (const char* b : {"96", "32", "2048", "0", "-64"}) {
    expect_usage_error(parse(kStreaming, {"--block", b}),
                       std::string("--block ") + b + ": 05_shuffle runs power-of-two blocks from 64 to 1024");
  }
  expect_usage_error(parse(kTreeOnly, {"--regime", "stream"}), "01_naive has no grid-stride loop");
  // A misspelt combine gets the same message as one the stage does not have.
  expect_usage_error(parse(kMulti, {"--combine", "relaunch"}), "--combine 'relaunch': ");
  expect_usage_error(parse(kMulti, {"--combine", "fastest"}), "--combine 'fastest': ");
  EXPECT_EQ(memory_shortfall(100, 200, "input", "-n 25", "device 0 (GPU)"), "");
  const auto msg =
      memory_shortfall(275'000'000'000, 140'000'000'000, "input 275.0 GB", "-n 2^36", "device 0 (NVIDIA H200)");
  EXPECT_NE(msg.find("-n 2^36: needs 275000000000 bytes (275.0 GB)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("only 140000000000 bytes (140.0 GB) are free on device 0"), std::string::npos) << msg;
}

// CLI11 2.1 writes "--block TEXT=1024", 2.4 writes "--block TEXT [1024]": either, on the option's line.
TEST(Options, HelpExitsZeroWithDefaults) {
  const auto r = parse(kMulti, {"--help"});
  EXPECT_EQ(r.exit_status.value_or(-1), 0);
  for (const auto& [option, value] : Cases{{{"--combine"}, "atomic"}, {{"--block"}, "1024"}}) {
    const auto at = r.text.find(option[0]);
    const std::string line = at == std::string::npos ? "" : r.text.substr(at, r.text.find('\n', at) - at);
    // CLI11 2.1 writes "--block TEXT=1024", 2.4 writes "--block TEXT [1024]".
    EXPECT_TRUE(line.find("=" + value) != std::string::npos || line.find("[" + value + "]") != std::string::npos);
  }
}

TEST(Options, Gemm) {
  GemmOptions o;
  ASSERT_FALSE(parse_gemm({"-m", "17", "-n", "2^10", "-k", "65", "--pad", "both"}, &o).exit_status.has_value());
  EXPECT_EQ(std::make_tuple(o.m, o.n, o.k), std::make_tuple(17u, 1024u, 65u));
  EXPECT_EQ(o.pads, (std::vector<bool>{false, true}));
  ASSERT_FALSE(parse_gemm({"--size", "300"}, &o).exit_status.has_value());
  EXPECT_EQ(o.m + o.n + o.k, 900u);
  for (const auto& [args, message] : Cases{{{"-m", "0"}, "-m 0 is out of range"},
                                          {{"-k", "x"}, "-k 'x' is not a whole number"},
                                          {{"--size", "2000000"}, "--size 2000000 is out of range"},
                                          {{"--tile", "8"}, "--tile"}, {{"--pad", "maybe"}, "--pad"}}) {
    expect_usage_error(parse_gemm(args), message);
  }
}

TEST(Report, StatsCsvJsonTableAndBytes) {
  const TimingStats s = summarize({3.0, 1.0, 2.0});
  EXPECT_EQ(std::make_tuple(s.median_ms, s.min_ms, s.max_ms), std::make_tuple(2.0, 1.0, 3.0));
  EXPECT_EQ(summarize({4.0, 1.0, 2.0, 3.0}).median_ms, 2.5);
  EXPECT_EQ(summarize({}).median_ms, 0.0);
  Record r;
  r.add("stage", "02_grid_stride").add("n", std::uint64_t{1} << 28).add("gbps", 4321.5).add("pass", true);
  r.add("note", "a \"quoted\", comma").add("missing", NAN);
  EXPECT_EQ(to_csv({r}),
            "stage,n,gbps,pass,note,missing\n02_grid_stride,268435456,4321.5,true,\"a \"\"quoted\"\", comma\",null\n");
  EXPECT_EQ(to_json({r}),
            "[\n  {\"stage\": \"02_grid_stride\", \"n\": 268435456, \"gbps\": 4321.5, \"pass\": true, \"note\": \"a "
            "\\\"quoted\\\", comma\", \"missing\": null}\n]\n");
  EXPECT_EQ(text_table({{"a", "long header"}, {"12345", "x"}}, ""), "    a  long header\n12345            x\n");
  EXPECT_EQ(human_bytes(512), "512 B");
  EXPECT_EQ(human_bytes(1073741824.0), "1.07 GB");
  EXPECT_EQ(human_bytes(240e6), "240.0 MB");
}

// PASS only when every check passed; never for a run that checked nothing, nor for a check not judged (skipped).
TEST(Verdict, PassesOnlyWhenEveryCheckPassedAndSkippedIsNeverAPass) {
  Verdict v, skipped, probes;
  EXPECT_FALSE(v.pass()) << "a run that checked nothing has shown nothing";
  v.add("exact", true);
  v.add("exact", true);
  v.add("probe", true);
  EXPECT_TRUE(v.pass());
  EXPECT_STREQ(v.word(), "PASS");
  v.add("exact", false, "launch 3 of 3: the result is nan");
  EXPECT_FALSE(v.pass());
  EXPECT_STREQ(v.field("exact"), "FAIL");
  EXPECT_STREQ(v.field("probe"), "PASS");
  EXPECT_STREQ(v.field("timed"), "-");
  ASSERT_EQ(v.failures().size(), 1u);
  EXPECT_EQ(v.failures().front(), "exact: launch 3 of 3: the result is nan");
  skipped.skip("float", "the bound would exceed 0.001 of sum|x|");
  EXPECT_FALSE(skipped.pass());
  EXPECT_STREQ(skipped.field("float"), "skipped");
  skipped.add("exact", true);
  EXPECT_TRUE(skipped.pass());
  ASSERT_EQ(skipped.skipped().size(), 1u);
  EXPECT_TRUE(skipped.failures().empty());
  probes.add("probe_a", true);
  probes.add("probe_b", false, "C[0][0]");
  EXPECT_STREQ(probes.field({"probe_a", "probe_b"}), "FAIL");
  skipped.add_all(probes);
  EXPECT_FALSE(skipped.pass());
  EXPECT_EQ(skipped.failures().front(), "probe_b: C[0][0]");
}

TEST(Clocks, ThrottleReasonsAreNamedAndOnlySlowdownsThrottle) {
  EXPECT_EQ(reason_names(0), "none");
  EXPECT_EQ(reason_names(0x1 | 0x4), "gpu_idle+sw_power_cap");
  EXPECT_FALSE(throttled(0x1));         // idle
  EXPECT_FALSE(throttled(0x2 | 0x10));  // application clocks, sync boost
  for (std::uint64_t bit : {0x4ull, 0x8ull, 0x20ull, 0x40ull, 0x80ull}) EXPECT_TRUE(throttled(bit)) << bit;
  EXPECT_FALSE(read_clocks().known) << "nothing is known before the clocks are opened";
}

}  // namespace
}  // namespace ladder
