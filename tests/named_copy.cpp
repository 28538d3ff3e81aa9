// A test helper for the test cli.copy_version: it parses its options as a stage does (here 05_shuffle's) and is
// named by ladder_name_copy (cmake/Ladder.cmake) as the planted bugs and the ./ladder try variants are, so its
// --version must name it and say what it is a copy of.
#include <cstdio>

#include "options.hpp"

int main(int argc, char** argv) {
  using ladder::Combine;
  using ladder::Regime;
  const ladder::ReduceStage stage{"05_shuffle", {Regime::kStream, Regime::kTree}, {Combine::kRelaunch}};
  ladder::ReduceOptions options;
  const ladder::ParseOutcome outcome = ladder::parse_reduce_options(stage, argc, argv, options);
  std::fputs((outcome.text + "\n").c_str(), outcome.exit_status.value_or(0) == 0 ? stdout : stderr);
  return outcome.exit_status.value_or(0);
}
