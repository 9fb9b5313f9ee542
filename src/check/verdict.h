// The result of evaluating one candidate: an outcome with a reason code, and every figure behind it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/isolation.h"
#include "check/kernel_profile.h"
#include "check/outcome.h"
#include "check/outside_clock.h"
#include "check/reason.h"
#include "check/static_check.h"
#include "compile/nvcc.h"
#include "time/sol.h"
#include "time/stats.h"
#include "torch/time_result.h"

namespace kevo {

// The phases of one evaluation, in the order they run; Verdict::phases records the seconds of each
// that ran, under its name.
enum class EvalPhase { kSetup, kCorrectness, kTiming, kSanitize, kProfile, kPytorch };
inline constexpr EvalPhase kEvalPhases[] = {EvalPhase::kSetup,    EvalPhase::kCorrectness, EvalPhase::kTiming,
                                            EvalPhase::kSanitize, EvalPhase::kProfile,     EvalPhase::kPytorch};
const char* to_string(EvalPhase p);  // "setup", "correctness", ...

struct Flag {
  Reason reason = Reason::kNone;  // kForeignStream, kHiddenWork, kTimingFloored, ...
  std::string detail;
  std::string static_rule;  // with kStatic: the static check's rule ("stream_create")
  std::string reason_text() const { return kevo::reason_text(reason, static_rule); }
};

// What a config's outputs were checked against. The CPU reference of a config too big for the host
// (EvalOptions::host_budget_mib) is not run: the baseline's own check (kevo eval --baseline, an
// evolve run's first step) compares it there with itself in a second process on the same device
// draw (written, finite, agreeing), its values against the reference on the smaller configs.
enum class CheckedAgainst { kOracle, kConsistency };
const char* to_string(CheckedAgainst a);

struct ConfigCheck {
  std::string config;
  bool held_out = false;
  bool ok = true;
  int draws = 0;  // seeds x placements checked
  double max_abs_err = 0, max_rel_err = 0;
  double seconds = 0;  // wall time of this config's checks (inputs, oracle, runs, comparison)
  std::string detail;  // the first failure, readable
  CheckedAgainst against = CheckedAgainst::kOracle;
};

struct Timing {
  std::string config;
  Summary candidate, baseline;
  // The candidate's own events' median call, before any raise to the checker's clock
  // (timing_floored): the speed-of-light check reads the lower of it and candidate.median, since a
  // runner claiming an impossible time skipped work or forged its events, whatever the floor.
  double events_median = 0;
  bool has_baseline = false;
  Ratio speedup;
  SolFloor floor;
  double sol_fraction = 0;  // floor / candidate median
  double max_wall_over_span = 0;  // host-clock cross-check, worst batch (unused since the outside clock)
  // Where the figures come from: CUDA events in each runner (the candidate's only where the
  // checker's own clock confirms them, check/outside_clock.h; the baseline's from a process no
  // candidate entered), over batches of small_calls and 2 x batch_calls calls.
  OutsideCheck outside, outside_baseline;
  double around_ms = 0;  // per call: input draw, poison, L2 flush, output sums (not in the events)
  int batch_calls = 0, rounds = 0;
  int small_calls = 0;  // 0: a verdict stored before batches of one call (then batch_calls)
  int retried_rounds = 0;  // rounds timed again because a batch stalled, in every session (not in the figures)
  double stopped_below = 0;  // raced: the session ended early, the speedup clearly below this (0: it did not)
  // Every timed batch the checker's clock saw, per series, so a reader can refit the figures.
  std::vector<BatchWall> walls_candidate, walls_baseline, walls_around;
  // The task's PyTorch side (torch_reference eager / torch.compile, torch_baseline extension) timed
  // on the same inputs after kevo's timing session (EvalOptions::torch_time).
  std::optional<torch::TimeResult> pytorch;
  std::string pytorch_note;  // one line: why PyTorch was not timed (no torch, no CUDA, ...)
};

// timing.pytorch and timing.speedup_vs_{eager,compile,extension} of the JSON verdict (the block is
// {"skipped": note} when PyTorch was not timed; nothing when it was not asked for).
void add_pytorch_json(const Timing& t, nlohmann::json& timing_json);
// The text verdict's PyTorch line (empty when not asked for):
// "            vs PyTorch: eager 1.234 ms (2.10x), torch.compile 0.987 ms (1.68x)\n".
std::string pytorch_text(const Timing& t);

struct Verdict {
  Outcome outcome = Outcome::Pass;
  Reason reason = Reason::kNone;  // the primary reason, kNone on pass
  std::string static_rule;        // with kStatic: the static check's rule ("stream_create")
  std::string message;            // one readable line about the primary reason
  std::string task, candidate;
  uint64_t seed = 0;
  std::optional<CompileResult> compile;
  std::vector<Finding> findings;
  std::vector<ConfigCheck> configs;
  std::optional<Timing> timing;
  std::vector<Flag> flags;
  std::optional<DeviceCeilings> device;
  // The confinement the candidate's runner was under (absent: no candidate was loaded).
  std::optional<Isolation> isolation;
  std::string sanitizer;  // compute-sanitizer summary when --sanitize
  // Nsight Compute's view of a passing candidate on the main config (EvalOptions::profile), taken
  // after the verdict in a process of its own: advice for prompts and readers, never a figure
  // of the verdict (check/kernel_profile.h).
  std::optional<Profile> profile;
  double seconds = 0;
  // Where the seconds went, in order: setup (static checks, compile, runner and oracle start),
  // correctness, timing, sanitize, pytorch (only the phases that ran).
  std::vector<std::pair<EvalPhase, double>> phases;
  // Seconds by kind of work across the phases: inputs (generation), oracle (reference outputs),
  // arena (copies between the checker and the runner's shared memory), candidate (its runs),
  // compare, timing_session (the runner's timed loop).
  std::map<std::string, double> work;

  void set(Outcome o, Reason why, std::string msg, std::string rule = {}) {
    if (outcome != Outcome::Pass) return;  // the first failure is the verdict
    outcome = o;
    reason = why;
    message = std::move(msg);
    static_rule = std::move(rule);
  }
  // As stored and shown: "mismatch", "static:stream_create", "" on pass.
  std::string reason_text() const { return kevo::reason_text(reason, static_rule); }
  nlohmann::json to_json() const;
  std::string to_text() const;
};

}  // namespace kevo
