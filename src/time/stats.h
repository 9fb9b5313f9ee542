// Summaries of timing samples and same-run speedup ratios with confidence intervals.
#pragma once

#include <cstddef>
#include <vector>

namespace kevo {

struct Summary {
  size_t n = 0;
  double median = 0, mean = 0, min = 0, max = 0, q1 = 0, q3 = 0, iqr = 0, cv = 0;
  double median_lo = 0, median_hi = 0;  // ~95% CI of the median (order statistics)
};

Summary summarize(std::vector<double> samples);

// The median (the mean of the middle two for an even count); 0 for none.
double median(std::vector<double> samples);

struct Ratio {
  double value = 0, lo = 0, hi = 0;  // ~95% bootstrap CI
};

// Speedup of `fast` over `slow` as the ratio of medians (slow/fast), with a bootstrap CI that
// resamples both sets (deterministic seed, so a report is reproducible).
Ratio median_ratio(const std::vector<double>& slow, const std::vector<double>& fast, int resamples = 1000);

}  // namespace kevo
