#include "check/output_sums.h"

#include <fmt/format.h>

#include <cmath>

#include "task/draw.h"

namespace kevo {
namespace {

// Reduction order differs between the two runners' kernels (double atomics): allowance for it.
constexpr double kRoundoff = 1e-9;

}  // namespace

SumsCheck compare_sums(const proto::Sums& got, const proto::Sums& want, Tolerance tol) {
  SumsCheck r;
  if (got.count != want.count) {
    r.ok = false;
    r.why = fmt::format("{} elements, the baseline's output has {}", got.count, want.count);
    return r;
  }
  if (got.nonfinite != want.nonfinite) {
    r.ok = false;
    r.why = fmt::format("{} non-finite or unwritten elements, the baseline's output has {}", got.nonfinite,
                        want.nonfinite);
    return r;
  }
  const double n = static_cast<double>(std::max<int64_t>(1, want.count - want.nonfinite));
  const double norm_w = std::sqrt(std::max(0.0, want.sum_sq)), norm_g = std::sqrt(std::max(0.0, got.sum_sq));
  const double scale = std::max(1.0, norm_w / std::sqrt(n));  // compare.cpp's atol scale: rms of the reference
  // || (atol*scale + rtol*|w_i|)_i ||_2 <= sqrt(n)*atol*scale + rtol*||w|| (Minkowski).
  const double tol_norm = std::sqrt(n) * tol.atol * scale + tol.rtol * norm_w;
  const double slack = kRoundoff * std::sqrt(n) * std::max(norm_w, norm_g) + 1e-30;
  if (std::fabs(norm_g - norm_w) > tol_norm + slack) {
    r.ok = false;
    r.why = fmt::format("L2 norm {:.6g}, the baseline's {:.6g} (allowed difference {:.3g})", norm_g, norm_w,
                        tol_norm + slack);
    return r;
  }
  const double bound = kSumsSigmas * tol_norm + slack;
  const double d0 = std::fabs(got.signed0 - want.signed0), d1 = std::fabs(got.signed1 - want.signed1);
  if (d0 > bound || d1 > bound || !std::isfinite(d0) || !std::isfinite(d1)) {
    r.ok = false;
    r.why = fmt::format("signed sums differ from the baseline's by {:.3g} and {:.3g} (allowed {:.3g}): "
                        "values that belong to other inputs",
                        d0, d1, bound);
  }
  return r;
}

proto::Sums sums_of(const HostTensor& t, uint64_t key) {
  proto::Sums s;
  s.count = t.numel();
  for (int64_t i = 0; i < s.count; ++i) {
    double v = t.at(static_cast<size_t>(i));
    if (!std::isfinite(v)) {
      ++s.nonfinite;
      continue;
    }
    s.sum_sq += v * v;
    s.signed0 += draw_sign(key, i, 0) * v;
    s.signed1 += draw_sign(key, i, 1) * v;
  }
  return s;
}

}  // namespace kevo
