// The clocks a measurement ran at, and whether the GPU throttled: read from NVML at the start and the end of
// every timed series, so a result says at which clocks it was taken (docs/method.md, "Clocks").
#pragma once

#include <cstdint>
#include <string>

namespace ladder {

struct ClockSample {
  bool known = false;          // false where NVML is not there (no driver) or does not answer for this GPU
  unsigned sm_mhz = 0;         // current SM clock
  unsigned mem_mhz = 0;        // current memory clock
  std::uint64_t reasons = 0;   // NVML's clocks event (throttle) reasons, a bit mask
};

// The reasons that mean the clocks were held down during work: power cap, thermal and hardware slowdowns
// (not "the GPU is idle" or "clocks set by the application").
bool throttled(std::uint64_t reasons);

// The names of the reasons set in the mask, joined with '+', or "none".
std::string reason_names(std::uint64_t reasons);

// Starts opening NVML for the CUDA device `device` on a thread of its own (loading and initialising NVML takes
// a noticeable part of a second on some machines, which the program spends on its input meanwhile). NVML is
// loaded at run time (dlopen), so a program starts and reports "no usable GPU" on a machine without the
// driver; the header nvml.h is not needed either.
void open_clocks(int device);

// Reads the current clocks of the device open_clocks() opened (waiting for it to be open); nothing known if
// it was not called or NVML is not there.
ClockSample read_clocks();

}  // namespace ladder
