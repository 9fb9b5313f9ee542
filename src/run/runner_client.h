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
#include <variant>

#include "run/channel.h"
#include "run/protocol.h"
#include "run/runner_image.h"
#include "util/subprocess.h"

namespace kevo {

struct RunnerDeath {
  // Lost: a pooled runner whose pool ended (it dies with the pool): no status, not the candidate's doing.
  enum class Kind { Timeout, Signal, Exited, Lost } kind = Kind::Exited;
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
  // The runner's whole environment ("NAME=value" each) and working folder, where they are not this
  // process's: the runner pool starts runners for other processes. `env` and the dropping of
  // secrets still apply.
  std::optional<std::vector<std::string>> env_exact;
  std::optional<std::filesystem::path> cwd;
  // The bytes to run (run/runner_image.h); null: this process's image of `runner`. Under a
  // launcher the runner is exec'd by path (the tool starts it).
  std::shared_ptr<const RunnerImage> image;
};

// A started kevo-runner before anything talks to it: what the runner pool keeps and hands over.
struct RunnerProcess {
  Child child;  // its err_fd reads the runner's stderr; in_fd and out_fd are unused (-1)
  int arena_fd = -1, req_fd = -1, reply_fd = -1;
  void close_fds();
};

// Starts kevo-runner (fds: 3 the arena, 4 requests, 5 replies) from its image, with no credentials
// in its environment, in a process group of its own, dying with the thread that started it.
Result<RunnerProcess> spawn_runner(const RunnerOptions& opts);
// The environment variables (by prefix) a runner never gets: the run database's, the LLM keys'.
const std::vector<std::string>& runner_secret_prefixes();

// Where kevo-runner is: $KEVO_RUNNER, else next to the running executable, else on PATH.
std::optional<std::filesystem::path> find_runner();

// Why a typed call brought no reply of its type: no reply came (the runner died or timed out;
// RunnerClient::death() says how; error.code kTimeout or kProcessDied), the runner refused the
// request (`refusal`: its ErrorReply, which callers such as classify_death read for a fatal CUDA
// error), or its reply did not decode (`malformed`: a runner that loaded a candidate may send
// anything). error.message says which for people.
struct CallError {
  Error error;
  std::optional<proto::ErrorReply> refusal;
  bool malformed = false;
};

// A typed reply or a CallError (Result<T> has room for an Error only).
template <class T>
class [[nodiscard]] CallResult {
 public:
  CallResult(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  CallResult(CallError e) : v_(std::in_place_index<1>, std::move(e)) {}
  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }
  T& operator*() & { return std::get<0>(v_); }
  const T& operator*() const& { return std::get<0>(v_); }
  T* operator->() { return &std::get<0>(v_); }
  const T* operator->() const { return &std::get<0>(v_); }
  const CallError& failure() const { return std::get<1>(v_); }
  const Error& error() const { return failure().error; }
  // The runner's refusal, when it answered one; nullptr otherwise.
  const proto::ErrorReply* refusal() const {
    return !has_value() && failure().refusal ? &*failure().refusal : nullptr;
  }
  Unexpected unexpected() const { return Unexpected{error()}; }
  // Whether the runner replied at all (with its reply, a refusal or something malformed).
  bool answered() const { return has_value() || failure().refusal || failure().malformed; }

 private:
  std::variant<T, CallError> v_;
};

class RunnerClient {
 public:
  static Result<std::unique_ptr<RunnerClient>> start(const RunnerOptions& opts);
  // A runner another process started and handed over (run/runner_pool.h). `pool_conn` is the
  // connection to that process, which is the runner's parent: it reports the runner's exit status
  // there and kills it when asked (or when the connection closes). The client owns every fd.
  static std::unique_ptr<RunnerClient> adopt(RunnerProcess p, int pool_conn);
  ~RunnerClient();

  // Sends one request (run/protocol.h) and waits up to `timeout` for its reply, which must say
  // "ok": true and decode as Req::Reply; see CallError for the rest.
  template <class Req>
  CallResult<typename Req::Reply> call(const Req& request, std::chrono::milliseconds timeout) {
    auto r = call_json(json(request), timeout);
    if (!r) return CallError{r.error()};
    if (auto refused = refusal_of(*r, Req::kCmd)) return std::move(*refused);
    auto reply = proto::decode<typename Req::Reply>(*r, (std::string(Req::kCmd) + " reply").c_str());
    if (!reply) return CallError{reply.error(), std::nullopt, true};
    return std::move(*reply);
  }
  // The framing alone: one JSON message out, one back, whatever they say. If the runner dies or
  // times out, it is killed, death() says how, and an error is returned (ErrorCode::kTimeout when
  // it did not answer in time, kProcessDied otherwise). The checker uses the typed call above;
  // this stays public for tests that drive stand-in runners with commands outside the protocol.
  Result<json> call_json(const json& request, std::chrono::milliseconds timeout);
  Arena& arena() { return arena_; }
  const std::optional<RunnerDeath>& death() const { return death_; }
  std::string stderr_tail();
  // Ends the session: closes the request pipe (the runner exits), waits up to `grace` for the
  // process to end on its own (a wrapper such as compute-sanitizer prints its summary only then),
  // kills it after that, and returns everything stderr's tail held at the end.
  std::string finish(std::chrono::milliseconds grace);
  bool alive() const { return child_.pid > 0; }
  int pid() const { return child_.pid; }
  // Whether the runner came from the runner pool (another process is its parent).
  bool pooled() const { return pool_fd_ >= 0; }

  // Destroyed runners are reaped in the background; this waits until all are (tests, and callers
  // that must know the GPU is free). False on timeout.
  static bool wait_reaped(std::chrono::milliseconds timeout);

 private:
  RunnerClient() = default;
  // A reply that does not say "ok": true, as the CallError of command `cmd`; nullopt for one that does.
  static std::optional<CallError> refusal_of(const json& reply, const char* cmd);
  struct ErrTail {
    std::mutex mu;
    std::string text;
  };
  // Reads the runner's stderr until EOF; shares the tail with the client, which may go first.
  static void drain_stderr(int fd, ErrTail& tail);
  void on_failure(const std::string& during, bool timed_out);
  int kill_and_reap_keep_err();

  Child child_;
  int pool_fd_ = -1;  // the runner pool's connection, for a handed-over runner
  int req_fd_ = -1, reply_fd_ = -1;
  Arena arena_;
  std::thread err_thread_;
  std::shared_ptr<ErrTail> err_ = std::make_shared<ErrTail>();
  std::optional<RunnerDeath> death_;
};

}  // namespace kevo
