// Command-line validation: every bad value exits 2 with one line naming the option; good ones parse.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness.hpp"
#include "options.hpp"

using ladder::Combine;
using ladder::Regime;

namespace {

const ladder::ReduceStage kTreeOnly{"01_naive", {Regime::kTree}, {Combine::kRelaunch}};
const ladder::ReduceStage kStreaming{"05_shuffle", {Regime::kStream, Regime::kTree}, {Combine::kRelaunch}};
const ladder::ReduceStage kMulti{"07_multiblock", {Regime::kStream, Regime::kTree},
                                 {Combine::kAtomic, Combine::kLastBlock, Combine::kTwoPass}};

ladder::ParseOutcome parse(const ladder::ReduceStage& stage, std::vector<std::string> args,
                           ladder::ReduceOptions* out = nullptr) {
  std::vector<const char*> argv{stage.name};
  for (const auto& a : args) argv.push_back(a.c_str());
  ladder::ReduceOptions o;
  auto r = ladder::parse_reduce_options(stage, static_cast<int>(argv.size()), argv.data(), o);
  if (out) *out = o;
  return r;
}

ladder::ParseOutcome parse_gemm(std::vector<std::string> args, ladder::GemmOptions* out = nullptr) {
  std::vector<const char*> argv{"08_gemm_tiled"};
  for (const auto& a : args) argv.push_back(a.c_str());
  ladder::GemmOptions o;
  auto r = ladder::parse_gemm_options("08_gemm_tiled", static_cast<int>(argv.size()), argv.data(), o);
  if (out) *out = o;
  return r;
}

void expect_usage_error(const ladder::ParseOutcome& r, const std::string& fragment) {
  ASSERT_TRUE(r.exit_status.has_value()) << "accepted, expected: " << fragment;
  EXPECT_EQ(*r.exit_status, 2);
  EXPECT_NE(r.text.find(fragment), std::string::npos) << r.text;
  EXPECT_EQ(r.text.find('\n'), std::string::npos) << "not one line: " << r.text;
}

}  // namespace

TEST(Options, DefaultsParse) {
  ladder::ReduceOptions o;
  const auto r = parse(kStreaming, {}, &o);
  EXPECT_FALSE(r.exit_status.has_value()) << r.text;
  EXPECT_EQ(o.sizes, std::vector<std::uint64_t>{std::uint64_t{1} << 28});
  EXPECT_EQ(o.blocks, std::vector<unsigned>{1024});
  EXPECT_EQ(o.regimes, std::vector<Regime>{Regime::kStream});
  EXPECT_EQ(o.combines, std::vector<Combine>{Combine::kRelaunch});
  ladder::ReduceOptions t;
  parse(kTreeOnly, {}, &t);
  EXPECT_EQ(t.regimes, std::vector<Regime>{Regime::kTree});  // the stage's first regime is its default
}

TEST(Options, ListsAndRangesParse) {
  ladder::ReduceOptions o;
  const auto r = parse(kMulti, {"-n", "2^10..2^12,20000000", "--block", "64,1024", "--combine", "all"}, &o);
  ASSERT_FALSE(r.exit_status.has_value()) << r.text;
  EXPECT_EQ(o.sizes, (std::vector<std::uint64_t>{1024, 2048, 4096, 20000000}));
  EXPECT_EQ(o.blocks, (std::vector<unsigned>{64, 1024}));
  EXPECT_EQ(o.combines, (std::vector<Combine>{Combine::kAtomic, Combine::kLastBlock, Combine::kTwoPass}));
}

TEST(Options, CountSyntax) {
  EXPECT_EQ(ladder::parse_count("268435456"), 268435456u);
  EXPECT_EQ(ladder::parse_count("2^28"), std::uint64_t{1} << 28);
  EXPECT_EQ(ladder::parse_count("3*2^20"), 3u << 20);
  EXPECT_EQ(ladder::parse_count("1e6"), 1000000u);
  EXPECT_EQ(ladder::parse_count(" 42 "), 42u);
  for (const char* bad : {"", "-1", "1.5", "abc", "2^", "3^4", "2^63", "1e", "0x10", "99999999999999999999"}) {
    EXPECT_FALSE(ladder::parse_count(bad).has_value()) << bad;
  }
  EXPECT_FALSE(ladder::parse_count_list("2^3..2^1").has_value());
  EXPECT_FALSE(ladder::parse_count_list("3..8").has_value());
}

TEST(Options, BadSizes) {
  expect_usage_error(parse(kStreaming, {"-n", "0"}), "-n/--size 0 is out of range");
  expect_usage_error(parse(kStreaming, {"-n", "-5"}), "-n/--size -5 is out of range");  // a number, negative
  expect_usage_error(parse(kStreaming, {"-n", "ten"}), "-n/--size 'ten' is not a size");
  expect_usage_error(parse(kStreaming, {"-n", "2^40"}), "-n/--size 1099511627776 is out of range");
  expect_usage_error(parse(kStreaming, {"-n", "100,0"}), "-n/--size 0 is out of range");
}

TEST(Options, BadBlocks) {
  for (const char* b : {"96", "32", "2048", "0"}) {
    expect_usage_error(parse(kStreaming, {"--block", b}),
                       std::string("--block ") + b + ": 05_shuffle runs power-of-two blocks from 64 to 1024");
  }
  expect_usage_error(parse(kStreaming, {"--block", "-64"}), "--block -64: 05_shuffle runs power-of-two blocks from 64 to 1024");
  expect_usage_error(parse(kStreaming, {"--block", "big"}), "--block 'big' is not a number");
}

