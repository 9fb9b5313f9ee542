// Which task of a campaign gets the next slice of its budget: a bandit over tasks whose reward is
// progress toward the speed of light. A task's score is its headroom (1 - its best's SOL fraction:
// what is left to gain at all) times its recent progress (the log of how much its last slices
// raised its best speedup, smoothed), plus an exploration term that shrinks as the task gets more
// slices; tasks that are stopped get nothing. Pure arithmetic over figures the caller reads from
// the run database, so it is tested without a run.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace kevo::bench {

struct ArmState {
  std::string task;
  int slices = 0;          // slices given so far
  double sol = 0;          // the best's SOL fraction (0: not known yet)
  double sol_baseline = 0;  // the baseline's (0: not known): headroom before any best
  double progress = 0;     // smoothed log gain of the best speedup per slice
  bool stopped = false;
};

class TaskBandit {
 public:
  // How much a slice's gain counts against the earlier ones, and how much a rarely tried task is
  // favoured; both fixed so a campaign is reproducible.
  static constexpr double kSmoothing = 0.5, kExplore = 0.15, kProgressFloor = 0.05;

  explicit TaskBandit(std::vector<ArmState> arms) : arms_(std::move(arms)) {}

  // Records a slice of `task`: its best speedup went from `before` to `after`; `sol` is the best's
  // SOL fraction now.
  void record(size_t arm, double before, double after, double sol);
  void stop(size_t arm) { arms_[arm].stopped = true; }
  double headroom(size_t arm) const;
  double score(size_t arm) const;
  // The arm to give the next slice; nullopt when every arm is stopped.
  std::optional<size_t> next() const;
  const std::vector<ArmState>& arms() const { return arms_; }

 private:
  std::vector<ArmState> arms_;
  int total_slices_ = 0;
};

}  // namespace kevo::bench
