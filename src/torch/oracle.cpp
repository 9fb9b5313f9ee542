#include "torch/oracle.h"

#include "task/resolved.h"
#include "util/fs.h"

namespace kevo::torch {

Result<TorchOracle> TorchOracle::create(TorchBridge& bridge, const Task& task,
                                        const std::filesystem::path& reference) {
  TorchOracle o(bridge, task);
  o.reference_ = reference;
  auto dims = torch_size_dims(task);
  if (!dims) return dims.unexpected();
  o.size_dims_ = std::move(*dims);
  return o;
}

Result<std::vector<std::string>> torch_size_dims(const Task& task) {
  std::error_code ec;
  if (!std::filesystem::exists(task.dir / "torch.json", ec)) return task.dims;
  auto text = read_file(task.dir / "torch.json");
  if (!text) return text.unexpected();
  auto j = ojson::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("size_dims") || !j["size_dims"].is_array())
    return fail(ErrorCode::kParse, "{}: not a kevo torch.json (no size_dims)",
                (task.dir / "torch.json").string());
  std::vector<std::string> out;
  for (const auto& d : j["size_dims"]) {
    if (!d.is_string())
      return fail(ErrorCode::kParse, "{}: size_dims holds a non-string", (task.dir / "torch.json").string());
    out.push_back(d.get<std::string>());
  }
  return out;
}

Status TorchOracle::load_for(const Config& c) {
  if (loaded_ && loaded_config_ == c.name) return {};
  std::map<std::string, int64_t> dims;
  for (const auto& d : size_dims_) dims[d] = c.dims.at(d);
  loaded_ = false;
  KEVO_TRY(bridge_->load(reference_, dims));
  loaded_ = true;
  loaded_config_ = c.name;
  return {};
}

Status TorchOracle::outputs_into(const Config& c, const std::vector<DeviceTensor>& inputs,
                                 const std::vector<DeviceTensor>& outputs, const std::string& device) {
  KEVO_TRY(load_for(c));
  if (auto s = bridge_->run_ipc(inputs, outputs, {}, device); !s)
    return fail("{}: config '{}': {}", reference_.string(), c.name, s.error().message);
  return {};
}

Result<std::vector<HostTensor>> TorchOracle::outputs(const Config& c, const std::vector<HostTensor>& inputs,
                                                     const std::string& device) {
  KEVO_TRY(load_for(c));
  auto outs = bridge_->run(inputs, {}, device);
  if (!outs) return outs.unexpected();
  auto r = task_->resolve(c);
  if (!r) return r.unexpected();
  if (outs->size() != r->outputs.size())
    return fail("{}: the PyTorch reference returns {} outputs, the task declares {}", reference_.string(),
                outs->size(), r->outputs.size());
  for (size_t i = 0; i < outs->size(); ++i) {
    const ResolvedTensor& want = r->outputs[i];
    HostTensor& t = (*outs)[i];
    if (t.dtype != want.dtype())
      return fail("{}: output {} is {}, the task declares {}", reference_.string(), i, dtype_name(t.dtype),
                  dtype_name(want.dtype()));
    if (t.numel() != want.numel)
      return fail("{}: config '{}': output {} has {} elements, the task declares {}", reference_.string(), c.name,
                  i, t.numel(), want.numel);
    t.shape = want.shape;
    t.name = want.name();
  }
  return outs;
}

}  // namespace kevo::torch
