// kevo eval --oracle-check: the oracle run twice per config, its outputs checked from outside, then
// PyTorch timed (check/oracle_check.h).
#include "check/oracle_check.h"

#include <fmt/format.h>

#include <cmath>
#include <random>

#include "check/evaluator.h"
#include "check/runner_replies.h"
#include "check/timing.h"
#include "task/draw.h"
#include "task/resolved.h"
#include "torch/torch_timing.h"

namespace kevo {
namespace {
using Clock = std::chrono::steady_clock;

OracleConfigResult failed(const Config& c, OracleCheckReason why, std::string detail) {
  OracleConfigResult r;
  r.config = c.name;
  r.held_out = c.held_out;
  r.reason = why;
  r.detail = std::move(detail);
  return r;
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// An oracle whose bridge died cannot say anything more: that is the infrastructure's failure.
bool bridge_dead(Oracle& o) { return o.bridge() && !o.bridge()->alive(); }

// One output of both runs against the task's declaration, then against each other.
std::optional<OracleConfigResult> judge_output(const Config& c, const ResolvedTensor& out, const Expected& a,
                                               const Expected& b, const Tolerance& tol, double& max_diff) {
  const TensorSpec& spec = *out.spec;
  const int64_t n = out.numel;
  for (const Expected* e : {&a, &b}) {
    if (e->size() != n)
      return failed(c, OracleCheckReason::kShapeMismatch,
                    fmt::format("output '{}' has {} elements, the task declares {}", spec.name, e->size(), n));
    if (e->tensor && e->tensor->dtype != spec.dtype)
      return failed(c, OracleCheckReason::kShapeMismatch,
                    fmt::format("output '{}' is {}, the task declares {}", spec.name, dtype_name(e->tensor->dtype),
                                dtype_name(spec.dtype)));
  }
  int64_t nonfinite = 0, nonzero = 0, differ = 0, first_nf = -1, first_diff = -1;
  for (int64_t j = 0; j < n; ++j) {
    double x = a.at(j), y = b.at(j);
    if (!std::isfinite(x) && nonfinite++ == 0) first_nf = j;
    if (x != 0) ++nonzero;
    bool same = std::isfinite(x) ? std::isfinite(y) && std::fabs(x - y) <= tol.atol + tol.rtol * std::fabs(x)
                                 : (std::isnan(x) ? std::isnan(y) : x == y);
    if (std::isfinite(x) && std::isfinite(y)) max_diff = std::max(max_diff, std::fabs(x - y));
    if (!same && differ++ == 0) first_diff = j;
  }
  if (nonfinite)
    return failed(c, OracleCheckReason::kNonFinite,
                  fmt::format("output '{}': {} of {} elements are NaN or Inf (first at flat index {})", spec.name,
                              nonfinite, n, first_nf));
  if (n > 0 && nonzero == 0)
    return failed(c, OracleCheckReason::kAllZero, fmt::format("output '{}': all {} elements are zero", spec.name, n));
  if (differ)
    return failed(c, OracleCheckReason::kNondeterministic,
                  fmt::format("output '{}': a second run on the same inputs differs in {} of {} elements beyond "
                              "atol {} rtol {} (first at flat index {}: {} then {})",
                              spec.name, differ, n, tol.atol, tol.rtol, first_diff, a.at(first_diff), b.at(first_diff)));
  return std::nullopt;
}

OracleConfigResult judge_resolved(const ResolvedConfig& rc, const std::vector<Expected>& first,
                                  const std::vector<Expected>& second, const Tolerance& tol) {
  const Config& c = *rc.config;
  if (first.size() != rc.outputs.size() || second.size() != rc.outputs.size())
    return failed(c, OracleCheckReason::kShapeMismatch,
                  fmt::format("the oracle returns {} outputs (then {}), the task declares {}", first.size(),
                              second.size(), rc.outputs.size()));
  OracleConfigResult ok = failed(c, OracleCheckReason::kOk, "");
  for (size_t i = 0; i < first.size(); ++i)
    if (auto bad = judge_output(c, rc.outputs[i], first[i], second[i], tol, ok.max_abs_diff)) {
      bad->max_abs_diff = ok.max_abs_diff;
      return *bad;
    }
  return ok;
}

OracleConfigResult check_config_host(Oracle& o, const Task& task, const Config& c, uint64_t seed) {
  auto rc = task.resolve(c);
  if (!rc) return failed(c, OracleCheckReason::kOracleFailed, rc.error().message);
  auto ins = generate_inputs(*rc, seed, false);
  if (!ins) return failed(c, OracleCheckReason::kOracleFailed, ins.error().message);
  auto t0 = Clock::now();
  auto first = o.host_outputs(c, *ins);
  auto second = first ? o.host_outputs(c, *ins) : Result<std::vector<Expected>>(first.unexpected());
  double secs = seconds_since(t0);
  if (!second) {
    auto r = failed(c, bridge_dead(o) ? OracleCheckReason::kInfraError : OracleCheckReason::kOracleFailed,
                    second.error().message);
    r.oracle_seconds = secs;
    return r;
  }
  auto r = judge_resolved(*rc, *first, *second, rc->tolerance);
  r.oracle_seconds = secs;
  return r;
}

bool selected(const Config& c, const OracleCheckOptions& o) {
  return !((o.visible_only && c.held_out) || (o.held_out_only && !c.held_out));
}

uint64_t config_seed(const Task& task, const Config& c, uint64_t seed) {
  return seed + 1000003ull * static_cast<uint64_t>(&c - task.configs.data());
}

}  // namespace

OracleConfigResult judge_oracle_outputs(const Task& task, const Config& c, const std::vector<Expected>& first,
                                        const std::vector<Expected>& second, const Tolerance& tol) {
  auto rc = task.resolve(c);
  if (!rc) return failed(c, OracleCheckReason::kOracleFailed, rc.error().message);
  return judge_resolved(*rc, first, second, tol);
}

std::vector<OracleConfigResult> check_configs_on_host(const Task& task, const OracleCheckOptions& opts, uint64_t seed,
                                                      const OracleFactory& make) {
  std::vector<OracleConfigResult> out;
  std::unique_ptr<Oracle> oracle;
  for (const Config& c : task.configs) {
    if (!selected(c, opts)) continue;
    if (!oracle) {  // first, or after the infrastructure failed: a fresh one
      auto o = make();
      if (!o) {
        out.push_back(failed(c, OracleCheckReason::kInfraError, "cannot start the oracle: " + o.error().message));
        continue;
      }
      oracle = std::move(*o);
    }
    out.push_back(check_config_host(*oracle, task, c, config_seed(task, c, seed)));
    if (out.back().reason == OracleCheckReason::kInfraError) oracle.reset();
  }
  return out;
}

// ---- the device data plane (PyTorch) ----
namespace {

// The trusted runner the evaluator's PyTorch oracle uses, and a second one that lends the same
// draw for the second run: the two outputs then lie in different processes, so the trusted runner
// compares them through CUDA IPC as it compares a candidate's.
struct DeviceRig {
  std::unique_ptr<RunnerClient> trusted, lender;
  std::unique_ptr<Oracle> oracle;
};

Result<std::unique_ptr<RunnerClient>> gpu_runner(const OracleCheckOptions& opts) {
  EvalOptions eo;
  eo.gpu = opts.gpu;
  auto r = RunnerClient::start(runner_options(eo));
  if (!r) return r.unexpected();
  auto h = (*r)->call(proto::HelloRequest{}, std::chrono::seconds(60));
  if (h.refusal()) return fail("no usable GPU: {}", h.error().message);
  if (!h) return h.unexpected();
  return std::move(*r);
}

Result<DeviceRig> make_rig(const Task& task, const OracleCheckOptions& opts, const std::string& device) {
  DeviceRig rig;
  auto t = gpu_runner(opts);
  if (!t) return t.unexpected();
  auto l = gpu_runner(opts);
  if (!l) return l.unexpected();
  rig.trusted = std::move(*t);
  rig.lender = std::move(*l);
  auto b = torch::TorchBridge::start();
  if (!b) return fail("cannot start the PyTorch bridge: {}", b.error().message);
  if (device == "cuda" && !b->info().cuda) return fail("the bridge's torch {} has no CUDA", b->info().torch);
  Status err;
  rig.oracle = make_torch_oracle(std::move(*b), task, rig.trusted.get(), device, opts.call_timeout, &err);
  if (!rig.oracle) return err.unexpected();
  return rig;
}

bool rig_alive(DeviceRig& rig) { return rig.trusted->alive() && rig.lender->alive() && !bridge_dead(*rig.oracle); }

// Descriptors of all-zero tensors shaped as the outputs (a uniform draw of half-width 0), drawn into
// the trusted runner's base/in/zero_<name>: comparing an output with them at zero tolerance counts
// its NaN/Inf (nonfinite), its untouched poison (unwritten) and its non-zero elements (mismatches).
std::vector<proto::TensorDesc> zero_descs(const std::vector<proto::TensorDesc>& outs) {
  std::vector<proto::TensorDesc> z;
  for (const auto& d : outs) {
    proto::Gen zero;
    zero.kind = kDrawUniform, zero.a = 0.0, zero.b = 0.0;
    z.push_back({"zero_" + d.name, d.dtype, d.shape, d.numel, d.nbytes, 0, zero});
  }
  return z;
}

// The lent outputs (run 2) against `ref_prefix`<name> in the trusted runner, at (atol, rtol).
Result<std::vector<Comparison>> compare_lent(DeviceRig& rig, const std::vector<proto::TensorDesc>& outs,
                                             const std::vector<std::string>& ipc, const std::string& ref_prefix,
                                             double atol, double rtol, std::chrono::milliseconds timeout) {
  if (ipc.size() != outs.size()) return fail("the second runner lent {} buffers for {} outputs", ipc.size(), outs.size());
  proto::CompareRequest q{atol, rtol};
  for (size_t i = 0; i < outs.size(); ++i)
    q.outputs.push_back({proto::IpcBuffer{ipc[i], 0}, outs[i].dtype, std::nullopt, outs[i].numel, outs[i].nbytes, ref_prefix + outs[i].name,
                         outs[i].nbytes, true});
  auto r = rig.trusted->call(q, timeout);
  if (!r) return fail("the oracle's runner could not compare the two runs: {}", r.error().message);
  if (!r->out_of_bounds.empty()) return fail("the oracle's runner could not map a lent buffer: {}", r->out_of_bounds);
  if (r->outputs.size() != outs.size())
    return fail("the oracle's runner compared {} of {} outputs", r->outputs.size(), outs.size());
  std::vector<Comparison> cmps;
  for (const auto& o : r->outputs) cmps.push_back(comparison_of(o.cmp));
  return cmps;
}

std::optional<OracleConfigResult> judge_device(const Config& c, const std::vector<proto::TensorDesc>& outs,
                                               const std::vector<Comparison>& vs_zero,
                                               const std::vector<Comparison>& vs_first, const Tolerance& tol, double& max_diff) {
  for (size_t i = 0; i < outs.size(); ++i) {
    const std::string& name = outs[i].name;
    const auto& shape = outs[i].shape;
    const Comparison &z = vs_zero.at(i), &f = vs_first.at(i);
    max_diff = std::max(max_diff, f.max_abs_err);
    if (z.unwritten)
      return failed(c, OracleCheckReason::kUnwritten,
                    fmt::format("output '{}': {} of {} elements of the lent buffer left unwritten", name, z.unwritten, z.count));
    if (z.nonfinite)
      return failed(c, OracleCheckReason::kNonFinite,
                    fmt::format("output '{}': {} of {} elements are NaN or Inf", name, z.nonfinite, z.count));
    if (z.count > 0 && z.mismatches == 0)
      return failed(c, OracleCheckReason::kAllZero, fmt::format("output '{}': all {} elements are zero", name, z.count));
    if (!f.ok)
      return failed(c, OracleCheckReason::kNondeterministic,
                    fmt::format("output '{}': a second run on the same inputs disagrees (atol {} rtol {}): {}", name,
                                tol.atol, tol.rtol, f.describe(shape)));
  }
  return std::nullopt;
}

// Run 1 through Oracle::device_outputs (the evaluator's path: the trusted runner draws and lends);
// run 2 on the lender's copy of the same draw; then both compared in the trusted runner.
OracleConfigResult check_config_device(DeviceRig& rig, const Task& task, const Config& c, uint64_t seed,
                                       const OracleCheckOptions& opts) {
  const auto timeout = opts.call_timeout;
  auto rc = task.resolve(c);
  if (!rc) return failed(c, OracleCheckReason::kOracleFailed, rc.error().message);
  const Tolerance& tol = rc->tolerance;
  auto gins = drawn_inputs(*rc, seed, false);
  if (!gins) return failed(c, OracleCheckReason::kOracleFailed, gins.error().message);
  const std::vector<proto::TensorDesc> outs = output_descs(*rc);
  auto why = [&] { return rig_alive(rig) ? OracleCheckReason::kOracleFailed : OracleCheckReason::kInfraError; };
  auto t0 = Clock::now();
  if (auto st = rig.oracle->device_outputs(c, *gins, outs); !st) return failed(c, why(), st.error().message);
  auto m = rig.lender->call(proto::MaterializeRequest{*gins, outs}, timeout);
  if (!m)
    return failed(c, OracleCheckReason::kInfraError,
                  fmt::format("the second runner could not draw the inputs of config '{}': {}", c.name, m.error().message));
  auto lent_ins = device_tensors(*gins, m->inputs_ipc);
  auto lent_outs = device_tensors(outs, m->outputs_ipc);
  if (!lent_ins || !lent_outs)
    return failed(c, OracleCheckReason::kInfraError,
                  fmt::format("the second runner, config '{}': {}", c.name,
                              (!lent_ins ? lent_ins.error() : lent_outs.error()).message));
  auto st = rig.oracle->lent_outputs(c, *lent_ins, *lent_outs);
  double secs = seconds_since(t0);
  Result<std::vector<Comparison>> vs_zero = fail("not compared"), vs_first = fail("not compared");
  if (st) {
    auto z = rig.trusted->call(proto::MaterializeRequest{zero_descs(outs), {}}, timeout);
    if (!z)
      vs_zero = fail("the oracle's runner could not make zero tensors: {}", z.error().message);
    else
      vs_zero = compare_lent(rig, outs, m->outputs_ipc, "base/in/zero_", 0.0, 0.0, timeout);
    if (vs_zero) vs_first = compare_lent(rig, outs, m->outputs_ipc, "base/out/", tol.atol, tol.rtol, timeout);
  }
  // What was drawn and lent for this config is freed before the next.
  (void)rig.lender->call(proto::CollectRequest{}, timeout);
  (void)rig.trusted->call(proto::ReleaseRequest{{"base/", "xfer/"}}, timeout);
  OracleConfigResult r = !st ? failed(c, why(), st.error().message)
                         : !vs_zero ? failed(c, OracleCheckReason::kInfraError, vs_zero.error().message)
                         : !vs_first ? failed(c, OracleCheckReason::kInfraError, vs_first.error().message)
                                     : failed(c, OracleCheckReason::kOk, "");
  if (r.ok())
    if (auto bad = judge_device(c, outs, *vs_zero, *vs_first, tol, r.max_abs_diff)) {
      bad->max_abs_diff = r.max_abs_diff;
      r = *bad;
    }
  r.oracle_seconds = secs;
  return r;
}

std::vector<OracleConfigResult> check_configs_on_device(const Task& task, const OracleCheckOptions& opts, uint64_t seed,
                                                        const std::string& device, std::optional<DeviceRig> rig) {
  std::vector<OracleConfigResult> out;
  for (const Config& c : task.configs) {
    if (!selected(c, opts)) continue;
    if (!rig) {  // after the infrastructure failed: fresh processes
      auto r = make_rig(task, opts, device);
      if (!r) {
        out.push_back(failed(c, OracleCheckReason::kInfraError, "cannot start the oracle: " + r.error().message));
        continue;
      }
      rig.emplace(std::move(*r));
    }
    out.push_back(check_config_device(*rig, task, c, config_seed(task, c, seed), opts));
    if (out.back().reason == OracleCheckReason::kInfraError) rig.reset();
  }
  return out;
}

Result<std::unique_ptr<Oracle>> make_reference_oracle(const Task& task) {
  auto ref = CpuReference::compile(task);
  if (!ref) return ref.unexpected();
  return make_cpu_oracle(task, std::move(*ref));
}

void time_pytorch(const Task& task, const OracleCheckOptions& opts, const std::string& device, OracleCheckReport& rep) {
  if (!opts.torch_time) return;
  if (task.torch_reference.empty()) {
    rep.pytorch_note = "the task has no torch_reference";
    return;
  }
  torch::TorchTimingOptions to;
  to.device = device;
  to.budget_s = opts.time_budget_s;
  to.extension = false;
  uint64_t seed = rep.seed + kTimingSeedOffset;  // the evaluator's PyTorch timing draw
  auto r = rep.device_plane ? time_torch_lent(task, seed, to) : torch::time_torch_main(task, seed, to);
  if (r) rep.pytorch = std::move(*r);
  else rep.pytorch_note = r.error().message.substr(0, r.error().message.find('\n'));
}

}  // namespace

OracleCheckReport check_oracle(const Task& task, const OracleCheckOptions& opts) {
  auto t0 = Clock::now();
  OracleCheckReport rep;
  rep.task = task.name;
  rep.seed = opts.seed ? *opts.seed : (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  rep.oracle = task.oracle_is_torch ? "torch" : "reference";
  std::string device = opts.torch_device;
  if (task.oracle_is_torch) {
    // The device data plane needs a GPU for the runners and CUDA in the bridge's torch.
    std::optional<DeviceRig> rig;
    if (opts.device_data) {
      auto r = make_rig(task, opts, device.empty() ? "cuda" : device);
      if (r) rig.emplace(std::move(*r));
      else rep.host_path_why = r.error().message.substr(0, r.error().message.find('\n'));
    } else {
      rep.host_path_why = "asked for (--host-data)";
    }
    rep.device_plane = rig.has_value();
    if (rig) {
      if (device.empty()) device = "cuda";
      rep.configs = check_configs_on_device(task, opts, rep.seed, device, std::move(rig));
    } else {
      rep.configs = check_configs_on_host(task, opts, rep.seed, [&]() -> Result<std::unique_ptr<Oracle>> {
        auto br = torch::TorchBridge::start();
        if (!br) return fail("cannot start the PyTorch bridge: {}", br.error().message);
        if (device.empty()) device = br->info().cuda ? "cuda" : "cpu";  // where its torch can run
        Status err;
        auto o = make_torch_oracle(std::move(*br), task, nullptr, device, opts.call_timeout, &err);
        if (!o) return err.unexpected();
        return o;
      });
    }
  } else {
    rep.host_path_why = "the oracle is the task's CPU reference";
    rep.configs = check_configs_on_host(task, opts, rep.seed, [&] { return make_reference_oracle(task); });
  }
  if (device.empty()) device = "cuda";
  time_pytorch(task, opts, device, rep);
  rep.seconds = seconds_since(t0);
  return rep;
}

}  // namespace kevo
