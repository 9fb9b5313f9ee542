// One evaluation's state as it moves through the checker's phases (check/evaluator.cpp runs them
// in order: intake and static checks, compile and processes, correctness, timing, sanitizer,
// PyTorch). Internal to check/. Thread-safety: one evaluation, one thread.
#pragma once

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>

#include "check/evaluator.h"
#include "check/oracle.h"
#include "compile/nvcc.h"
#include "run/protocol.h"
#include "run/runner_client.h"
#include "task/resolved.h"
#include "torch/python_runtime.h"
#include "util/gpu_lock.h"

namespace kevo {

struct EvalSession {
  using Clock = std::chrono::steady_clock;
  // A started runner and its hello; an error with ErrorCode::kNoCuda when it answered that it has
  // no usable GPU.
  using Started = Result<std::pair<std::unique_ptr<RunnerClient>, proto::HelloReply>>;

  EvalSession(const Task& t, const EvalOptions& o, Verdict& verdict);

  const Task& task;
  const EvalOptions& opts;
  Verdict& v;

  // Processes. `cand` is the only one that ever loads candidate code; `trusted` runs the baseline
  // (the oracle, and the baseline's timing) or, for the PyTorch oracle, lends inputs to the bridge.
  std::unique_ptr<RunnerClient> cand, trusted;
  std::future<Started> cand_start, trusted_start;
  proto::HelloReply hello, trusted_hello;
  std::string arch;
  CompileOptions compile_options;
  // The candidate's (or, with --baseline, the baseline's) text as the static check read it: the
  // bytes compiled, never the file read again (it may have changed in between).
  std::string source;
  std::optional<CompileResult> cand_so, base_so;
  std::unique_ptr<Oracle> oracle;
  // The baseline in the trusted runner, for the baseline's own check of configs over the host
  // budget (EvalOptions::host_budget_mib); nullptr when none is.
  std::unique_ptr<Oracle> consistency;
  bool dev_data = false;  // inputs drawn and outputs compared on the GPU (needs a device oracle)
  // The first timing input set's draw descriptors, for PyTorch's timing after the verdict.
  std::optional<std::vector<proto::TensorDesc>> torch_set;
  // The candidate runner's device state before the candidate was loaded (check/timing.h).
  std::optional<proto::DeviceState> state_at_load;
  // The candidate's runner's threads once confined, counted from outside (-1: not known).
  int cand_threads = -1;
  // A Python candidate (check/python_candidate.h): the runtime both runners embed.
  bool python = false;
  std::optional<torch::PythonRuntime> python_rt;

  // Phases: the current one's time is recorded when the next starts or the verdict ends.
  void next_phase(EvalPhase p);
  void end_phase();
  // Seconds by kind of work, summed over the whole verdict (where the phases' time goes).
  template <class F>
  auto timed(const char* what, F&& f) {
    auto t0 = Clock::now();
    auto r = f();
    v.work[what] += std::chrono::duration<double>(Clock::now() - t0).count();
    return r;
  }
  Verdict finish();

  // A runner process spawned on this thread (it dies with the thread that forked it); the wait for
  // its CUDA context runs in the background, beside the compile.
  static std::future<Started> start_runner(const EvalOptions& o);
  // The trusted runner's start: one kept from an earlier evaluation of this task where
  // reuses_trusted(), else as start_runner.
  std::future<Started> start_trusted_runner();
  // Waits for the candidate's runner; false when the verdict is decided (no GPU).
  bool await_cand();
  // The trusted runner, started if it was not (an oracle that needs none still times the baseline).
  bool await_trusted();
  // Whether this evaluation's trusted runner may come from, and go back to, the runners kept for
  // its task (run/warm_runners.h): warm runners on, the baseline as the oracle, nothing of the
  // candidate's ever loaded there. keep_trusted gives it back, its buffers freed, unless the
  // verdict is the checker's failure.
  bool reuses_trusted() const;
  void keep_trusted();

 private:
  Clock::time_point t_start_, t_phase_;
  std::optional<EvalPhase> phase_ = EvalPhase::kSetup;  // nullopt: the verdict is finished
};

// Whether the baseline's own check leaves `r` to the device data plane (EvalOptions::host_budget_mib).
bool over_host_budget(const EvalSession& s, const ResolvedConfig& r);
// Whether any config this evaluation checks is (then the baseline's check needs a second runner).
bool any_over_host_budget(const EvalSession& s);

// The candidate's outputs (their IPC handles) on config `r` against the reference outputs the oracle
// left in the trusted runner (base/out/<name>), element by element.
Status compare_on_device(EvalSession& s, const ResolvedConfig& r, const std::vector<proto::TensorDesc>& outputs,
                         const std::vector<proto::IpcBuffer>& outputs_ipc);

// This eval's hold on its GPU (util/gpu_lock.h): Exclusive for timing, Shared for correctness
// checks. Waits (saying so once) while another kevo process holds it the other way; the wait goes
// into the verdict's work seconds.
Result<GpuLock> lock_gpu(EvalSession& s, GpuLock::Mode mode);

// The phases, in order; each returns false once the verdict is decided.
bool intake_phase(EvalSession& s);
bool compile_phase(EvalSession& s);
bool oracle_phase(EvalSession& s);
bool load_phase(EvalSession& s);
// Before any candidate draw: a task whose tolerance passes the constant of its reference's mean on
// the smallest visible config (check/tolerance_check.h) is refused, as an error of the task.
bool tolerance_phase(EvalSession& s);
bool correctness_phase(EvalSession& s);
void timing_phase(EvalSession& s);
void sanitize_phase(EvalSession& s);
void profile_phase(EvalSession& s);
void pytorch_phase(EvalSession& s);

}  // namespace kevo
