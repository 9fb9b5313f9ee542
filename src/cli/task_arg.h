// Resolves a TASK argument: a directory, a task.toml, or the name of a bundled task.
#pragma once
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "task/task.h"
#include "util/edit_distance.h"
#include "util/fs.h"

namespace kevo::cli {

// The bundled task closest to `arg`, if it is close enough to be a typo of it.
inline std::string closest_bundled_task(const std::string& arg) {
  std::error_code ec;
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(kevo_home() / "tasks", ec))
    if (std::filesystem::exists(e.path() / "task.toml", ec)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return closest_name(arg, names);
}

inline Result<Task> resolve_task(const std::string& arg) {
  std::error_code ec;
  if (std::filesystem::exists(arg, ec)) return load_task(arg);
  auto bundled = kevo_home() / "tasks" / arg;
  if (std::filesystem::exists(bundled, ec)) return load_task(bundled);
  const std::string near = closest_bundled_task(arg);
  return fail("{}: no such task directory, and no bundled task of that name in {}{}", arg,
              (kevo_home() / "tasks").string(), near.empty() ? "" : " (did you mean '" + near + "'?)");
}

}  // namespace kevo::cli
