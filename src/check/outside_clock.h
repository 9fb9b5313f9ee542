// The checker's own clock on a runner's timed work. A runner that loaded a candidate can forge
// anything it reports, its CUDA event times included; what it cannot forge is how long the checker
// waits for its reply. Batches of n calls (n alternating between k and 2k, each batch ending in a
// device-wide synchronize) are timed from request to reply. What the events do not explain, the
// gap (wall - the batch's event times), is fitted on calls (least squares): its per-call slope is
// the work around each call plus whatever the events hide; its intercept the fixed costs (the pipe,
// the synchronize). The same fit in the baseline's runner's series of the work around calls (no
// candidate entered it) gives what honest work leaves outside the events; what the candidate's
// gap exceeds it by is hidden. Fitting the gap, not the wall, cancels the host delays the events
// see too (a preempted launch thread stretches both), which on a loaded host are most of the noise.
// A batch size is known to the runner, so a forger could stretch its small batches to flatten the
// slope: to hide d per call it must add (b - a) d to its a-call batches over its b-call ones, which
// raises the fitted intercept by b d. So an intercept above the trusted one (beyond its interval)
// counts as hidden work, per call of the larger batch (the least a forger's stretch implies).
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
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
// What honest calls of a few microseconds leave unexplained per call: the GPU's gap before each
// launch of a busy stream, which no event spans and the trusted work-around series (no launch of
// the candidate's) does not have. On an H100 (2026-11-26) a 4.5 us one-kernel call read 2.9 us
// over its events, a 24 us two-kernel call 7.3 us. A shortfall within this is not an accusation:
// the figure is still lifted to the least the outside clock allows (outside_floor_factor), so a
// forger gains no more from it than the allowance; beyond it (and beyond the allowance) it is forged.
constexpr double kLaunchGapMs = 0.010;

struct BatchWall {
  int calls = 0;
  double wall_ms = 0;    // request sent -> reply read, on the checker's steady clock
  double events_ms = 0;  // the batch's event times as its runner reported them (0: nothing timed)
};

// The gap's fit. A few batches far above the line (a context switch outside the events) are
// dropped: at most kMaxDroppedShare of them, so a forger cannot have most of its batches ignored.
constexpr double kMaxDroppedShare = 0.1;
struct Slope {
  bool ok = false;
  double per_call_ms = 0;
  double ci_ms = 0;  // ~95% half-width (two standard errors of the least-squares slope)
  double fixed_ms = 0, fixed_ci_ms = 0;  // the intercept and its ~95% half-width
  int batches = 0, dropped = 0;
  int min_calls = 0, max_calls = 0;  // the smaller and larger batch sizes
};

// The least-squares line of the gap (wall - events) on calls per batch; needs at least two sizes,
// two batches of each (after dropping); otherwise !ok.
Slope fit_slope(const std::vector<BatchWall>& walls);

// Inconclusive: the events read below the outside figure by more than the tolerance, within its
// noise, and that noise is beyond kNoisyShare; more batches decide (a noisy host must neither
// accuse an honest kernel nor let a forger hide in the noise).
enum class OutsideVerdict { Agree, Forged, Inconclusive, Unmeasured };
const char* to_string(OutsideVerdict v);  // "agree", "forged", "inconclusive", "unmeasured"
std::optional<OutsideVerdict> parse_outside_verdict(std::string_view text);  // nullopt for other text

struct OutsideCheck {
  OutsideVerdict verdict = OutsideVerdict::Unmeasured;
  double events_ms = 0;   // the candidate's own figure: mean event time per call
  double outside_ms = 0;  // events_ms + the hidden time the checker's clock shows per call
  double ci_ms = 0;
  double allowed_ms = 0;  // how far below outside_ms events_ms may be
  double fixed_excess_ms = 0;  // the candidate's intercept above the trusted one, beyond both intervals
  // The same comparison made with medians (add_median_check): the typical call from the batches'
  // walls alone, which a stall moves no more than a forger can. 0: not measured.
  double median_outside_ms = 0, median_allowed_ms = 0;
  std::string detail;     // one line with the figures
};

// events_mean_ms: the candidate's mean per-call event time over the same batches; candidate and
// around: the gap fits of its series and of the trusted work-around series. outside_ms is
// events_mean_ms plus what the gap shows hidden (per call).
OutsideCheck check_outside(double events_mean_ms, const Slope& candidate, const Slope& around,
                           double tolerance = kOutsideTolerance);

// Per batch size the median wall (gap: wall - events), a line through those medians, and its ~95%
// half-widths from the medians' spread (standard errors 1.2533 x 1.4826 MAD / sqrt(n), times
// Student's t for the fewest batches of a size); needs two sizes, two batches of each. A few stalls, which the mean-based fit can only drop up to kMaxDroppedShare of,
// move no median: on batches recorded on an H100 its interval is about half the least-squares one.
Slope fit_median_line(const std::vector<BatchWall>& walls, bool gap);

// The outside figure as the median line of the candidate's walls (not gaps: the events are the
// candidate's to forge, and a median of gaps is not shifted by shaving a minority of batches)
// less the trusted work-around line, with the same intercept rule; its allowance as in
// check_outside. Fills c.median_outside_ms and c.median_allowed_ms.
void add_median_check(OutsideCheck& c, const std::vector<BatchWall>& candidate, const std::vector<BatchWall>& around,
                      double tolerance = kOutsideTolerance);

// The check compares the outside figure with the events' mean, but a speedup is computed from the
// median call: a process that reports just over half of its calls low moves the median by the
// whole shave and the mean by half of it, so the mean's check alone would let the median gain up
// to twice the allowance. The factor (>= 1) that lifts `figure_ms`, the median, to the least the
// outside clock allows: outside_ms - allowed_ms, or the median check's floor where that is higher
// (its allowance is the narrower on a host with stalls). 1 for an honest figure (within both
// allowances) and when nothing was measured.
double outside_floor_factor(double figure_ms, const OutsideCheck& c);

// Whether the outside figure is precise enough for timing to stop: the least-squares interval
// within half the tolerance, or the medians' (a few stalls, which on a busy H100 hit every series
// of a round alike, widen the former and move no median). Either way a forger gains at most the
// tolerance: through the accusation (check_outside), or through the floor, which lifts a figure
// to within the medians' allowance (outside_floor_factor).
bool outside_precise(const OutsideCheck& c, double tolerance = kOutsideTolerance);

}  // namespace kevo