TEST(Options, BadNumbers) {
  expect_usage_error(parse(kStreaming, {"--reps", "0"}), "--reps");
  expect_usage_error(parse(kStreaming, {"--reps", "-3"}), "--reps");
  expect_usage_error(parse(kStreaming, {"--reps", "many"}), "--reps");
  expect_usage_error(parse(kStreaming, {"--warmup", "-1"}), "--warmup");
  expect_usage_error(parse(kStreaming, {"--device", "-1"}), "--device");
  expect_usage_error(parse(kStreaming, {"--offset", "2000"}), "--offset");
  expect_usage_error(parse(kStreaming, {"--grid", "-4"}), "--grid");
  expect_usage_error(parse(kStreaming, {"--determinism", "1"}), "--determinism");
  expect_usage_error(parse(kStreaming, {"--seed", "x"}), "--seed");
}

TEST(Options, BadChoices) {
  expect_usage_error(parse(kStreaming, {"--input", "double"}), "--input");
  expect_usage_error(parse(kStreaming, {"--format", "xml"}), "--format");
  expect_usage_error(parse(kStreaming, {"--regime", "fast"}), "--regime");
  expect_usage_error(parse(kTreeOnly, {"--regime", "stream"}), "01_naive has no grid-stride loop");
  expect_usage_error(parse(kStreaming, {"--regime", "tree", "--grid", "64"}), "--grid 64: the tree regime");
  expect_usage_error(parse(kStreaming, {"--combine", "atomic"}), "05_shuffle combines partial sums by relaunch only");
  expect_usage_error(parse(kMulti, {"--combine", "relaunch"}), "--combine 'relaunch': ");
  // A misspelt combine gets the same message as one the stage does not have.
  expect_usage_error(parse(kMulti, {"--combine", "fastest"}), "--combine 'fastest': ");
  expect_usage_error(parse(kStreaming, {"--combine", "twopass"}), "05_shuffle combines partial sums by relaunch only");
  expect_usage_error(parse(kStreaming, {"--self-test", "full", "--check-only"}), "--self-test and --check-only: give one");
  expect_usage_error(parse(kStreaming, {"--unknown"}), "--unknown");
  expect_usage_error(parse(kStreaming, {"--flush", "maybe"}), "--flush");
  expect_usage_error(parse(kStreaming, {"--hot", "--flush", "write"}), "--hot and --flush: give one");
}

TEST(Options, FlushModes) {
  ladder::ReduceOptions o;
  parse(kStreaming, {}, &o);
  EXPECT_EQ(o.flush, ladder::Flush::kClean);
  parse(kStreaming, {"--hot"}, &o);
  EXPECT_EQ(o.flush, ladder::Flush::kNone);
  parse(kStreaming, {"--flush", "write"}, &o);
  EXPECT_EQ(o.flush, ladder::Flush::kWrite);
}

TEST(Options, HelpExitsZeroWithDefaults) {
  const auto r = parse(kMulti, {"--help"});
  ASSERT_TRUE(r.exit_status.has_value());
  EXPECT_EQ(*r.exit_status, 0);
  // CLI11 2.1 writes "--block TEXT=1024", 2.4 writes "--block TEXT [1024]": look for the default on the line.
  auto line_of = [&](const std::string& option) {
    const auto at = r.text.find(option);
    return at == std::string::npos ? std::string() : r.text.substr(at, r.text.find('\n', at) - at);
  };
  auto shows_default = [&](const std::string& option, const std::string& value) {
    const std::string line = line_of(option);
    return line.find("=" + value) != std::string::npos || line.find("[" + value + "]") != std::string::npos;
  };
  EXPECT_TRUE(shows_default("--combine", "atomic")) << r.text;
  EXPECT_TRUE(shows_default("--block", "1024")) << r.text;
}

TEST(Options, Gemm) {
  ladder::GemmOptions o;
  ASSERT_FALSE(parse_gemm({"-m", "17", "-n", "2^10", "-k", "65", "--pad", "both"}, &o).exit_status.has_value());
  EXPECT_EQ(o.m, 17u);
  EXPECT_EQ(o.n, 1024u);
  EXPECT_EQ(o.k, 65u);
  EXPECT_EQ(o.pads, (std::vector<bool>{false, true}));
  ASSERT_FALSE(parse_gemm({"--size", "300"}, &o).exit_status.has_value());
  EXPECT_EQ(o.m + o.n + o.k, 900u);
  expect_usage_error(parse_gemm({"-m", "0"}), "-m 0 is out of range");
  expect_usage_error(parse_gemm({"-k", "x"}), "-k 'x' is not a whole number");
  expect_usage_error(parse_gemm({"--size", "2000000"}), "--size 2000000 is out of range");
  expect_usage_error(parse_gemm({"--tile", "8"}), "--tile");
  expect_usage_error(parse_gemm({"--pad", "maybe"}), "--pad");
}

TEST(Options, MemoryShortfallSaysNeededAndFree) {
  EXPECT_EQ(ladder::memory_shortfall(100, 200, "input", "-n 25", "device 0 (GPU)"), "");
  const auto msg = ladder::memory_shortfall(275'000'000'000, 140'000'000'000, "input 275.0 GB", "-n 2^36",
                                            "device 0 (NVIDIA H200)");
  EXPECT_NE(msg.find("-n 2^36: needs 275000000000 bytes (275.0 GB)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("only 140000000000 bytes (140.0 GB) are free on device 0"), std::string::npos) << msg;
}
