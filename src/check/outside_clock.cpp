#include "check/outside_clock.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace kevo {
namespace {

struct Median {
  double value = 0, half_ci = 0;
};

// Median with a ~95% order-statistic interval (as the runner's stopping rule).
Median median_of(std::vector<double> s) {
  std::sort(s.begin(), s.end());
  Median m;
  size_t n = s.size();
  m.value = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  double r = 0.98 * std::sqrt(static_cast<double>(n));
  auto lo = static_cast<size_t>(std::max(0.0, std::floor(static_cast<double>(n) / 2 - r)));
  auto hi = static_cast<size_t>(std::min(static_cast<double>(n - 1), std::ceil(static_cast<double>(n) / 2 + r)));
  m.half_ci = (s[hi] - s[lo]) / 2;
  return m;
}

}  // namespace

Slope fit_slope(const std::vector<BatchWall>& walls) {
  std::map<int, std::vector<double>> by_n;
  for (const auto& w : walls) by_n[w.calls].push_back(w.wall_ms);
  Slope s;
  s.batches = static_cast<int>(walls.size());
  if (by_n.size() != 2) return s;
  auto small = by_n.begin(), big = std::next(small);
  if (small->second.size() < 2 || big->second.size() < 2 || small->first <= 0) return s;
  Median a = median_of(small->second), b = median_of(big->second);
  double dn = big->first - small->first;
  s.per_call_ms = (b.value - a.value) / dn;
  s.ci_ms = (a.half_ci + b.half_ci) / dn;
  s.ok = true;
  return s;
}

const char* outside_verdict_name(OutsideVerdict v) {
  switch (v) {
    case OutsideVerdict::Agree: return "agree";
    case OutsideVerdict::Forged: return "forged";
    case OutsideVerdict::Unmeasured: return "unmeasured";
  }
  return "?";
}

OutsideCheck check_outside(double events_mean_ms, const Slope& candidate, const Slope& around, double tolerance) {
  OutsideCheck c;
  c.events_ms = events_mean_ms;
  if (!candidate.ok || !around.ok) {
    c.detail = "the outside clock had too few batches to measure";
    return c;
  }
  c.outside_ms = candidate.per_call_ms - around.per_call_ms;
  c.ci_ms = std::hypot(candidate.ci_ms, around.ci_ms);
  // The tolerance, widened by the outside figure's own uncertainty: a noisy host must not turn an
  // honest kernel into a forger (what a forger can hide in is reported with the figure).
  c.allowed_ms = std::max(tolerance * std::max(c.outside_ms, 0.0), 2 * c.ci_ms);
  const bool forged = events_mean_ms < c.outside_ms - c.allowed_ms;
  c.verdict = forged ? OutsideVerdict::Forged : OutsideVerdict::Agree;
  c.detail = fmt::format("in-process events {:.4f} ms per call, the checker's clock {:.4f} ms (+-{:.4f}); "
                         "allowed shortfall {:.4f} ms",
                         events_mean_ms, c.outside_ms, c.ci_ms, c.allowed_ms);
  return c;
}

}  // namespace kevo
