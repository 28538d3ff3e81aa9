// The Deadline of common/harness.hpp, without a GPU: `lifted` arms one for a second, lifts it and lives on past that
// second, and must end with exit 0; `outlived` outlives it, and must be stopped with exit 1 and the message that names it.
#include <chrono>
#include <string>
#include <thread>

#include "harness.hpp"

int main(int argc, char** argv) {
  ladder::set_time_limit(1);
  const bool outlived = argc > 1 && std::string(argv[1]) == "outlived";
  {
    const ladder::Deadline deadline(0, "a probe");
    if (outlived) std::this_thread::sleep_for(std::chrono::seconds(20));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // a lifted Deadline that still fired would end us here
  return 0;
}
