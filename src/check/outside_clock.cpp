#include "check/outside_clock.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "time/stats.h"
#include "util/enum_text.h"

namespace kevo {
namespace {

struct Point {
  double x, y;
};

// Ordinary least squares of y on x, with ~95% half-widths (two standard errors) of slope and intercept.
Slope least_squares(const std::vector<Point>& p) {
  Slope s;
  const double m = static_cast<double>(p.size());
  double mx = 0, my = 0;
  for (const auto& q : p) mx += q.x, my += q.y;
  mx /= m;
  my /= m;
  double sxx = 0, sxy = 0;
  for (const auto& q : p) sxx += (q.x - mx) * (q.x - mx), sxy += (q.x - mx) * (q.y - my);
  s.per_call_ms = sxy / sxx;
  s.fixed_ms = my - s.per_call_ms * mx;
  double rss = 0;
  for (const auto& q : p) {
    double r = q.y - (s.fixed_ms + s.per_call_ms * q.x);
    rss += r * r;
  }
  const double var = rss / std::max(1.0, m - 2);
  s.ci_ms = 2.0 * std::sqrt(var / sxx);
  s.fixed_ci_ms = 2.0 * std::sqrt(var * (1.0 / m + mx * mx / sxx));
  s.batches = static_cast<int>(p.size());
  s.ok = true;
  return s;
}

bool two_sizes_two_each(const std::vector<Point>& p) {
  std::map<double, int> sizes;
  for (const auto& q : p) ++sizes[q.x];
  if (sizes.size() < 2) return false;
  for (const auto& [n, count] : sizes)
    if (count < 2 || n <= 0) return false;
  return true;
}

// The batches far above the line: residual beyond the median by more than five robust standard
// deviations (1.4826 MAD), the worst first, at most kMaxDroppedShare of them. Only high ones: host
// delays add time, nothing makes a batch faster than its work.
std::vector<size_t> far_above(const std::vector<Point>& p, const Slope& s) {
  std::vector<double> r;
  for (const auto& q : p) r.push_back(q.y - (s.fixed_ms + s.per_call_ms * q.x));
  const double med = median(r);
  std::vector<double> dev;
  for (double x : r) dev.push_back(std::abs(x - med));
  const double limit = med + 5 * 1.4826 * median(dev);
  std::vector<size_t> idx;
  for (size_t i = 0; i < r.size(); ++i)
    if (r[i] > limit) idx.push_back(i);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return r[a] > r[b]; });
  idx.resize(std::min(idx.size(), static_cast<size_t>(kMaxDroppedShare * static_cast<double>(p.size()))));
  return idx;
}

}  // namespace

Slope fit_slope(const std::vector<BatchWall>& walls) {
  std::vector<Point> p;
  int min_calls = 0, max_calls = 0;
  for (const auto& w : walls) {
    p.push_back({static_cast<double>(w.calls), w.wall_ms - w.events_ms});
    min_calls = min_calls == 0 ? w.calls : std::min(min_calls, w.calls);
    max_calls = std::max(max_calls, w.calls);
  }
  if (!two_sizes_two_each(p)) return Slope{.batches = static_cast<int>(walls.size())};
  Slope s = least_squares(p);
  const std::vector<size_t> drop = far_above(p, s);
  if (!drop.empty()) {
    std::vector<Point> kept;
    for (size_t i = 0; i < p.size(); ++i)
      if (std::find(drop.begin(), drop.end(), i) == drop.end()) kept.push_back(p[i]);
    if (two_sizes_two_each(kept)) {
      s = least_squares(kept);
      s.dropped = static_cast<int>(drop.size());
    }
  }
  s.min_calls = min_calls, s.max_calls = max_calls;
  return s;
}

namespace {

constexpr EnumText<OutsideVerdict> kOutsideVerdictTexts[] = {
    {OutsideVerdict::Agree, "agree"},
    {OutsideVerdict::Forged, "forged"},
    {OutsideVerdict::Inconclusive, "inconclusive"},
    {OutsideVerdict::Unmeasured, "unmeasured"},
};

}  // namespace

