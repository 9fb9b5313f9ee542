#include "torch/torch_timing.h"

#include <functional>
#include <optional>

#include "torch/oracle.h"
#include "util/fs.h"

namespace kevo::torch {

bool torch_unavailable(const Error& e) { return e.code == ErrorCode::kNoTorch || e.code == ErrorCode::kNoCuda; }

namespace {

// One mode's `time` request on the caller's inputs (files or handles).
using TimeCall = std::function<Result<TimeResult>(TorchBridge&, const std::map<std::string, double>&,
                                                  const TimeOptions&)>;

Result<TimeResult> time_modes(const Task& task, const TimeCall& call, const TorchTimingOptions& o,
                              TorchBridge* shared) {
  if (task.torch_reference.empty())
    return fail("task '{}' has no torch_reference: it has no PyTorch side to time", task.name);
  if (task.configs.empty()) return fail("task '{}' has no configs", task.name);
  auto size_dims = torch_size_dims(task);
  if (!size_dims) return size_dims.unexpected();
  const Config& main = task.main();
  std::map<std::string, int64_t> dims;
  for (const auto& d : *size_dims) {
    auto it = main.dims.find(d);
    if (it == main.dims.end())
      return fail("task '{}': torch.json names size '{}', which config '{}' does not set", task.name, d, main.name);
    dims[d] = it->second;
  }
  std::map<std::string, double> scalars;
  for (const auto& s : task.scalars) scalars[s.name] = s.value;
  const bool cuda = o.device.starts_with("cuda");

  // The bridge to use: the caller's, or one started here (again after a mode killed it).
  std::optional<TorchBridge> own;
  TorchBridge* b = shared;
  bool loaded = false;
  auto ready = [&]() -> Status {
    if (!b || !b->alive()) {
      auto nb = TorchBridge::start(o.bridge);
      if (!nb) return nb.unexpected();
      own.reset();
      own.emplace(std::move(*nb));
      b = &*own;
      loaded = false;
    }
    if (cuda && !b->info().cuda)
      return fail(ErrorCode::kNoCuda, "no CUDA: torch {} sees no CUDA device (torch.cuda.is_available() is False)", b->info().torch);
    if (!loaded) {
      if (auto s = b->load(task.torch_reference_path(), dims); !s)
        return fail("{}: {}", task.torch_reference_path().string(), s.error().message);
      loaded = true;
    }
    return {};
  };
  KEVO_TRY(ready());

  std::vector<std::string> modes = {"eager"};
  if (o.compile) modes.push_back("compile");
  if (o.extension && !task.torch_baseline.empty()) modes.push_back("extension");
  TimeResult out;
  out.device = o.device;
  out.device_name = cuda ? b->info().device_name : "";
  for (const auto& m : modes) {
    TimedMode& slot = out.modes[m];
    if (auto s = ready(); !s) {  // an earlier mode killed the bridge and it does not come back
      slot.error = "the PyTorch bridge could not be restarted: " + s.error().message;
      continue;
    }
    TimeOptions t;
    t.modes = {m};
    t.device = o.device;
    t.warmup = o.warmup;
    t.min_reps = o.min_reps;
    t.max_reps = o.max_reps;
    t.budget_s = o.budget_s;
    auto limit = m == "compile" ? o.compile_timeout : m == "extension" ? o.extension_timeout : o.eager_timeout;
    t.timeout = limit + std::chrono::milliseconds(static_cast<int64_t>(o.budget_s * 1000));
    if (m == "extension") {
      t.extension = task.dir / task.torch_baseline;
      t.build_root = o.build_root.empty() ? cache_dir() / "torch_extensions" : o.build_root;
    }
    auto r = call(*b, scalars, t);
    if (!r) {
      slot.error = r.error().message;
      continue;
    }
    if (!r->device_name.empty()) out.device_name = r->device_name;
    if (!r->device.empty()) out.device = r->device;
    slot = r->modes[m];
  }
  return out;
}

}  // namespace

Result<TimeResult> time_torch(const Task& task, const std::vector<HostTensor>& inputs,
                              const TorchTimingOptions& o, TorchBridge* shared) {
  return time_modes(
      task, [&](TorchBridge& b, const auto& scalars, const TimeOptions& t) { return b.time(inputs, scalars, t); }, o,
      shared);
}

Result<TimeResult> time_torch_on_device(const Task& task, const std::vector<DeviceTensor>& inputs,
                                        const TorchTimingOptions& o, TorchBridge* shared) {
  return time_modes(
      task, [&](TorchBridge& b, const auto& scalars, const TimeOptions& t) { return b.time(inputs, scalars, t); }, o,
      shared);
}

Result<TimeResult> time_torch_main(const Task& task, uint64_t seed, const TorchTimingOptions& opts,
                                   TorchBridge* bridge) {
  if (task.configs.empty()) return fail("task '{}' has no configs", task.name);
  auto inputs = generate_inputs(task, task.main(), seed, false);
  if (!inputs) return inputs.unexpected();
  return time_torch(task, *inputs, opts, bridge);
}

}  // namespace kevo::torch
