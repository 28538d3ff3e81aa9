// A test helper for the test cli.copy_version: it parses its options as a stage does (here 05_shuffle's) and is
// named by ladder_name_copy (cmake/Ladder.cmake) as the planted bugs and the ./ladder try variants are, so its
// --version must name it and say what it is a copy of.
#include "options.hpp"

int main(int argc, char** argv) {
  using ladder::Combine;
  using ladder::Regime;
  const ladder::ReduceStage stage{"05_shuffle", {Regime::kStream, Regime::kTree}, {Combine::kRelaunch}};
  ladder::ReduceOptions options;
  return ladder::print_outcome(ladder::parse_reduce_options(stage, argc, argv, options));
}
