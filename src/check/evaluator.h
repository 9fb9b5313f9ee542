// The checker: compiles a candidate, runs it in a separate kevo-runner process under the full
// correctness protocol, times it against the baseline in the same session, and returns a Verdict.
// This process holds the reference outputs and never loads candidate code.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "check/verdict.h"
#include "task/task.h"
#include "torch/torch_timing.h"

namespace kevo {

struct EvalOptions {
  std::filesystem::path candidate;  // .cu file; ignored when baseline_mode
  // The name compile diagnostics give the candidate's file (kevo eval: the path as the user typed
  // it); empty: "candidate.cu", the same in every prompt a search writes.
  std::string shown_name;
  bool baseline_mode = false;       // evaluate the task's baseline against its CPU reference
  bool compile_only = false;
  bool time = true;
  bool visible_only = false;        // skip held_out configs (what evolution uses)
  bool held_out_only = false;       // only held_out configs (re-verifying a winner)
  bool static_gate = true;          // an unsafe static finding stops the evaluation
  bool sanitize = false;            // compute-sanitizer memcheck/racecheck/initcheck, smallest config
  // A passing candidate's kernels profiled by Nsight Compute on the main config after the
  // verdict (Verdict::profile); without ncu or counter permission the profile says why.
  bool profile = false;
  std::chrono::seconds profile_timeout{30};  // ncu replays each kernel ~10 times; a hang ends here
  int seeds = 3;
  std::optional<uint64_t> seed;     // default: fresh from the OS each evaluation
  std::string arch;                 // default: from the device (sm_90 when there is none)
  std::chrono::milliseconds call_timeout{20000};
  double time_budget_s = 4.0;       // per timing session
  double target_rel_ci = 0.01;
  // Racing (check/timing.h, TimingSetup::stop_below): timing may end after 4 rounds once the
  // speedup is clearly below this; a search passes its best so far. 0: every session runs to the
  // stopping rule's precision.
  double timing_stop_below = 0;
  // The baseline's figure on the main config as the run measured it at its start (its median call,
  // ms) and the GPU it was measured on (HelloReply::name); 0: none. A session whose baseline runs
  // over 15% slower on the same kind of GPU has its speedup credited against this figure instead
  // (kBaselineSlowed): whatever slowed the baseline's batches, the candidate gains nothing by it.
  double baseline_ms = 0;
  std::string baseline_gpu;
  // After kevo's timing session, with its processes gone, also time the task's PyTorch side on the
  // same inputs (torch_reference eager and torch.compile, and its torch_baseline extension) through
  // the bridge: Timing::pytorch, or Timing::pytorch_note when this machine cannot (no torch, no
  // CUDA). Only for a passing candidate of a task with a torch_reference.
  bool torch_time = false;
  std::string torch_device = "cuda";  // "cpu": perf_counter timing (tests)
  // When the oracle is the task's baseline (the usual case), inputs are drawn on the GPU by both
  // runners and outputs compared there (the oracle's runner opens the candidate's buffers through
  // CUDA IPC). false: the host path (inputs drawn by the checker, outputs copied back and compared
  // on the CPU), for machines where CUDA IPC is unavailable.
  bool device_data = true;
  // The baseline's own check (baseline_mode) runs the CPU reference only on configs whose host data
  // (inputs and outputs, in their types and as the reference's doubles) fit in this many MiB; the
  // bigger ones are checked on the device data plane against the baseline in a second process
  // (ConfigCheck::against). A 2^29-element config would need ~20 GiB and ~45 s on the host.
  // 0: no limit (every config against the reference, as with --host-data).
  double host_budget_mib = 1024;
  std::filesystem::path cache_dir;  // default: kevo::cache_dir()
  // Which GPU the runners use: a CUDA_VISIBLE_DEVICES value ("1", or a uuid); empty: the
  // process's own environment decides (kevo evolve --gpus gives each evaluator its GPU).
  std::string gpu;
  // Take runners started ahead (run/warm_runners.h) where one is ready: the evaluation skips their
  // start. Each is still fresh and used by this evaluation alone.
  bool warm_runners = false;
};

// The runner options that put a runner on opts.gpu.
struct RunnerOptions;
RunnerOptions runner_options(const EvalOptions& opts);

Verdict evaluate(const Task& task, const EvalOptions& opts);

// A task's PyTorch side timed on main-config inputs drawn from `seed` on the GPU by a kevo-runner of
// its own and lent to the bridge in place (kevo bench): the same values as
// torch::time_torch_main's, without them crossing the host. Its errors are time_torch's.
Result<torch::TimeResult> time_torch_lent(const Task& task, uint64_t seed,
                                            const torch::TorchTimingOptions& opts = {});

// Whether `gpu` (CUDA_VISIBLE_DEVICES, as EvalOptions::gpu; empty: the default) can run kernels: one
// kevo-runner started for it and asked hello. ErrorCode::kNoCuda when the runner says it has none.
Result<proto::HelloReply> probe_gpu(const std::string& gpu);

// The device's ceilings, measured once and cached per device (used by eval and doctor).
// gpu: CUDA_VISIBLE_DEVICES for the runner that measures (EvalOptions::gpu); empty: the default.
Result<DeviceCeilings> device_ceilings(bool remeasure = false, const std::string& known_uuid = "",
                                       const std::string& gpu = "");

}  // namespace kevo
