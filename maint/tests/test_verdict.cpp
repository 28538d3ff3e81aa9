// The one verdict: PASS only when every check recorded passed, and a run that checked nothing does not pass; the
// clock helpers name and classify NVML's reasons.
#include <gtest/gtest.h>

#include "timer.hpp"
#include "verdict.hpp"

TEST(Verdict, PassesOnlyWhenEveryCheckPassed) {
  ladder::Verdict v;
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
}

// A check that could not be judged is never a pass: alone it leaves nothing shown; beside judged checks it is
// reported, and the judged ones decide.
TEST(Verdict, SkippedIsNeverAPass) {
  ladder::Verdict v;
  v.skip("float", "the bound would exceed 0.001 of sum|x|");
  EXPECT_FALSE(v.pass());
  EXPECT_STREQ(v.field("float"), "skipped");
  v.add("exact", true);
  EXPECT_TRUE(v.pass());
  ASSERT_EQ(v.skipped().size(), 1u);
  EXPECT_TRUE(v.failures().empty());
  ladder::Verdict probes;
  probes.add("probe_a", true);
  probes.add("probe_b", false, "C[0][0]");
  EXPECT_STREQ(probes.field({"probe_a", "probe_b"}), "FAIL");
  v.add_all(probes);
  EXPECT_FALSE(v.pass());
  EXPECT_EQ(v.failures().front(), "probe_b: C[0][0]");
}

TEST(Clocks, ThrottleReasonsAreNamedAndOnlySlowdownsThrottle) {
  EXPECT_EQ(ladder::reason_names(0), "none");
  EXPECT_EQ(ladder::reason_names(0x1 | 0x4), "gpu_idle+sw_power_cap");
  EXPECT_FALSE(ladder::throttled(0x1));        // idle
  EXPECT_FALSE(ladder::throttled(0x2 | 0x10)); // application clocks, sync boost
  for (std::uint64_t bit : {0x4ull, 0x8ull, 0x20ull, 0x40ull, 0x80ull}) EXPECT_TRUE(ladder::throttled(bit)) << bit;
}

TEST(Clocks, NothingIsKnownBeforeTheClocksAreOpened) { EXPECT_FALSE(ladder::read_clocks().known); }
