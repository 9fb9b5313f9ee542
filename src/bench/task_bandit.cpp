#include "bench/task_bandit.h"

#include <algorithm>
#include <cmath>

namespace kevo::bench {

void TaskBandit::record(size_t arm, double before, double after, double sol) {
  ArmState& a = arms_[arm];
  const double gain = before > 0 && after > before ? std::log(after / before) : 0;
  a.progress = a.slices == 0 ? gain : kSmoothing * gain + (1 - kSmoothing) * a.progress;
  a.sol = sol;
  ++a.slices;
  ++total_slices_;
}

double TaskBandit::headroom(size_t arm) const {
  const ArmState& a = arms_[arm];
  const double sol = a.sol > 0 ? a.sol : a.sol_baseline;
  return std::clamp(1 - sol, 0.0, 1.0);  // no floor known: all of it may be headroom
}

double TaskBandit::score(size_t arm) const {
  const ArmState& a = arms_[arm];
  const double explore = kExplore * std::sqrt(std::log(total_slices_ + 1.0) / (a.slices + 1.0));
  return headroom(arm) * (kProgressFloor + a.progress + explore);
}

std::optional<size_t> TaskBandit::next() const {
  std::optional<size_t> best;
  for (size_t i = 0; i < arms_.size(); ++i) {
    if (arms_[i].stopped) continue;
    if (!best || score(i) > score(*best)) best = i;
  }
  return best;
}

}  // namespace kevo::bench
