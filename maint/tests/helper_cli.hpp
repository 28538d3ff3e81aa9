// The command line of a GPU test helper (not a stage): no options but --help and --version; without a GPU, exit 77.
#pragma once

#include <cstdio>
#include <string>

#include "harness.hpp"
#include "ladder_version.hpp"

namespace ladder {
// The exit status where the helper should stop here (help, version, an option, no usable GPU), else -1.
inline int helper_start(int argc, char** argv, const char* name, const char* what) {
  const std::string arg = argc > 1 ? argv[1] : "";
  if (argc == 2 && arg == "--version") {
    std::printf("%s: cuda-ladder %s (commit %s)\n", name, LADDER_VERSION, LADDER_COMMIT);
    return 0;
  }
  if (argc > 1) {
    const bool help = arg == "--help" || arg == "-h";
    std::fprintf(help ? stdout : stderr, "%s: a test helper, %s; it takes no options (but --help and --version)\n",
                 name, what);
    return help ? 0 : 2;
  }
  const auto lookup = find_device(0);
  if (lookup.exit_status != 0) std::fprintf(stderr, "%s: %s\n", name, lookup.message.c_str());
  return lookup.exit_status == 0 ? -1 : lookup.exit_status;
}
}  // namespace ladder
