// Resolves a TASK argument: a directory, a task.toml, or the name of a bundled task.
#pragma once
#include <filesystem>
#include <string>

#include "task/task.h"
#include "util/fs.h"

namespace kevo::cli {
inline Result<Task> resolve_task(const std::string& arg) {
  std::error_code ec;
  if (std::filesystem::exists(arg, ec)) return load_task(arg);
  auto bundled = kevo_home() / "tasks" / arg;
  if (std::filesystem::exists(bundled, ec)) return load_task(bundled);
  return fail("{}: no such task directory, and no bundled task of that name in {}", arg,
              (kevo_home() / "tasks").string());
}
}  // namespace kevo::cli
