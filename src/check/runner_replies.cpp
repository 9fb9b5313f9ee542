#include "check/runner_replies.h"

#include <algorithm>
#include <csignal>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "run/protocol.h"
#include "task/tensor.h"

namespace kevo {
using namespace std::chrono_literals;

proto::CallArgs call_args(const Task& task, const ResolvedConfig& r) {
  proto::CallArgs a;
  for (const auto& s : task.scalars) a.scalars.push_back(s.value);
  a.dims = r.dims;
  a.workspace_bytes = r.workspace_bytes;
  return a;
}

Reason fatal_cuda_reason(int cuda_error) {
  // What a fatal CUDA error means for the verdict; a number not listed is kCudaError.
  struct Meaning {
    int cuda_error;
    Reason reason;
  };
  static constexpr Meaning kMeanings[] = {
      {kCudaErrorIllegalAddress, Reason::kIllegalAddress},
      {kCudaErrorIllegalInstruction, Reason::kIllegalAddress},
      {kCudaErrorMisalignedAddress, Reason::kIllegalAddress},
  };
  for (const auto& m : kMeanings)
    if (m.cuda_error == cuda_error) return m.reason;
  return Reason::kCudaError;
}

void classify_death(Verdict& v, RunnerClient& r, const proto::ErrorReply* refusal, const std::string& what) {
  if (refusal && refusal->fatal) {
    v.set(Outcome::Crash, fatal_cuda_reason(refusal->cuda_error), fmt::format("{}: {}", what, refusal->error));
    return;
  }
  if (!r.death()) {
    v.set(Outcome::InfraError, Reason::kRunner, fmt::format("{}: the runner failed without dying", what));
    return;
  }
  const RunnerDeath& d = *r.death();
  std::string tail = d.stderr_tail.size() > 600 ? d.stderr_tail.substr(d.stderr_tail.size() - 600) : d.stderr_tail;
  std::string msg = fmt::format("{}: the candidate process {}{}", what, d.description,
                                tail.empty() ? "" : "; its last output: " + tail);
  switch (d.kind) {
    case RunnerDeath::Kind::Timeout:
      v.set(Outcome::Timeout, Reason::kTimeout, msg);
      break;
    case RunnerDeath::Kind::Signal:
      v.set(Outcome::Crash, d.signal == SIGABRT ? Reason::kAbort : Reason::kSignal, msg);
      break;
    case RunnerDeath::Kind::Exited:
      v.set(Outcome::Crash, Reason::kExit, msg + " (the candidate ended the process)");
      break;
    case RunnerDeath::Kind::Lost:
      v.set(Outcome::InfraError, Reason::kRunner, msg);
      break;
  }
}

void quiet_gpu() {
  if (!RunnerClient::wait_reaped(std::chrono::seconds(5)))
    spdlog::warn("runner processes of an earlier evaluation are still exiting; timing anyway");
}

double hidden_ms(double after_stream_ms, double after_stream_cpu_ms) {
  return std::min(after_stream_ms, after_stream_cpu_ms);
}

GuardReport GuardReport::of(const proto::RunReply& r) {
  return {r.violations, r.threads_before,     r.threads_after,       r.launch_error, {r.rc},
          r.span_ms,    r.after_stream_ms,    r.after_stream_cpu_ms, "call"};
}

GuardReport GuardReport::of(const proto::TimeBatchReply& r) {
  return {r.violations, r.threads_before,     r.threads_after,       r.launch_error, r.rc,
          r.span_ms,    r.after_stream_ms,    r.after_stream_cpu_ms, "timed batch"};
}

bool check_guards(Verdict& v, const GuardReport& g, const std::string& where) {
  for (const auto& x : g.violations) {
    const Reason kind = violation_reason(x.kind);
    v.flags.push_back({kind, where + ": " + x.detail});
    v.set(Outcome::Unsafe, kind, where + ": " + x.detail);
  }
  if (g.threads_after > g.threads_before) {
    std::string d = fmt::format("{}: the process had {} threads before the {} and {} after: the candidate left a "
                                "host thread running",
                                where, g.threads_before, g.unit, g.threads_after);
    v.flags.push_back({Reason::kHostThread, d});
    v.set(Outcome::Unsafe, Reason::kHostThread, d);
  }
  if (!g.launch_error.empty()) v.set(Outcome::Crash, Reason::kLaunchError, where + ": " + g.launch_error);
  for (int rc : g.rc)
    if (rc != 0) v.set(Outcome::Crash, Reason::kReturnedError, fmt::format("{}: kevo_forward returned {}", where, rc));
  // Work the device-wide sync still waited for once the given stream was idle ran elsewhere.
  if (const double after = hidden_ms(g.after_stream_ms, g.after_stream_cpu_ms); after > kHiddenWorkMs) {
    std::string d = fmt::format("{}: the device stayed busy {:.2f} ms after the {} on the given stream finished "
                                "({:.2f} ms of work)",
                                where, after, g.unit, g.span_ms);
    v.flags.push_back({Reason::kHiddenWork, d});
    v.set(Outcome::Unsafe, Reason::kHiddenWork, d);
  }
  return v.outcome == Outcome::Pass;
}

Result<std::vector<proto::TensorDesc>> drawn_inputs(const ResolvedConfig& r, uint64_t seed, bool wide) {
  std::vector<proto::TensorDesc> descs;
  for (const auto& in : r.inputs) {
    auto d = draw_spec(*in.spec, r.config->dims, seed, wide);
    if (!d) return d.unexpected();
    descs.push_back({in.name(), static_cast<int>(in.dtype()), in.shape, in.numel, in.nbytes, 0, proto::Gen::of(*d)});
  }
  return descs;
}

std::vector<proto::TensorDesc> output_descs(const ResolvedConfig& r) {
  std::vector<proto::TensorDesc> descs;
  for (const auto& o : r.outputs)
    descs.push_back({o.name(), static_cast<int>(o.dtype()), o.shape, o.numel, o.nbytes, 0, std::nullopt});
  return descs;
}

Result<std::vector<torch::DeviceTensor>> device_tensors(const std::vector<proto::TensorDesc>& descs,
                                                          const std::vector<std::string>& ipc) {
  if (ipc.size() != descs.size()) return fail("the runner lent {} buffers for {} tensors", ipc.size(), descs.size());
  std::vector<torch::DeviceTensor> out;
  for (size_t i = 0; i < descs.size(); ++i)
    out.push_back({descs[i].name, static_cast<DType>(descs[i].dtype), descs[i].shape, ipc[i]});
  return out;
}

Reason violation_reason(std::string_view kind) {
  for (Reason r : {Reason::kForeignStream, Reason::kStreamCreated, Reason::kAllocLimit, Reason::kHiddenWork})
    if (to_string(r) == kind) return r;
  return Reason::kGuard;
}

Comparison comparison_of(const proto::CompareCounts& j, Reason fail_reason) {
  Comparison c;
  c.count = j.count;
  c.mismatches = j.mismatches;
  c.unwritten = j.unwritten;
  c.nonfinite = j.nonfinite;
  c.first_bad = j.first_bad;
  c.first_got = j.first_got;
  c.first_want = j.first_want;
  c.max_abs_err = j.max_abs_err;
  c.max_rel_err = j.max_rel_err;
  c.ok = c.mismatches == 0;
  if (!c.ok)
    c.reason = fail_reason != Reason::kNone ? fail_reason
               : c.unwritten                ? Reason::kUnwritten
               : c.nonfinite                ? Reason::kNan
                                            : Reason::kMismatch;
  return c;
}

std::string arch_from_hello(const proto::HelloReply& h) {
  return fmt::format("sm_{}{}", h.cc_major, h.cc_minor);
}

}  // namespace kevo
