// Output formats: CSV and JSON carry the same fields; statistics are what they say.
#include <cmath>

#include <gtest/gtest.h>

#include "harness.hpp"

TEST(Stats, MedianMinMax) {
  auto s = ladder::summarize({3.0, 1.0, 2.0});
  EXPECT_EQ(s.median_ms, 2.0);
  EXPECT_EQ(s.min_ms, 1.0);
  EXPECT_EQ(s.max_ms, 3.0);
  EXPECT_EQ(ladder::summarize({4.0, 1.0, 2.0, 3.0}).median_ms, 2.5);
  EXPECT_EQ(ladder::summarize({}).median_ms, 0.0);
}

TEST(Report, CsvAndJsonCarryTheSameFields) {
  ladder::Record r;
  r.add("stage", "02_grid_stride").add("n", std::uint64_t{1} << 28).add("gbps", 4321.5).add("pass", true);
  r.add("note", "a \"quoted\", comma").add("missing", NAN);
  const std::string csv = ladder::to_csv({r});
  EXPECT_EQ(csv,
            "stage,n,gbps,pass,note,missing\n02_grid_stride,268435456,4321.5,true,\"a \"\"quoted\"\", comma\",null\n");
  const std::string json = ladder::to_json({r});
  EXPECT_EQ(json,
            "[\n  {\"stage\": \"02_grid_stride\", \"n\": 268435456, \"gbps\": 4321.5, \"pass\": true, \"note\": \"a "
            "\\\"quoted\\\", comma\", \"missing\": null}\n]\n");
}

TEST(Report, TextTableAlignsRight) {
  EXPECT_EQ(ladder::text_table({{"a", "long header"}, {"12345", "x"}}, ""), "    a  long header\n12345            x\n");
}

TEST(Report, HumanBytes) {
  EXPECT_EQ(ladder::human_bytes(512), "512 B");
  EXPECT_EQ(ladder::human_bytes(1073741824.0), "1.07 GB");
  EXPECT_EQ(ladder::human_bytes(240e6), "240.0 MB");
}
