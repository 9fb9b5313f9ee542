// One call of the candidate in a fresh runner started under a tool that watches the process
// (compute-sanitizer for sanitize.cpp, Nsight Compute for profile.cpp), on the host data path so
// the runner launches no kernel of its own. The tool writes its report to a log file, read once it
// has exited (its stdout is discarded with the runner's).
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "check/session.h"
#include "util/result.h"

namespace kevo {

struct ToolRun {
  Status ran = Error{};                   // the call was answered, or why the candidate did not run
  std::optional<std::string> report;     // the tool's log file, if it wrote one
  std::string tail;                       // the tool's (and the runner's) stderr, last lines
};

struct ToolTimeouts {
  std::chrono::milliseconds load, run, finish;  // the candidate's load, its call, the tool's exit
};

// `launcher`: the tool and its arguments, the runner's path is appended; `log`: where it writes.
// An error when nothing could be started (no runner, inputs that cannot be drawn, a tool that does
// not start); a ToolRun otherwise, whatever the call did.
Result<ToolRun> run_under_tool(EvalSession& s, const Config& config, uint64_t seed,
                               std::vector<std::string> launcher, const std::filesystem::path& log,
                               const ToolTimeouts& timeouts);

}  // namespace kevo
