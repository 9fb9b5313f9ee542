// Noise-aware comparison of measured speedups. Every candidate's speedup is a ratio of medians
// against the baseline timed in the same session, with a bootstrap 95% CI, so two candidates'
// speedups are comparable even though their sessions differ. A candidate counts as faster than
// the incumbent only when the intervals do not overlap (its lower bound above the incumbent's
// upper bound). Without a usable interval (a test double, a degenerate session) it must beat
// the point estimate by a margin instead.
#pragma once

namespace kevo::evolve {

struct Speed {
  double value = 0, lo = 0, hi = 0;  // speedup over the baseline and its CI
  bool has_ci() const { return hi > lo && lo > 0; }
};

inline constexpr double kNoCiMargin = 0.03;  // 3%: about the run-to-run spread of a good session

inline bool confidently_faster(const Speed& challenger, const Speed& incumbent) {
  if (challenger.has_ci() && incumbent.has_ci()) return challenger.lo > incumbent.hi;
  return challenger.value > incumbent.value * (1 + kNoCiMargin);
}

}  // namespace kevo::evolve
