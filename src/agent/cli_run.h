// Running an agent CLI to its end or its wall-time limit. Unlike run_process (util/subprocess.h) it
// starts from an exact environment, feeds the prompt on stdin, keeps the end of stdout (where a
// CLI's result is) rather than the start, and stops waiting once the CLI itself has exited: a
// background process the agent left running holds the pipes open, and is killed with the CLI's
// process group. At the limit the group gets SIGTERM, then SIGKILL.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "util/result.h"

namespace kevo::agent {

struct CliRunOptions {
  std::vector<std::string> argv;
  std::vector<std::string> env;  // exact, "NAME=value" each
  std::filesystem::path cwd;
  std::string stdin_data;
  std::chrono::milliseconds wall_limit{1800000};
  std::chrono::milliseconds term_grace{3000};  // between SIGTERM and SIGKILL at the limit
  int landlock_ruleset_fd = -1;
  // Polled while the CLI runs: true ends it as the wall-time limit does (the search was stopped).
  std::function<bool()> stop;
  size_t keep_stdout = 16 << 20, keep_stderr = 8 << 10;  // the last bytes of each
};

struct CliRunResult {
  int exit_code = -1;
  int term_signal = 0;
  bool signaled = false;
  bool timed_out = false;
  double wall_seconds = 0;
  std::string out, err;  // their ends
};

// Fails only when the CLI could not be started.
Result<CliRunResult> run_cli(const CliRunOptions& opts);

}  // namespace kevo::agent
