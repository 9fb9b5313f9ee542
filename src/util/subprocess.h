// Running child processes with a hard wall-clock timeout. Used for nvcc, the candidate runner and
// helper tools; every child gets its own process group so a timeout kills everything it spawned.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "util/result.h"

namespace kevo {

struct ProcessLimits {
  std::optional<long> max_file_bytes;   // RLIMIT_FSIZE
  std::optional<long> max_open_files;   // RLIMIT_NOFILE
  std::optional<long> max_cpu_seconds;  // RLIMIT_CPU
  bool no_core_dump = true;
  // A Landlock ruleset (compile/sandbox.h builds it) the child restricts itself to before exec;
  // -1 for none. The child exits with 127 if it cannot.
  int landlock_ruleset_fd = -1;
};

struct RunOptions {
  std::vector<std::string> argv;
  std::string stdin_data;
  std::optional<std::string> cwd;
  std::map<std::string, std::string> env_add;  // added to (or replacing in) the parent's env
  std::chrono::milliseconds timeout{60000};
  size_t max_output_bytes = 4 << 20;  // each of stdout/stderr; the rest is dropped
  ProcessLimits limits;
};

struct RunResult {
  int exit_code = -1;   // valid when !signaled && !timed_out
  int term_signal = 0;  // valid when signaled
  bool signaled = false;
  bool timed_out = false;
  std::string out;
  std::string err;
  double wall_seconds = 0;
  bool ok() const { return !signaled && !timed_out && exit_code == 0; }
  // "exit code 2", "killed by signal 11 (Segmentation fault)", "timed out after 3.0 s"
  std::string describe() const;
};

// Runs a program to completion (or timeout), capturing its output. Fails only when the program
// could not be started at all.
Result<RunResult> run_process(const RunOptions& opts);

// Applies limits in a freshly forked child (async-signal-safe).
void apply_limits_in_child(const ProcessLimits& limits);

// Finds an executable on PATH (or returns the argument if it contains a slash and exists).
std::optional<std::string> find_program(const std::string& name);

}  // namespace kevo

namespace kevo {

// A running child with pipes to its stdin/stdout/stderr, in its own process group.
struct Child {
  int pid = -1;
  int in_fd = -1;   // write end of the child's stdin
  int out_fd = -1;  // read end of the child's stdout
  int err_fd = -1;  // read end of the child's stderr
};

struct SpawnOptions {
  std::vector<std::string> argv;
  // Variables of the parent's environment the child does not get (names starting with any of
  // these): secrets a process that runs hostile code must not read.
  std::vector<std::string> env_drop_prefixes;
  // Passed to the child as fds 3, 4, ... in this order (everything else is close-on-exec).
  std::vector<int> pass_fds;
  std::optional<std::string> cwd;
  std::map<std::string, std::string> env_add;
  // The environment to start from instead of the parent's ("NAME=value" each); env_add and
  // env_drop_prefixes still apply. The runner pool starts runners with its client's environment.
  std::optional<std::vector<std::string>> env_exact;
  ProcessLimits limits;
  // Child's stdin/stdout from /dev/null instead of pipes (in_fd/out_fd stay -1).
  bool null_stdio = false;
  // SIGKILL the child when the parent dies (Ctrl-C, kill -9), so no hung candidate outlives it.
  bool die_with_parent = false;
  // The program to run as an open file (execveat with AT_EMPTY_PATH: what the fd holds, whatever
  // the path in argv[0] names by then); -1: argv[0] looked up on PATH. A script (#!) needs its fd
  // kept open across the exec (its interpreter reads /dev/fd/N): exec_fd_script.
  int exec_fd = -1;
  bool exec_fd_script = false;
};

Result<Child> spawn_process(const SpawnOptions& opts);

// The environment a child gets ("NAME=value" each): `base` (the parent's environment when null)
// without the names that start with one of `drop_prefixes` or that `add` sets, then `add`.
std::vector<std::string> child_environment(const std::map<std::string, std::string>& add,
                                           const std::vector<std::string>& drop_prefixes,
                                           const std::vector<std::string>* base = nullptr);

// Kills the child's whole process group and reaps it; returns the wait status.
int kill_and_reap(Child& child);

// Waits up to `timeout` for the child to exit; returns its wait status or nullopt if still running.
std::optional<int> wait_for_exit(const Child& child, std::chrono::milliseconds timeout);

std::string describe_wait_status(int status);

}  // namespace kevo
