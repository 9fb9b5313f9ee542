// The value of element i of a generated input, as one formula compiled for the host (the checker's
// generator, CPU references) and the device (kevo-runner fills GPU buffers directly, so a GB-sized
// input never crosses the PCIe bus or the checker's memory). A DrawSpec carries everything the
// formula needs, the wide draw already folded into its parameters.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define KEVO_HD __host__ __device__ inline
#else
#define KEVO_HD inline
#endif

namespace kevo {

// The kinds, numbered as in the runner protocol ("gen".kind).
enum DrawKind : int { kDrawNormal = 0, kDrawUniform, kDrawLaplace, kDrawExponential, kDrawLogNormal, kDrawInt };

struct DrawSpec {
  int kind = kDrawNormal;
  double a = 0, b = 1;  // normal/lognormal: mean, std (widened); uniform: centre, half-width
                        // (widened); laplace: loc, scale (widened); exponential: rate (widened) in a
  int64_t lo = 0, hi = 1;  // int: [lo, hi)
  uint64_t base = 0;       // key of element 0: from the seed and the tensor's name
};

KEVO_HD uint64_t draw_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Uniform in (0, 1), never exactly 0 or 1 (the logs below stay finite).
KEVO_HD double draw_unit(uint64_t key) {
  return (static_cast<double>(draw_mix(key) >> 11) + 0.5) * 0x1p-53;
}

// Standard normal for element i: elements 2j and 2j+1 share one Box-Muller pair (keys base + 2j
// and base + 2j + 1) and take its cosine and sine.
KEVO_HD double draw_gauss(uint64_t base, int64_t i) {
  uint64_t k = base + 2 * static_cast<uint64_t>(i / 2);
  double r = sqrt(-2 * log(draw_unit(k))), a = 2 * M_PI * draw_unit(k + 1);
  return (i % 2 == 0) ? r * cos(a) : r * sin(a);
}

// A normal or lognormal value from a standard normal z.
KEVO_HD double draw_from_gauss(const DrawSpec& s, double z) {
  return s.kind == kDrawNormal ? s.a + s.b * z : exp(s.a + s.b * z);
}

// The key of element 0 of a tensor in timed call `call`: every timed call draws fresh values (a
// cache keyed on input values never hits), and the baseline's runner, given the same call numbers,
// draws the same ones (its outputs are the reference for the candidate's).
KEVO_HD uint64_t draw_call_base(uint64_t base, uint64_t call) { return draw_mix(base ^ draw_mix(call + 1)); }

// The sign (+1 or -1) of element i in weighted output sum `which` (0 or 1) under `key`: sums a
// timed call's output is summarised by (runner/device_data.h, check/output_sums.h).
KEVO_HD double draw_sign(uint64_t key, int64_t i, int which) {
  return ((draw_mix(key ^ static_cast<uint64_t>(i)) >> which) & 1) ? 1.0 : -1.0;
}

// Both signs of element i from one hash (what the runner's kernel uses: half the integer work).
KEVO_HD void draw_signs(uint64_t key, int64_t i, double* s0, double* s1) {
  const uint64_t h = draw_mix(key ^ static_cast<uint64_t>(i));
  *s0 = (h & 1) ? 1.0 : -1.0;
  *s1 = (h & 2) ? 1.0 : -1.0;
}

KEVO_HD double draw_value(const DrawSpec& s, int64_t i) {
  if (s.kind == kDrawNormal || s.kind == kDrawLogNormal) return draw_from_gauss(s, draw_gauss(s.base, i));
  uint64_t k = s.base + 2 * static_cast<uint64_t>(i);
  double u = draw_unit(k);
  switch (s.kind) {
    case kDrawUniform:
      return s.a - s.b + 2 * s.b * u;
    case kDrawLaplace: {
      double x = u - 0.5;
      return s.a - s.b * (x < 0 ? -1 : 1) * log(1 - 2 * fabs(x));
    }
    case kDrawExponential:
      return -log(u) / s.a;
    case kDrawInt:
      return static_cast<double>(s.lo + static_cast<int64_t>(draw_mix(k) % static_cast<uint64_t>(s.hi - s.lo)));
  }
  return 0;
}

}  // namespace kevo
