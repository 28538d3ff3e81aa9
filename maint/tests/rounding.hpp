// Host emulation of the round-toward-zero float operations (__fadd_rz, __fmaf_rz) the planted-rounding tests use.
#pragma once

#include <cmath>

// exact rounded to a float toward zero: round to nearest, then one step back toward zero if that grew the magnitude.
inline float toward_zero(double exact) {
  float f = static_cast<float>(exact);
  if (std::fabs(static_cast<double>(f)) > std::fabs(exact)) f = std::nextafter(f, 0.0f);
  return f;
}
