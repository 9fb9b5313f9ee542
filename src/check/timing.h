// The timing phase: the candidate and the baseline, each in its own process, timed in alternating
// batches on the main config, with every figure the candidate's process reports checked from
// outside it:
//  - its CUDA event times against the checker's own clock (check/outside_clock.h): timing_forged;
//  - every timed call's output against the baseline's for the same fresh inputs
//    (check/output_sums.h), and the last call's output element by element: timed_output;
//  - device limits, cache configuration and its stream's attributes before and after: device_state;
//  - work still running after a batch (its own device-wide wait, and the baseline's runner finding
//    the GPU busy when its batch starts): hidden_work.
// The baseline's figures come from a process no candidate code ever entered.
#pragma once

#include <chrono>
#include <functional>
#include <optional>

#include "check/verdict.h"
#include "run/protocol.h"
#include "run/runner_client.h"
#include "task/resolved.h"
#include "task/task.h"

namespace kevo {

// The timing inputs' draws start at the verdict's seed plus this (the correctness draws use the seed
// itself): PyTorch's timing after the verdict, and `--oracle-check`'s, draw the same first set.
constexpr uint64_t kTimingSeedOffset = 7777;

// A session whose outside clock cannot yet tell an honest figure from a forged one (outside_clock.h:
// Inconclusive) goes on past its budget, up to this many budgets; still undecided, the verdict is
// infra_error [timing_noisy] (unless a definite failure, such as below_sol, comes first).
inline constexpr double kNoisyBudgets = 3.0;

struct TimingSetup {
  const Task* task = nullptr;
  const ResolvedConfig* config = nullptr;  // the timed config (shapes, sizes, tolerance)
  RunnerClient* cand = nullptr;     // holds slot "cand"
  RunnerClient* trusted = nullptr;  // no candidate code ever: holds "base" when has_baseline; may be
                                    // cand itself when the candidate is the task's own baseline
  bool has_baseline = false;
  // The candidate's runner's device state before its library was loaded (the load reply).
  std::optional<proto::DeviceState> state_at_load;
  // The candidate's runner's threads before its library was loaded, counted by the kernel
  // (check/isolation.h); more after any batch is a thread it left running. -1: not checked.
  int cand_threads = -1;
  bool compare_ipc = true;  // the last timed output compared element by element through CUDA IPC
  uint64_t seed = 0;
  size_t l2_bytes = size_t(50) << 20;
  double budget_s = 4.0;
  double target_rel_ci = 0.01;
  // Racing: a session may end after kMinRaceRounds once the speedup's whole interval is below this
  // (the run's best, where a search has one) and the checker's clock agrees with the candidate's
  // events; 0: never (every session reaches the stopping rule's precision).
  double stop_below = 0;
  // The run's own figure for the baseline on this config and kind of GPU (EvalOptions::baseline_ms);
  // 0: none. A session's baseline median over it by more than kBaselineSlowedMargin is credited
  // against it instead.
  double baseline_expected_ms = 0;
  std::chrono::milliseconds call_timeout{20000};
  // Without a baseline: validates the candidate's last timed output (its inputs' descriptors and
  // the output buffers' IPC handles) against the oracle; empty: not validated (flagged).
  std::function<Status(const std::vector<proto::TensorDesc>& inputs, const std::vector<proto::TensorDesc>& outputs,
                       const std::vector<proto::IpcBuffer>& outputs_ipc)>
      validate_last;
};

// How a session's batches are sized and ordered. OneCall: batches of one call and of 2k calls, the
// series always in one order; its line's spread (2k - 1 calls) reaches the outside clock's interval
// in about a third of Doubling's time (H100: gelu's baseline in 6 rounds, 0.43 s), but on some
// honest kernels a one-call batch costs less outside its events than the trusted runner's (bias_scale's
// baseline read 15% over its events; the cause is not known). Doubling: batches of k and 2k, the
// series taking turns to go first (docs/measurements/2026-11-26-h100-c5782ec-one-call-batches.md).
enum class Batching { OneCall, Doubling };

// Sets v.timing (and v.work["timing_session"]), or decides the verdict. Times with OneCall first;
// where the checker's clock does not agree with the candidate's events (forged or inconclusive), it
// times again with Doubling, on fresh call numbers, and that session decides: each way of batching is
// sound on its own, so a forger gains nothing from the second chance, and an honest kernel that
// OneCall misreads pays for both. The flag timing_retimed says so.
void run_timing(const TimingSetup& s, Verdict& v);

// One session with the given batching, from call number `first_call`; returns the next unused one.
uint64_t run_timing_session(const TimingSetup& s, Verdict& v, Batching b, uint64_t first_call);

}  // namespace kevo
