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
  bool timed = false;      // draw_timed_value: the cheap draws of timed calls
  bool clamp = false;      // values below `floor` are raised to it (InitSpec::min)
  double floor = 0;
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

// A 32-bit integer hash (lowbias32): a GPU does 64-bit multiplies in several instructions, and the
// work around every timed call (fresh inputs, output sums) hashes every element.
KEVO_HD uint32_t draw_hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

// 32 random bits for element i under a 64-bit key, in two parts: `high` depends on i's upper 32
// bits only, the same for 2^32 elements, so the runner's kernels hash it once per thread.
KEVO_HD uint32_t draw_key32_high(uint64_t key, int64_t i) {
  return draw_hash32(static_cast<uint32_t>(static_cast<uint64_t>(i) >> 32) ^ static_cast<uint32_t>(key >> 32));
}
KEVO_HD uint32_t draw_key32_with(uint32_t high, uint64_t key, int64_t i) {
  return draw_hash32(static_cast<uint32_t>(static_cast<uint64_t>(i)) ^ high ^ static_cast<uint32_t>(key));
}
KEVO_HD uint32_t draw_key32(uint64_t key, int64_t i) { return draw_key32_with(draw_key32_high(key, i), key, i); }

// The sign (+1 or -1) of element i in weighted output sum `which` (0 or 1) under `key`: sums a
// timed call's output is summarised by (runner/device_data.h, check/output_sums.h).
KEVO_HD double draw_sign(uint64_t key, int64_t i, int which) {
  return ((draw_key32(key, i) >> which) & 1) ? 1.0 : -1.0;
}

// Both signs of element i from one hash (what the runner's kernel uses).
KEVO_HD void draw_signs(uint64_t key, int64_t i, double* s0, double* s1) {
  const uint32_t h = draw_key32(key, i);
  *s0 = (h & 1) ? 1.0 : -1.0;
  *s1 = (h & 2) ? 1.0 : -1.0;
}

// Rounded as written: nvcc would contract a + b * z into one fused multiply-add and the host
// compiler would not, and the timed draws below must give the same bits on both.
KEVO_HD double draw_mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
KEVO_HD double draw_add(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

// The value of element i in a timed call (DrawSpec::timed; runner time_batch): the same families
// as draw_value at memory speed (draw_value's double-precision Box-Muller is several times slower
// and kept the outside clock imprecise).
// Normal values are the Irwin-Hall sum of four 16-bit uniforms, scaled to variance 1 (|z| <= 3.46):
// integer hashing and correctly rounded arithmetic only, so normal, uniform and int draws are the
// same bits on the host and the device; lognormal, Laplace and exponential go through exp/log,
// which may differ in the last place. draw_timed_from takes element i's draw_key32(s.base, i) (the
// runner's kernels hash its high part once per thread).
KEVO_HD double draw_timed_from(const DrawSpec& s, uint32_t h1) {
  const uint32_t h2 = draw_hash32(h1 ^ 0x9e3779b9U);
  const double u = (static_cast<double>(h1 >> 8) + 0.5) * 0x1p-24;  // (0, 1), exact
  switch (s.kind) {
    case kDrawNormal:
    case kDrawLogNormal: {
      const int32_t sum = static_cast<int32_t>((h1 & 0xffffU) + (h1 >> 16) + (h2 & 0xffffU) + (h2 >> 16));
      const double z = draw_mul(static_cast<double>(sum - 131070), 1.7320508075688772 / 65536.0);
      const double v = draw_add(s.a, draw_mul(s.b, z));
      return s.kind == kDrawNormal ? v : exp(v);
    }
    case kDrawUniform:
      return draw_add(s.a - s.b, draw_mul(2 * s.b, u));
    case kDrawLaplace: {
      const double x = u - 0.5;
      return s.a - s.b * (x < 0 ? -1 : 1) * log(1 - 2 * fabs(x));
    }
    case kDrawExponential:
      return -log(u) / s.a;
    case kDrawInt: {
      const uint64_t r = (static_cast<uint64_t>(h1) << 32) | h2;
      return static_cast<double>(s.lo + static_cast<int64_t>(r % static_cast<uint64_t>(s.hi - s.lo)));
    }
  }
  return 0;
}
KEVO_HD double draw_timed_value(const DrawSpec& s, int64_t i) { return draw_timed_from(s, draw_key32(s.base, i)); }

KEVO_HD double draw_raw_value(const DrawSpec& s, int64_t i) {
  if (s.timed) return draw_timed_value(s, i);
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

// A drawn value raised to the spec's floor (InitSpec::min), if it has one.
KEVO_HD double draw_clamp(const DrawSpec& s, double v) { return s.clamp && v < s.floor ? s.floor : v; }

// Element i of a tensor drawn from `s`, on the host and the device alike.
KEVO_HD double draw_value(const DrawSpec& s, int64_t i) { return draw_clamp(s, draw_raw_value(s, i)); }

}  // namespace kevo
