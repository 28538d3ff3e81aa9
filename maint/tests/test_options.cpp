// The host side of the harness: good command lines parse to the values they name (check_cli.py refuses the bad ones
// through the programs); CSV and JSON carry the same fields; the verdict; NVML's reasons.
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
// Parses `args` into a fresh `out`.
ParseOutcome parse(const ReduceStage& stage, const std::vector<std::string>& args, ReduceOptions& out) {
  const auto argv = argv_of(stage.name, args);
  return parse_reduce_options(stage, static_cast<int>(argv.size()), argv.data(), out = {});
}
ParseOutcome parse_gemm(const std::vector<std::string>& args, GemmOptions& out) {
  const auto argv = argv_of("08_gemm_tiled", args);
  return parse_gemm_options("08_gemm_tiled", static_cast<int>(argv.size()), argv.data(), out = {});
}

TEST(Options, DefaultsListsAndRangesParse) {
  ReduceOptions o;
  const auto r = parse(kStreaming, {}, o);
  EXPECT_FALSE(r.exit_status.has_value()) << r.text;
  EXPECT_EQ(o.sizes, std::vector<std::uint64_t>{std::uint64_t{1} << 28});
  EXPECT_EQ(o.blocks, std::vector<unsigned>{1024});
  EXPECT_EQ(o.regimes, std::vector<Regime>{Regime::kStream});
  EXPECT_EQ(o.combines, std::vector<Combine>{Combine::kRelaunch});
  parse(kTreeOnly, {}, o);
  EXPECT_EQ(o.regimes, std::vector<Regime>{Regime::kTree});  // the stage's first regime is its default
  ASSERT_FALSE(parse(kMulti, {"-n", "2^10..2^12,20000000", "--block", "64,1024", "--combine", "all"}, o).exit_status);
  EXPECT_EQ(o.sizes, (std::vector<std::uint64_t>{1024, 2048, 4096, 20000000}));
  EXPECT_EQ(o.blocks, (std::vector<unsigned>{64, 1024}));
  EXPECT_EQ(o.combines, (std::vector<Combine>{Combine::kAtomic, Combine::kLastBlock, Combine::kTwoPass}));
  for (auto [args, flush] : {std::pair<std::vector<std::string>, Flush>{{}, Flush::kClean},
                             {{"--flush", "none"}, Flush::kNone}, {{"--flush", "write"}, Flush::kWrite}}) {
    parse(kStreaming, args, o);
    EXPECT_EQ(o.flush, flush);
  }
}

TEST(Options, CountSyntax) {
  for (auto [text, value] : {std::pair<const char*, std::uint64_t>{"268435456", 268435456}, {"2^28", 1u << 28},
                             {"3*2^20", 3u << 20}, {"1e6", 1000000}, {"1e11", 100000000000}, {" 42 ", 42}}) {
    EXPECT_EQ(parse_count(text), value) << text;
  }
  for (const char* bad : {"", "-1", "1.5", "abc", "2^", "3^4", "2^63", "1e", "0x10", "99999999999999999999"}) {
    EXPECT_FALSE(parse_count(bad).has_value()) << bad;
  }
  for (const char* bad : {"2^3..2^1", "3..8"}) EXPECT_FALSE(parse_count_list(bad).has_value()) << bad;
}

// What the harness says where the GPU lacks the memory (no command line reaches it without a GPU); the refused
// command lines are maint/tests/check_cli.py's.
TEST(Options, MemoryShortfallNamesTheOptionAndBothSizes) {
  EXPECT_EQ(memory_shortfall(100, 200, "input", "-n 25", "device 0 (GPU)"), "");
  const auto msg =
      memory_shortfall(275'000'000'000, 140'000'000'000, "input 275.0 GB", "-n 2^36", "device 0 (NVIDIA H200)");
  EXPECT_NE(msg.find("-n 2^36: needs 275000000000 bytes (275.0 GB)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("only 140000000000 bytes (140.0 GB) are free on device 0"), std::string::npos) << msg;
}

TEST(Options, Gemm) {
  GemmOptions o;
  ASSERT_FALSE(parse_gemm({"-m", "17", "-n", "2^10", "-k", "65", "--pad", "both"}, o).exit_status.has_value());
  EXPECT_EQ(std::make_tuple(o.m, o.n, o.k), std::make_tuple(17u, 1024u, 65u));
  EXPECT_EQ(o.pads, (std::vector<bool>{false, true}));
  ASSERT_FALSE(parse_gemm({"--size", "300"}, o).exit_status.has_value());
  EXPECT_EQ(o.m + o.n + o.k, 900u);
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
  Record other;  // rows with other fields (cpu_baseline's copy rows): every field a column, a row's missing ones ""
  other.add("stage", "cpu").add("device", "GPU, one");
  EXPECT_EQ(to_csv({other, r}), "stage,device,n,gbps,pass,note,missing\ncpu,\"GPU, one\",,,,,\n02_grid_stride,,"
                                "268435456,4321.5,true,\"a \"\"quoted\"\", comma\",null\n");
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
