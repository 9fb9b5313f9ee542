#include "time/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace kevo {
namespace {
double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  double pos = q * static_cast<double>(sorted.size() - 1);
  size_t i = static_cast<size_t>(pos);
  double f = pos - static_cast<double>(i);
  return i + 1 < sorted.size() ? sorted[i] * (1 - f) + sorted[i + 1] * f : sorted[i];
}
double median_of(std::vector<double>& v) {
  size_t m = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(m), v.end());
  double hi = v[m];
  if (v.size() % 2) return hi;
  double lo = *std::max_element(v.begin(), v.begin() + static_cast<long>(m));
  return (lo + hi) / 2;
}
}  // namespace

double median(std::vector<double> samples) { return samples.empty() ? 0 : median_of(samples); }

Summary summarize(std::vector<double> s) {
  Summary r;
  r.n = s.size();
  if (s.empty()) return r;
  std::sort(s.begin(), s.end());
  r.min = s.front();
  r.max = s.back();
  r.median = quantile(s, 0.5);
  r.q1 = quantile(s, 0.25);
  r.q3 = quantile(s, 0.75);
  r.iqr = r.q3 - r.q1;
  r.mean = std::accumulate(s.begin(), s.end(), 0.0) / static_cast<double>(s.size());
  double var = 0;
  for (double x : s) var += (x - r.mean) * (x - r.mean);
  var = s.size() > 1 ? var / static_cast<double>(s.size() - 1) : 0;
  r.cv = r.mean > 0 ? std::sqrt(var) / r.mean : 0;
  double n = static_cast<double>(s.size());
  size_t lo = static_cast<size_t>(std::max(0.0, std::floor(n / 2 - 0.98 * std::sqrt(n))));
  size_t hi = static_cast<size_t>(std::min(n - 1, std::ceil(n / 2 + 0.98 * std::sqrt(n))));
  r.median_lo = s[lo];
  r.median_hi = s[hi];
  return r;
}

Ratio median_ratio(const std::vector<double>& slow, const std::vector<double>& fast, int resamples) {
  Ratio r;
  if (slow.empty() || fast.empty()) return r;
  std::vector<double> a = slow, b = fast;
  double mb = median_of(b);
  r.value = mb > 0 ? median_of(a) / mb : 0;
  std::mt19937_64 rng(12345);
  std::vector<double> ratios;
  std::vector<double> ra(slow.size()), rb(fast.size());
  std::uniform_int_distribution<size_t> pa(0, slow.size() - 1), pb(0, fast.size() - 1);
  for (int k = 0; k < resamples; ++k) {
    for (auto& x : ra) x = slow[pa(rng)];
    for (auto& x : rb) x = fast[pb(rng)];
    double d = median_of(rb);
    if (d > 0) ratios.push_back(median_of(ra) / d);
  }
  std::sort(ratios.begin(), ratios.end());
  r.lo = quantile(ratios, 0.025);
  r.hi = quantile(ratios, 0.975);
  return r;
}

}  // namespace kevo
