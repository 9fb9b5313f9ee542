// A Python candidate of a task imported from PyTorch: a KernelBench solution (a module defining
// ModelNew) run by the Python candidate runtime in a kevo-runner (runner/python_host.h). Here: what
// the checker tells that runtime about the task (read from the task's torch.json, its reference
// module and its main config), and the intake of the file.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "task/task.h"
#include "util/result.h"

namespace kevo {

// A candidate file the Python runtime runs rather than nvcc compiles (by its extension, .py).
bool is_python_candidate(const std::filesystem::path& p);

// The JSON python/kevo_bridge/candidate_runtime.py prepare reads; `compile`: the module is wrapped
// in torch.compile. An error names the task's file that is missing or malformed.
Result<std::string> python_meta(const Task& task, bool compile = false);

// Why the text cannot be a solution ("" when it can): not UTF-8, or no class ModelNew.
std::string python_intake(const std::string& text);

}  // namespace kevo