const char* to_string(OutsideVerdict v) { return enum_text(kOutsideVerdictTexts, v); }

std::optional<OutsideVerdict> parse_outside_verdict(std::string_view text) {
  return enum_parse(kOutsideVerdictTexts, text);
}

OutsideCheck check_outside(double events_mean_ms, const Slope& candidate, const Slope& around, double tolerance) {
  OutsideCheck c;
  c.events_ms = events_mean_ms;
  if (!candidate.ok || !around.ok || candidate.max_calls <= 0) {
    c.detail = "the outside clock had too few batches to measure";
    return c;
  }
  // A candidate's fixed cost above the trusted one, beyond both intervals, may be small batches
  // stretched to flatten the slope: it hides that much per call of the larger batch.
  c.fixed_excess_ms = std::max(0.0, candidate.fixed_ms - around.fixed_ms -
                                        std::hypot(candidate.fixed_ci_ms, around.fixed_ci_ms));
  const double hidden = candidate.per_call_ms - around.per_call_ms + c.fixed_excess_ms / candidate.max_calls;
  c.outside_ms = events_mean_ms + hidden;
  c.ci_ms = std::hypot(candidate.ci_ms, around.ci_ms);
  // The tolerance, widened by the outside figure's own uncertainty: a noisy host must not turn an
  // honest kernel into a forger (what a forger can hide in is reported with the figure). But noise
  // beyond kNoisyShare would let a forger hide most of its time: a figure that only that much noise
  // saves from an accusation is neither believed nor accused (more batches decide).
  const double within = tolerance * std::max(c.outside_ms, 0.0);
  c.allowed_ms = std::max(within, 2 * c.ci_ms);
  const bool too_noisy = 2 * c.ci_ms > std::max(kNoisyShare * c.outside_ms, kNoisyFloorMs);
  if (hidden > c.allowed_ms && hidden > kLaunchGapMs)
    c.verdict = OutsideVerdict::Forged;
  else if (too_noisy && hidden > within)
    c.verdict = OutsideVerdict::Inconclusive;
  else
    c.verdict = OutsideVerdict::Agree;
  c.detail = fmt::format("in-process events {:.4f} ms per call, the checker's clock {:.4f} ms (+-{:.4f}); "
                         "allowed shortfall {:.4f} ms",
                         events_mean_ms, c.outside_ms, c.ci_ms, c.allowed_ms);
  if (hidden > c.allowed_ms && c.verdict != OutsideVerdict::Forged)
    c.detail += fmt::format("; the shortfall is within the {:.3f} ms per call that launches leave unexplained: "
                            "the figure is lifted to the checker's clock, not accused", kLaunchGapMs);
  if (c.fixed_excess_ms > 0)
    c.detail += fmt::format("; the candidate's fixed cost per batch {:.4f} ms above the trusted runner's, "
                            "counted as hidden over its {}-call batches",
                            c.fixed_excess_ms, candidate.max_calls);
  if (candidate.dropped > 0) c.detail += fmt::format("; {} of {} batches dropped as far above the line",
                                                     candidate.dropped, candidate.batches + candidate.dropped);
  return c;
}

namespace {

// Two-sided 95% quantiles of Student's t by degrees of freedom (1..20; 2.0 beyond, as elsewhere):
// with a handful of batches per size the MAD-based spread is itself a rough estimate, and an
// interval of two of them too narrow would lift honest figures.
double t95(size_t dof) {
  static constexpr double kT[] = {12.71, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                  2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086};
  return dof >= 1 && dof <= 20 ? kT[dof - 1] : 2.0;
}

}  // namespace

