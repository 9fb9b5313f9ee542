#include "interop/task_compat.h"

#include <regex>
#include <sstream>

#include "util/fs.h"

namespace kevo::interop {
namespace fs = std::filesystem;

namespace {
const std::regex kKeyLine(R"(^\s*(oracle|torch_reference|torch_baseline)\s*=\s*"([^"]*)\"\s*(#.*)?$)");
}

Result<TorchTaskInfo> torch_info_from_toml(std::string_view text, const fs::path& dir) {
  TorchTaskInfo info;
  std::istringstream in{std::string(text)};
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.rfind("[", 0) == 0) break;  // top-level keys only
    std::smatch m;
    if (!std::regex_match(line, m, kKeyLine)) continue;
    if (m[1] == "oracle") info.oracle_is_torch = m[2] == "torch";
    else if (m[1] == "torch_reference") info.reference = dir / std::string(m[2]);
    else info.baseline = dir / std::string(m[2]);
  }
  if (info.oracle_is_torch && !info.reference)
    return fail("{}: oracle = \"torch\" needs torch_reference = \"FILE.py\"", (dir / "task.toml").string());
  return info;
}

std::string strip_torch_keys(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string line, out;
  bool top = true;
  while (std::getline(in, line)) {
    if (line.rfind("[", 0) == 0) top = false;
    std::smatch m;
    if (top && std::regex_match(line, m, kKeyLine)) {
      if (m[1] == "oracle" && m[2] == "torch") out += "oracle = \"reference\"\n";
      else if (m[1] == "oracle") out += line + "\n";
      continue;
    }
    out += line + "\n";
  }
  return out;
}

Result<Task> load_task_with_torch(const fs::path& dir_arg, TorchTaskInfo* info_out) {
  // The task loader knows the torch keys now; this keeps the TorchTaskInfo view for callers.
  auto task = load_task(dir_arg);
  if (!task) return task;
  if (info_out) {
    info_out->oracle_is_torch = task->oracle_is_torch;
    info_out->reference.reset();
    info_out->baseline.reset();
    if (!task->torch_reference.empty()) info_out->reference = task->torch_reference_path();
    if (!task->torch_baseline.empty()) info_out->baseline = task->dir / task->torch_baseline;
  }
  return task;
}

}  // namespace kevo::interop
