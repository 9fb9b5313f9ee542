// A verdict as an agent sees it: what a prompt would show (outcome, reason, the compiler's trimmed
// diagnostics and kernel resources, each visible config's check, the speedup with its interval
// and the speed-of-light fraction, the first mismatch), as JSON and as a few lines of text. Never
// a held-out config, a reference output, a host path or the checker's internals.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/verdict.h"
#include "task/task.h"

namespace kevo::agent {

// Replaces every occurrence of each of `paths` (the session's work folder, the task's folder) with
// a placeholder, and held-out config names with "<held-out>".
std::string scrub_text(std::string text, const Task& task, const std::vector<std::string>& paths);

nlohmann::json verdict_view(const Verdict& v, const Task& task, const std::vector<std::string>& paths);
std::string verdict_lines(const nlohmann::json& view);

// The compile part alone (the `compile` tool): ok, trimmed diagnostics, kernel resources.
nlohmann::json compile_view(const Verdict& v, const Task& task, const std::vector<std::string>& paths);

}  // namespace kevo::agent
