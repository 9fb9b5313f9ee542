// The checker's handle on a kevo-runner process: start it, send requests, and classify its death
// (timeout, signal, unexpected exit) instead of ever crashing the checker.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>
#include <thread>

#include "run/channel.h"
#include "util/subprocess.h"

namespace kevo {

struct RunnerDeath {
  enum class Kind { Timeout, Signal, Exited } kind = Kind::Exited;
  int signal = 0;
  int exit_code = 0;
  std::string during;       // the request that was in flight
  std::string description;  // "killed by signal 11 (Segmentation fault)"
  std::string stderr_tail;  // what the process printed last (bounded)
};

struct RunnerOptions {
  std::filesystem::path runner;  // empty: find_runner()
  // A program the runner is started under, with its arguments (ncu for a profile); empty: none.
  std::vector<std::string> launcher;
  std::chrono::milliseconds start_timeout{60000};
  std::map<std::string, std::string> env;
};

// Where kevo-runner is: $KEVO_RUNNER, else next to the running executable, else on PATH.
std::optional<std::filesystem::path> find_runner();

class RunnerClient {
 public:
  static Result<std::unique_ptr<RunnerClient>> start(const RunnerOptions& opts);
  ~RunnerClient();

  // Sends one request and waits up to `timeout` for the reply. If the runner dies or times out,
  // it is killed, death() says how, and an error is returned (ErrorCode::kTimeout when it did not
  // answer in time, kProcessDied otherwise).
  Result<json> call(const json& request, std::chrono::milliseconds timeout);
  Arena& arena() { return arena_; }
  const std::optional<RunnerDeath>& death() const { return death_; }
  std::string stderr_tail();
  // Ends the session: closes the request pipe (the runner exits), waits up to `grace` for the
  // process to end on its own (a wrapper such as compute-sanitizer prints its summary only then),
  // kills it after that, and returns everything stderr's tail held at the end.
  std::string finish(std::chrono::milliseconds grace);
  bool alive() const { return child_.pid > 0; }

  // Destroyed runners are reaped in the background; this waits until all are (tests, and callers
  // that must know the GPU is free). False on timeout.
  static bool wait_reaped(std::chrono::milliseconds timeout);

 private:
  RunnerClient() = default;
  struct ErrTail {
    std::mutex mu;
    std::string text;
  };
  // Reads the runner's stderr until EOF; shares the tail with the client, which may go first.
  static void drain_stderr(int fd, ErrTail& tail);
  void on_failure(const std::string& during, bool timed_out);
  int kill_and_reap_keep_err();

  Child child_;
  int req_fd_ = -1, reply_fd_ = -1;
  Arena arena_;
  std::thread err_thread_;
  std::shared_ptr<ErrTail> err_ = std::make_shared<ErrTail>();
  std::optional<RunnerDeath> death_;
};

}  // namespace kevo
