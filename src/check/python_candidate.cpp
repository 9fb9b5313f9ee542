#include "check/python_candidate.h"

#include <nlohmann/json.hpp>

#include "check/intake.h"
#include "task/resolved.h"
#include "util/fs.h"

namespace kevo {

bool is_python_candidate(const std::filesystem::path& p) { return p.extension() == ".py"; }

namespace {

Result<nlohmann::json> read_sidecar(const Task& task) {
  const auto path = task.dir / "torch.json";
  auto text = read_file(path);
  if (!text) return fail("{}: a Python candidate needs the task's torch.json (tasks imported from PyTorch have one): {}",
                         path.string(), text.error().message);
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (!j.is_object() || !j.contains("args") || !j.contains("weights") || !j.contains("outputs"))
    return fail("{}: not a kevo torch.json (args, weights and outputs expected)", path.string());
  return j;
}

}  // namespace

Result<std::string> python_meta(const Task& task, bool compile) {
  if (!task.oracle_is_torch || task.torch_reference.empty())
    return fail("{}: Python candidates are for tasks imported from PyTorch (oracle = \"torch\")", task.dir.string());
  auto sc = read_sidecar(task);
  if (!sc) return sc.unexpected();
  auto main = task.resolve(task.main());
  if (!main) return main.unexpected();
  nlohmann::json m = {{"problem", std::filesystem::absolute(task.torch_reference_path()).string()},
                      {"dims", task.dims},
                      {"size_dims", sc->value("size_dims", nlohmann::json::array())},
                      {"main_dims", main->dims},
                      {"args", (*sc)["args"]},
                      {"weights", nlohmann::json::array()},
                      {"outputs", (*sc)["outputs"]},
                      {"compile", compile}};
  for (const auto& w : (*sc)["weights"]) m["weights"].push_back({w.value("path", ""), w.value("name", "")});
  return m.dump();
}

std::string python_intake(const std::string& text) {
  if (first_invalid_utf8(text)) return "the solution is not UTF-8 text";
  if (text.find("class ModelNew") == std::string::npos)
    return "the solution defines no class ModelNew (a KernelBench solution does)";
  return "";
}

}  // namespace kevo
