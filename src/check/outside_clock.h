// The checker's own clock on a runner's timed work. A runner that loaded a candidate can forge
// anything it reports, its CUDA event times included; what it cannot forge is how long the checker
// waits for its reply. Batches of n calls (n alternating between k and 2k, each batch ending in a
// device-wide synchronize) are timed from request to reply: the per-call cost is the slope of wall
// time on calls (least squares), in which the fixed costs (the pipe, the synchronize) cancel. The work around
// each call (input draw, poison, L2 flush, output sums) is measured the same way in the
// baseline's runner, which no candidate entered, and subtracted. An in-process figure is believed
// only when it is not below that outside figure by more than the tolerance.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

namespace kevo {

// What a forger can still gain: the events may read this much below the outside figure. The
// outside figure of a ~ms kernel is precise to ~0.5% (batches of tens of ms); honest kernels sit
// at or above it (event overhead adds, never removes, time).
constexpr double kOutsideTolerance = 0.03;
// Noise the allowance may grow to before a shortfall hiding in it is no longer believed: twice the
// interval above this share of the figure (and above kNoisyFloorMs, below which launch overheads
// decide) makes a below-tolerance figure Inconclusive. A GPU host's interval is ~3-6% of it.
constexpr double kNoisyShare = 0.5;
constexpr double kNoisyFloorMs = 0.02;

struct BatchWall {
  int calls = 0;
  double wall_ms = 0;  // request sent -> reply read, on the checker's steady clock
};

struct Slope {
  bool ok = false;
  double per_call_ms = 0;
  double ci_ms = 0;  // ~95% half-width (two standard errors of the least-squares slope)
  int batches = 0;
};

// The least-squares slope of wall time on calls per batch; needs at least two sizes, two batches of
// each; otherwise !ok.
Slope fit_slope(const std::vector<BatchWall>& walls);

// Inconclusive: the events read below the outside figure by more than the tolerance, within its
// noise, and that noise is beyond kNoisyShare; more batches decide (a noisy host must neither
// accuse an honest kernel nor let a forger hide in the noise).
enum class OutsideVerdict { Agree, Forged, Inconclusive, Unmeasured };
const char* outside_verdict_name(OutsideVerdict v);

struct OutsideCheck {
  OutsideVerdict verdict = OutsideVerdict::Unmeasured;
  double events_ms = 0;   // the candidate's own figure: mean event time per call
  double outside_ms = 0;  // slope(candidate) - slope(work around the calls)
  double ci_ms = 0;
  double allowed_ms = 0;  // how far below outside_ms events_ms may be
  std::string detail;     // one line with the figures
};

// events_mean_ms: the candidate's mean per-call event time over the same batches.
OutsideCheck check_outside(double events_mean_ms, const Slope& candidate, const Slope& around,
                           double tolerance = kOutsideTolerance);

}  // namespace kevo
