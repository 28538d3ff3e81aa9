// The command line of a GPU test helper (not a stage): no options but --help and --version, and no GPU, exit 77.
#pragma once

#include <cstdio>
#include <cstring>
#include <string>

#include "harness.hpp"
#include "ladder_version.hpp"

namespace ladder {

// Returns the exit status when the helper should stop here (help, version, an option, no usable GPU), else -1.
inline int helper_start(int argc, char** argv, const char* name, const char* what) {
  if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
    std::printf("%s: cuda-ladder %s (commit %s)\n", name, LADDER_VERSION, LADDER_COMMIT);
    return 0;
  }
  if (argc > 1) {
    const bool help = std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0;
    std::fprintf(help ? stdout : stderr, "%s: a test helper, %s; it takes no options (but --help and --version)\n",
                 name, what);
    return help ? 0 : 2;
  }
  const auto lookup = find_device(0);
  if (!lookup.ok) {
    std::fprintf(stderr, "%s: %s\n", name, lookup.message.c_str());
    return lookup.exit_status;
  }
  return -1;
}

}  // namespace ladder
