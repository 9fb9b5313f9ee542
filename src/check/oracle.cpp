#include "check/oracle.h"

#include <fmt/format.h>

#include "check/host_data.h"
#include "check/runner_replies.h"
#include "util/json_fields.h"

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
  Status device_outputs(const Config&, const json&, const json&) override {
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
    json req = base_request(task_, *rc);
    req.update({{"cmd", "run"}, {"slot", "base"}, {"arena_size", p.layout.size}, {"inputs", p.inputs},
                {"outputs", p.outputs}, {"poison", 0}, {"placement", 0}});
    auto r = r_.call(req, timeout_);
    if (!ran_ok(r)) return fail("the baseline (oracle) failed on config '{}': {}", c.name, r ? r->dump() : r.error().message);
    std::vector<Expected> outs;
    for (auto& t : get_outputs(r_.arena(), p.outputs)) {
      if (count_unwritten(t)) return fail("the baseline (oracle) left outputs unwritten on '{}'", c.name);
      outs.push_back(Expected::of(std::move(t)));
    }
    return outs;
  }
  Status device_outputs(const Config& c, const json& gins, const json& outs) override {
    auto rc = task_.resolve(c);
    if (!rc) return rc.unexpected();
    json req = base_request(task_, *rc);
    req.update({{"cmd", "run"}, {"slot", "base"}, {"arena_size", 0}, {"inputs", gins}, {"outputs", outs},
                {"poison", 0}, {"placement", 0}, {"keep", true}});
    auto r = r_.call(req, timeout_);
    if (!ran_ok(r)) return fail("the baseline (oracle) failed on config '{}': {}", c.name, r ? r->dump() : r.error().message);
    return {};
  }
  bool on_device() const override { return true; }

 private:
  static bool ran_ok(const Result<json>& r) {
    return r && r->value("ok", false) && r->value("rc", 0) == 0 && r->value("launch_error", "").empty();
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
  Status device_outputs(const Config& c, const json& gins, const json& outs) override {
    auto m = r_->call({{"cmd", "materialize"}, {"inputs", gins}, {"outputs", outs}}, timeout_);
    if (!m || !m->value("ok", false))
      return fail("the oracle's runner could not draw the inputs of config '{}': {}", c.name,
                  m ? field_or(*m, "error", m->dump()) : m.error().message);
    auto st = oracle_->outputs_into(c, device_tensors(gins, (*m)["inputs_ipc"]), device_tensors(outs, (*m)["outputs_ipc"]),
                                    device_);
    auto col = r_->call({{"cmd", "collect"}, {"outputs", st ? outs : json::array()}}, timeout_);
    if (!st) return fail("the PyTorch reference failed on config '{}': {}", c.name, st.error().message);
    if (!col || !col->value("ok", false))
      return fail("the oracle's runner could not take PyTorch's outputs of config '{}': {}", c.name,
                  col ? field_or(*col, "error", col->dump()) : col.error().message);
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