Slope fit_median_line(const std::vector<BatchWall>& walls, bool gap) {
  std::map<int, std::vector<double>> by_size;
  int min_calls = 0, max_calls = 0;
  for (const auto& w : walls) {
    by_size[w.calls].push_back(gap ? w.wall_ms - w.events_ms : w.wall_ms);
    min_calls = min_calls == 0 ? w.calls : std::min(min_calls, w.calls);
    max_calls = std::max(max_calls, w.calls);
  }
  Slope s{.batches = static_cast<int>(walls.size())};
  if (by_size.size() < 2) return s;
  std::vector<double> x, m, var;
  size_t fewest = walls.size();
  for (const auto& [calls, v] : by_size) {
    if (v.size() < 2 || calls <= 0) return s;
    fewest = std::min(fewest, v.size());
    const double med = median(v);
    std::vector<double> dev;
    for (double y : v) dev.push_back(std::abs(y - med));
    const double se = 1.2533 * 1.4826 * median(dev) / std::sqrt(static_cast<double>(v.size()));
    x.push_back(calls), m.push_back(med), var.push_back(se * se);
  }
  // Least squares through the medians; slope and intercept are linear in them, so their variances
  // are the weighted sums of the medians' own.
  const double n = static_cast<double>(x.size());
  double mx = 0, mm = 0;
  for (size_t i = 0; i < x.size(); ++i) mx += x[i] / n, mm += m[i] / n;
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) sxx += (x[i] - mx) * (x[i] - mx), sxy += (x[i] - mx) * (m[i] - mm);
  s.per_call_ms = sxy / sxx;
  s.fixed_ms = mm - s.per_call_ms * mx;
  double var_slope = 0, var_fixed = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double ws = (x[i] - mx) / sxx, wf = 1 / n - mx * ws;
    var_slope += ws * ws * var[i], var_fixed += wf * wf * var[i];
  }
  const double t = t95(fewest - 1);
  s.ci_ms = t * std::sqrt(var_slope);
  s.fixed_ci_ms = t * std::sqrt(var_fixed);
  s.min_calls = min_calls, s.max_calls = max_calls;
  s.ok = true;
  return s;
}

void add_median_check(OutsideCheck& c, const std::vector<BatchWall>& candidate, const std::vector<BatchWall>& around,
                      double tolerance) {
  const Slope cand = fit_median_line(candidate, false), trusted = fit_median_line(around, true);
  if (!cand.ok || !trusted.ok || cand.max_calls <= 0) return;
  const double excess =
      std::max(0.0, cand.fixed_ms - trusted.fixed_ms - std::hypot(cand.fixed_ci_ms, trusted.fixed_ci_ms));
  c.median_outside_ms = cand.per_call_ms - trusted.per_call_ms + excess / cand.max_calls;
  c.median_allowed_ms =
      std::max(tolerance * std::max(c.median_outside_ms, 0.0), 2 * std::hypot(cand.ci_ms, trusted.ci_ms));
  c.detail += fmt::format("; medians: the checker's clock {:.4f} ms per call, allowed {:.4f} below",
                          c.median_outside_ms, c.median_allowed_ms);
}

bool outside_precise(const OutsideCheck& c, double tolerance) {
  if (c.verdict == OutsideVerdict::Unmeasured || c.outside_ms <= 0) return false;
  if (c.ci_ms <= tolerance / 2 * c.outside_ms) return true;
  // median_allowed_ms is the larger of the tolerance and twice the interval: at the tolerance, the
  // interval is within half of it.
  return c.median_outside_ms > 0 && c.median_allowed_ms <= tolerance * c.median_outside_ms * (1 + 1e-12);
}

double outside_floor_factor(double figure_ms, const OutsideCheck& c) {
  if (c.verdict == OutsideVerdict::Unmeasured || figure_ms <= 0) return 1.0;
  double floor = c.outside_ms - c.allowed_ms;
  if (c.median_outside_ms > 0) floor = std::max(floor, c.median_outside_ms - c.median_allowed_ms);
  return std::max(1.0, floor / figure_ms);
}

}  // namespace kevo
