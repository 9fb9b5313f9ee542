#include "check/runner_replies.h"

#include <algorithm>
#include <cmath>
#include <csignal>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "run/protocol.h"
#include "task/tensor.h"
#include "util/json_fields.h"

namespace kevo {
using namespace std::chrono_literals;

json base_request(const Task& task, const ResolvedConfig& r) {
  std::vector<double> scalars;
  for (const auto& s : task.scalars) scalars.push_back(s.value);
  return {{"dims", r.dims}, {"scalars", scalars}, {"workspace_bytes", r.workspace_bytes}};
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

void classify_death(Verdict& v, RunnerClient& r, const json* reply, const std::string& what) {
  if (reply) {
    auto e = proto::decode<proto::ErrorReply>(*reply, "runner reply");
    if (e && e->fatal) {
      v.set(Outcome::Crash, fatal_cuda_reason(e->cuda_error), fmt::format("{}: {}", what, e->error));
      return;
    }
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
  }
}

void quiet_gpu() {
  if (!RunnerClient::wait_reaped(std::chrono::seconds(5)))
    spdlog::warn("runner processes of an earlier evaluation are still exiting; timing anyway");
}

double hidden_ms(double after_stream_ms, double after_stream_cpu_ms) {
  return std::min(after_stream_ms, after_stream_cpu_ms);
}

bool check_run_reply(Verdict& v, const json& r, const std::string& where, bool check_hidden) {
  for (const auto& x : r.value("violations", json::array())) {
    const Reason kind = violation_reason(x.value("kind", "guard"));
    v.flags.push_back({kind, where + ": " + x.value("detail", "")});
    v.set(Outcome::Unsafe, kind, where + ": " + x.value("detail", ""));
  }
  if (r.value("threads_after", 0) > r.value("threads_before", 0)) {
    std::string d = fmt::format("{}: the process had {} threads before the call and {} after: the "
                                "candidate left a host thread running",
                                where, r.value("threads_before", 0), r.value("threads_after", 0));
    v.flags.push_back({Reason::kHostThread, d});
    v.set(Outcome::Unsafe, Reason::kHostThread, d);
  }
  std::string le = r.value("launch_error", "");
  if (!le.empty()) v.set(Outcome::Crash, Reason::kLaunchError, where + ": " + le);
  if (r.value("rc", 0) != 0)
    v.set(Outcome::Crash, Reason::kReturnedError,
          fmt::format("{}: kevo_forward returned {}", where, r.value("rc", 0)));
  if (check_hidden) {
    double span = r.value("span_ms", 0.0);
    double wall = r.value("after_stream_ms", 0.0), after = hidden_ms(wall, r.value("after_stream_cpu_ms", wall));
    // Work the device-wide sync still waited for once the given stream was idle ran elsewhere.
    if (after > kHiddenWorkMs) {
      std::string d = fmt::format("{}: the device stayed busy {:.2f} ms after the given stream "
                                  "finished its {:.2f} ms of work",
                                  where, after, span);
      v.flags.push_back({Reason::kHiddenWork, d});
      v.set(Outcome::Unsafe, Reason::kHiddenWork, d);
    }
  }
  return v.outcome == Outcome::Pass;
}

Result<json> drawn_inputs(const ResolvedConfig& r, uint64_t seed, bool wide) {
  json arr = json::array();
  for (const auto& in : r.inputs) {
    auto d = draw_spec(*in.spec, r.config->dims, seed, wide);
    if (!d) return d.unexpected();
    arr.push_back({{"name", in.name()},
                   {"dtype", static_cast<int>(in.dtype())},
                   {"shape", in.shape},
                   {"nbytes", in.nbytes},
                   {"gen", proto::Gen::of(*d)}});
  }
  return arr;
}

json output_descs(const ResolvedConfig& r) {
  json arr = json::array();
  for (const auto& o : r.outputs)
    arr.push_back({{"name", o.name()}, {"dtype", static_cast<int>(o.dtype())}, {"shape", o.shape},
                   {"numel", o.numel}, {"nbytes", o.nbytes}});
  return arr;
}

std::vector<torch::DeviceTensor> device_tensors(const json& descs, const json& ipc) {
  std::vector<torch::DeviceTensor> out;
  for (size_t i = 0; i < descs.size(); ++i)
    out.push_back({descs[i].at("name").get<std::string>(), static_cast<DType>(descs[i].at("dtype").get<int>()),
                   descs[i].at("shape").get<std::vector<int64_t>>(), ipc.at(i).get<std::string>()});
  return out;
}

Reason violation_reason(std::string_view kind) {
  for (Reason r : {Reason::kForeignStream, Reason::kStreamCreated, Reason::kAllocLimit, Reason::kHiddenWork})
    if (to_string(r) == kind) return r;
  return Reason::kGuard;
}

Comparison comparison_of(const json& j, Reason fail_reason) {
  // Non-finite values travel as "nan", "inf", "-inf" (JSON has no such numbers).
  auto num = [&](const char* k) {
    if (!j.contains(k)) return 0.0;
    const json& x = j[k];
    if (x.is_number()) return x.get<double>();
    std::string t = x.is_string() ? x.get<std::string>() : "nan";
    return t == "inf" ? HUGE_VAL : t == "-inf" ? -HUGE_VAL : std::nan("");
  };
  Comparison c;
  c.count = j.value("count", int64_t(0));
  c.mismatches = j.value("mismatches", int64_t(0));
  c.unwritten = j.value("unwritten", int64_t(0));
  c.nonfinite = j.value("nonfinite", int64_t(0));
  c.first_bad = j.value("first_bad", int64_t(-1));
  c.first_got = num("first_got");
  c.first_want = num("first_want");
  c.max_abs_err = num("max_abs_err");
  c.max_rel_err = num("max_rel_err");
  c.ok = c.mismatches == 0;
  if (!c.ok)
    c.reason = fail_reason != Reason::kNone ? fail_reason
               : c.unwritten                ? Reason::kUnwritten
               : c.nonfinite                ? Reason::kNan
                                            : Reason::kMismatch;
  return c;
}

std::string arch_from_hello(const json& h) {
  return fmt::format("sm_{}{}", h.value("cc_major", 9), h.value("cc_minor", 0));
}

}  // namespace kevo
