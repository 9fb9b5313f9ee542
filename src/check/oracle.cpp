#include "check/oracle.h"

#include <fmt/format.h>

#include "check/host_data.h"
#include "check/runner_replies.h"

namespace kevo {
namespace {

class CpuOracle : public Oracle {
 public:
  CpuOracle(const Task& t, CpuReference r) : task_(t), ref_(std::move(r)) {}
  Result<std::vector<Expected>> host_outputs(const Config& c, const std::vector<HostTensor>& ins) override {
    auto d = ref_.run(task_, c, ins);
    if (!d) return d.unexpected();
    std::vector<Expected> outs;
    for (auto& v : *d) outs.push_back(Expected::of(std::move(v)));
    return outs;
  }
  Status device_outputs(const Config&, const std::vector<proto::TensorDesc>&,
                        const std::vector<proto::TensorDesc>&) override {
    return fail("the CPU reference has no device data plane");
  }
  bool on_device() const override { return false; }

 private:
  const Task& task_;
  CpuReference ref_;
};

class BaselineOracle : public Oracle {
 public:
  BaselineOracle(const Task& t, RunnerClient& r, std::chrono::milliseconds timeout) : task_(t), r_(r), timeout_(timeout) {}
  Result<std::vector<Expected>> host_outputs(const Config& c, const std::vector<HostTensor>& ins) override {
    auto rc = task_.resolve(c);
    if (!rc) return rc.unexpected();
    const Prepared p = prepare(*rc, ins, false);
    KEVO_TRY(r_.arena().resize(p.layout.size));
    put_inputs(r_.arena(), p.inputs, ins);
    proto::RunRequest req{call_args(task_, *rc)};
    req.slot = "base";
    req.arena_size = p.layout.size;
    req.inputs = p.inputs;
    req.outputs = p.outputs;
    auto r = r_.call(req, timeout_);
    if (auto why = failure(r)) return fail("the baseline (oracle) failed on config '{}': {}", c.name, *why);
    std::vector<Expected> outs;
    for (auto& t : get_outputs(r_.arena(), p.outputs)) {
      if (count_unwritten(t)) return fail("the baseline (oracle) left outputs unwritten on '{}'", c.name);
      outs.push_back(Expected::of(std::move(t)));
    }
    return outs;
  }
  Status device_outputs(const Config& c, const std::vector<proto::TensorDesc>& gins,
                        const std::vector<proto::TensorDesc>& outs) override {
    auto rc = task_.resolve(c);
    if (!rc) return rc.unexpected();
    proto::RunRequest req{call_args(task_, *rc)};
    req.slot = "base";
    req.inputs = gins;
    req.outputs = outs;
    req.keep = true;
    auto r = r_.call(req, timeout_);
    if (auto why = failure(r)) return fail("the baseline (oracle) failed on config '{}': {}", c.name, *why);
    return {};
  }
  bool on_device() const override { return true; }

 private:
  // Why the baseline's call failed (its reply, or why there was none); nullopt when it ran cleanly.
  static std::optional<std::string> failure(const CallResult<proto::RunReply>& r) {
    if (!r) return r.error().message;
    if (r->rc != 0 || !r->launch_error.empty()) return json(*r).dump();
    return std::nullopt;
  }
  const Task& task_;
  RunnerClient& r_;
  std::chrono::milliseconds timeout_;
};

// The bridge and its oracle live together: the oracle points into the bridge.
class TorchOracleImpl : public Oracle {
 public:
  TorchOracleImpl(torch::TorchBridge b, RunnerClient* r, std::string device, std::chrono::milliseconds timeout)
      : bridge_(std::move(b)), r_(r), device_(std::move(device)), timeout_(timeout) {}
  Status init(const Task& task) {
    auto o = torch::TorchOracle::create(bridge_, task, task.torch_reference_path());
    if (!o) return o.unexpected();
    oracle_.emplace(std::move(*o));
    return {};
  }
  Result<std::vector<Expected>> host_outputs(const Config& c, const std::vector<HostTensor>& ins) override {
    auto outs = oracle_->outputs(c, ins, device_);
    if (!outs) return fail("the PyTorch reference failed on config '{}': {}", c.name, outs.error().message);
    std::vector<Expected> e;
    for (auto& t : *outs) e.push_back(Expected::of(std::move(t)));
    return e;
  }
  // The trusted runner draws the inputs and lends copies (and output buffers) to the bridge, which
  // runs the module on them in place; `collect` makes its outputs the runner's base/out/<name>.
  Status device_outputs(const Config& c, const std::vector<proto::TensorDesc>& gins,
                        const std::vector<proto::TensorDesc>& outs) override {
    auto m = r_->call(proto::MaterializeRequest{gins, outs}, timeout_);
    if (!m)
      return fail("the oracle's runner could not draw the inputs of config '{}': {}", c.name, m.error().message);
    auto lent_ins = device_tensors(gins, m->inputs_ipc);
    auto lent_outs = device_tensors(outs, m->outputs_ipc);
    Status st = !lent_ins ? lent_ins.unexpected() : !lent_outs ? lent_outs.unexpected()
                                                               : oracle_->outputs_into(c, *lent_ins, *lent_outs, device_);
    auto col = r_->call(proto::CollectRequest{st ? outs : std::vector<proto::TensorDesc>{}}, timeout_);
    if (!st) return fail("the PyTorch reference failed on config '{}': {}", c.name, st.error().message);
    if (!col)
      return fail("the oracle's runner could not take PyTorch's outputs of config '{}': {}", c.name,
                  col.error().message);
    return {};
  }
  Status lent_outputs(const Config& c, const std::vector<torch::DeviceTensor>& ins,
                      const std::vector<torch::DeviceTensor>& outs) override {
    if (auto st = oracle_->outputs_into(c, ins, outs, device_); !st)
      return fail("the PyTorch reference failed on config '{}' (lent buffers): {}", c.name, st.error().message);
    return {};
  }
  bool on_device() const override { return r_ != nullptr; }
  torch::TorchBridge* bridge() override { return &bridge_; }

 private:
  torch::TorchBridge bridge_;
  std::optional<torch::TorchOracle> oracle_;
  RunnerClient* r_;
  std::string device_;
  std::chrono::milliseconds timeout_;
};

}  // namespace

std::unique_ptr<Oracle> make_cpu_oracle(const Task& task, CpuReference ref) {
  return std::make_unique<CpuOracle>(task, std::move(ref));
}

std::unique_ptr<Oracle> make_baseline_oracle(const Task& task, RunnerClient& trusted, std::chrono::milliseconds timeout) {
  return std::make_unique<BaselineOracle>(task, trusted, timeout);
}

std::unique_ptr<Oracle> make_torch_oracle(torch::TorchBridge bridge, const Task& task, RunnerClient* trusted,
                                          std::string device, std::chrono::milliseconds timeout, Status* error) {
  auto o = std::make_unique<TorchOracleImpl>(std::move(bridge), trusted, std::move(device), timeout);
  if (auto st = o->init(task); !st) {
    *error = st;
    return nullptr;
  }
  return o;
}

}  // namespace kevo
