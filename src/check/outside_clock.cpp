#include "check/outside_clock.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace kevo {
Slope fit_slope(const std::vector<BatchWall>& walls) {
  std::map<int, int> sizes;
  for (const auto& w : walls) ++sizes[w.calls];
  Slope s;
  s.batches = static_cast<int>(walls.size());
  if (sizes.size() < 2) return s;
  for (const auto& [n, count] : sizes)
    if (count < 2 || n <= 0) return s;
  // Least squares of wall on calls: every batch counts (with few batches per size, medians' order
  // statistics would span the whole range). The slope's standard error gives the interval.
  double mx = 0, my = 0;
  for (const auto& w : walls) mx += w.calls, my += w.wall_ms;
  const double m = static_cast<double>(walls.size());
  mx /= m;
  my /= m;
  double sxx = 0, sxy = 0;
  for (const auto& w : walls) sxx += (w.calls - mx) * (w.calls - mx), sxy += (w.calls - mx) * (w.wall_ms - my);
  s.per_call_ms = sxy / sxx;
  double rss = 0;
  for (const auto& w : walls) {
    double r = w.wall_ms - (my + s.per_call_ms * (w.calls - mx));
    rss += r * r;
  }
  s.ci_ms = 2.0 * std::sqrt(rss / std::max(1.0, m - 2) / sxx);  // ~95%: two standard errors
  s.ok = true;
  return s;
}

const char* outside_verdict_name(OutsideVerdict v) {
  switch (v) {
    case OutsideVerdict::Agree: return "agree";
    case OutsideVerdict::Forged: return "forged";
    case OutsideVerdict::Inconclusive: return "inconclusive";
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
  // honest kernel into a forger (what a forger can hide in is reported with the figure). But noise
  // beyond kNoisyShare would let a forger hide most of its time: a figure that only that much noise
  // saves from an accusation is neither believed nor accused (more batches decide).
  const double within = tolerance * std::max(c.outside_ms, 0.0);
  c.allowed_ms = std::max(within, 2 * c.ci_ms);
  const bool too_noisy = 2 * c.ci_ms > std::max(kNoisyShare * c.outside_ms, kNoisyFloorMs);
  if (events_mean_ms < c.outside_ms - c.allowed_ms)
    c.verdict = OutsideVerdict::Forged;
  else if (too_noisy && events_mean_ms < c.outside_ms - within)
    c.verdict = OutsideVerdict::Inconclusive;
  else
    c.verdict = OutsideVerdict::Agree;
  c.detail = fmt::format("in-process events {:.4f} ms per call, the checker's clock {:.4f} ms (+-{:.4f}); "
                         "allowed shortfall {:.4f} ms",
                         events_mean_ms, c.outside_ms, c.ci_ms, c.allowed_ms);
  return c;
}

}  // namespace kevo
