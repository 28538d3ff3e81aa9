// The Deadline of common/harness.hpp, without a GPU: `lifted` arms one for a second and lifts it, and the program must
// end at once; `outlived` outlives it, and must be stopped with exit 1 and the message that names it.
#include <chrono>
#include <string>
#include <thread>

#include "harness.hpp"

int main(int argc, char** argv) {
  ladder::set_time_limit(1);
  const ladder::Deadline deadline(0, "a probe");
  if (argc > 1 && std::string(argv[1]) == "outlived") std::this_thread::sleep_for(std::chrono::seconds(20));
  return 0;
}
