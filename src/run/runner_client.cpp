#include "run/runner_client.h"

#include <sys/mman.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>

#include "util/fd_passing.h"

namespace kevo {
namespace fs = std::filesystem;

std::optional<fs::path> find_runner() {
  if (const char* r = getenv("KEVO_RUNNER"); r && *r) return fs::path(r);
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (fs::path c : {exe.parent_path() / "kevo-runner",
                       exe.parent_path().parent_path() / "bin" / "kevo-runner"})
      if (fs::exists(c, ec)) return c;
  }
  if (auto p = find_program("kevo-runner")) return fs::path(*p);
  return std::nullopt;
}

const std::vector<std::string>& runner_secret_prefixes() {
  static const std::vector<std::string> p = {"PG",      "KEVO_DB",     "KEVO_LLM_API_KEY", "OPENAI_",
                                             "ANTHROPIC_", "DEEPSEEK_", "OPENROUTER_", "AWS_",
                                             "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "GITHUB_TOKEN"};
  return p;
}

void RunnerProcess::close_fds() {
  for (int* fd : {&arena_fd, &req_fd, &reply_fd, &child.err_fd, &child.in_fd, &child.out_fd})
    if (*fd >= 0) ::close(*fd), *fd = -1;
}

namespace {
// The LD_LIBRARY_PATH the runner would get, with `dirs` after it.
std::string library_path_with(const RunnerOptions& o, const std::vector<std::string>& dirs) {
  std::string v;
  if (auto it = o.env.find("LD_LIBRARY_PATH"); it != o.env.end()) {
    v = it->second;
  } else if (o.env_exact) {
    for (const auto& kv : *o.env_exact)
      if (kv.rfind("LD_LIBRARY_PATH=", 0) == 0) v = kv.substr(16);
  } else if (const char* e = std::getenv("LD_LIBRARY_PATH")) {
    v = e;
  }
  for (const auto& d : dirs) v += (v.empty() ? "" : ":") + d;
  return v;
}

// The runner is exec'd from its image's memfd, never from the path again (a launcher execs it by
// path itself). Its $ORIGIN folders, which the loader cannot resolve from a memfd, go on
// LD_LIBRARY_PATH after whatever is there.
Status exec_from_image(const RunnerOptions& opts, const fs::path& runner, SpawnOptions& so) {
  if (!opts.launcher.empty()) return {};
  std::shared_ptr<const RunnerImage> image = opts.image;
  if (!image) {
    auto im = runner_image(runner);
    if (!im) return im.unexpected();
    image = *im;
  }
  so.exec_fd = image->fd();
  so.exec_fd_script = image->script();
  if (!image->origin_dirs().empty()) so.env_add["LD_LIBRARY_PATH"] = library_path_with(opts, image->origin_dirs());
  return {};
}
}  // namespace

Result<RunnerProcess> spawn_runner(const RunnerOptions& opts) {
  fs::path runner = opts.runner;
  if (runner.empty()) {
    auto r = find_runner();
    if (!r) return fail(ErrorCode::kNotFound, "cannot find kevo-runner (set KEVO_RUNNER or install it next to kevo)");
    runner = *r;
  }
  SpawnOptions so;
  if (auto st = exec_from_image(opts, runner, so); !st) return st.unexpected();
  // A broken pipe to a dead runner must be an error value, not a SIGPIPE that kills the checker.
  signal(SIGPIPE, SIG_IGN);
  int arena = memfd_create("kevo-arena", MFD_CLOEXEC);
  if (arena < 0) return fail("memfd_create: {}", std::strerror(errno));
  int req[2], rep[2];
  if (pipe2(req, O_CLOEXEC) != 0) return ::close(arena), fail("pipe: {}", std::strerror(errno));
  if (pipe2(rep, O_CLOEXEC) != 0) {
    for (int fd : {arena, req[0], req[1]}) ::close(fd);
    return fail("pipe: {}", std::strerror(errno));
  }
  so.argv = opts.launcher;
  so.argv.push_back(runner.string());
  if (!opts.launcher.empty()) so.env_add["KEVO_RUNNER_SHARED_PROC"] = "1";  // the tool talks to it
  so.pass_fds = {arena, req[0], rep[1]};  // become fds 3, 4, 5
  for (const auto& [k, v] : opts.env) so.env_add.emplace(k, v);  // LD_LIBRARY_PATH may be set already
  so.env_exact = opts.env_exact;
  if (opts.cwd) so.cwd = opts.cwd->string();
  // The runner loads hostile code: it gets no credentials (the run database's, the LLM keys').
  so.env_drop_prefixes = runner_secret_prefixes();
  so.null_stdio = true;
  so.die_with_parent = true;
  so.limits.max_file_bytes = 64l << 20;  // a candidate cannot fill the disk
  so.limits.max_open_files = 4096;
  auto child = spawn_process(so);
  ::close(req[0]);
  ::close(rep[1]);
  if (!child) {
    for (int fd : {arena, req[1], rep[0]}) ::close(fd);
    return child.unexpected();
  }
  RunnerProcess p;
  p.child = *child;
  p.arena_fd = arena;
  p.req_fd = req[1];
  p.reply_fd = rep[0];
  return p;
}

std::unique_ptr<RunnerClient> RunnerClient::adopt(RunnerProcess p, int pool_conn) {
  // As in spawn_runner: a handed-over runner may be dead before our first write to it.
  signal(SIGPIPE, SIG_IGN);
  std::unique_ptr<RunnerClient> c(new RunnerClient());
  c->arena_ = Arena::adopt(p.arena_fd);
  c->child_ = p.child;
  c->pool_fd_ = pool_conn;
  c->req_fd_ = p.req_fd;
  c->reply_fd_ = p.reply_fd;
  c->err_thread_ = std::thread([fd = c->child_.err_fd, tail = c->err_] { drain_stderr(fd, *tail); });
  return c;
}

Result<std::unique_ptr<RunnerClient>> RunnerClient::start(const RunnerOptions& opts) {
  auto p = spawn_runner(opts);
  if (!p) return p.unexpected();
  return adopt(*p, -1);
}

namespace {
// The runner's exit status, seen as its parent (waitpid) or through the runner pool, which is its
// parent and sends {"exit_status": N} once it has reaped it. nullopt: still running at `timeout`.
// A pool that went away took its runners with it (they die with it): kLostStatus, no status known.
constexpr int kLostStatus = -1;
std::optional<int> await_exit(Child& c, int pool_fd, std::chrono::milliseconds timeout) {
  if (c.pid <= 0) return 0;
  if (pool_fd < 0) {
    auto st = wait_for_exit(c, timeout);
    if (st) c.pid = -1;
    return st;
  }
  auto m = recv_fd_message(pool_fd, std::chrono::steady_clock::now() + timeout);
  if (!m && m.error().code == ErrorCode::kTimeout) return std::nullopt;
  c.pid = -1;
  if (!m) return kLostStatus;
  for (int fd : m->fds) ::close(fd);
  json j = json::parse(m->bytes, nullptr, false);
  auto it = j.is_object() ? j.find("exit_status") : j.end();
  return it != j.end() && it->is_number_integer() && it->get<int>() >= 0 ? it->get<int>() : kLostStatus;
}

// Kills the runner's process group: directly as its parent, or by asking the pool (which alone
// knows the pid is still the runner's: it has not reaped it yet).
void kill_runner(const Child& c, int pool_fd) {
  if (c.pid <= 0) return;
  if (pool_fd >= 0) {
    (void)send_fd_message(pool_fd, R"({"cmd":"kill"})");
    return;
  }
  kill(-c.pid, SIGKILL);
  kill(c.pid, SIGKILL);
}

// Kills the runner and waits for its status (the pool's reply comes at once after the kill).
int kill_and_await(Child& c, int pool_fd) {
  if (c.pid <= 0) return 0;
  kill_runner(c, pool_fd);
  if (pool_fd < 0) {
    int status = 0;
    while (waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
    }
    c.pid = -1;
    return status;
  }
  auto st = await_exit(c, pool_fd, std::chrono::milliseconds(10000));
  c.pid = -1;
  return st.value_or(kLostStatus);
}
}  // namespace

namespace {
// Runners being reaped in the background (RunnerClient's destructor). Never destroyed: reaper
// threads may still run while the process exits.
struct Reaping {
  std::mutex mu;
  std::condition_variable cv;
  int count = 0;
};
Reaping& reaping() {
  static auto* r = new Reaping;
  return *r;
}
}  // namespace

RunnerClient::~RunnerClient() {
  // Closing the request pipe asks the runner to exit. Its CUDA teardown takes a while (~0.1 s)
  // that no verdict waits on: a background thread gives it a moment, kills it after that, reaps
  // it and ends the stderr drain. At process exit the runner dies with its parent anyway (or, if
  // pooled, the pool kills it once this process's connection closes).
  if (req_fd_ >= 0) ::close(req_fd_);
  if (reply_fd_ >= 0) ::close(reply_fd_);
  {
    std::lock_guard lock(reaping().mu);
    ++reaping().count;
  }
  std::thread([child = child_, pool = pool_fd_, drain = std::move(err_thread_)]() mutable {
    const int pgid = child.pid;
    if (!await_exit(child, pool, std::chrono::milliseconds(2000))) kill_and_await(child, pool);
    if (pool < 0 && pgid > 0) kill(-pgid, SIGKILL);  // stragglers of its process group (none normally)
    if (drain.joinable()) drain.join();  // ends at EOF: every writer is gone
    if (child.err_fd >= 0) ::close(child.err_fd);
    if (pool >= 0) ::close(pool);
    Reaping& r = reaping();
    std::lock_guard lock(r.mu);
    if (--r.count == 0) r.cv.notify_all();
  }).detach();
}

bool RunnerClient::wait_reaped(std::chrono::milliseconds timeout) {
  Reaping& r = reaping();
  std::unique_lock lock(r.mu);
  return r.cv.wait_for(lock, timeout, [&r] { return r.count == 0; });
}

std::string RunnerClient::finish(std::chrono::milliseconds grace) {
  if (req_fd_ >= 0) ::close(req_fd_), req_fd_ = -1;
  if (reply_fd_ >= 0) ::close(reply_fd_), reply_fd_ = -1;
  const int pgid = child_.pid;
  if (child_.pid > 0 && !await_exit(child_, pool_fd_, grace)) kill_and_reap_keep_err();
  if (pool_fd_ < 0 && pgid > 0) kill(-pgid, SIGKILL);  // stragglers of its process group (none normally)
  // The drain thread ends at EOF, once every writer of the pipe (wrapper and runner) is gone.
  if (err_thread_.joinable()) err_thread_.join();
  return stderr_tail();
}

void RunnerClient::drain_stderr(int fd, ErrTail& tail) {
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      return;
    }
    std::lock_guard<std::mutex> lock(tail.mu);
    tail.text.append(buf, static_cast<size_t>(n));
    if (tail.text.size() > 16384) tail.text.erase(0, tail.text.size() - 8192);
  }
}

std::string RunnerClient::stderr_tail() {
  std::lock_guard<std::mutex> lock(err_->mu);
  return err_->text;
}

// Kills the process group but leaves stderr open for the drain thread to finish reading.
int RunnerClient::kill_and_reap_keep_err() { return kill_and_await(child_, pool_fd_); }

void RunnerClient::on_failure(const std::string& during, bool timed_out) {
  RunnerDeath d;
  d.during = during;
  int status = 0;
  if (timed_out) {
    d.kind = RunnerDeath::Kind::Timeout;
    status = kill_and_reap_keep_err();
    d.description = "did not answer in time; killed";
  } else {
    // The channel closed: the process is exiting or has exited. Wait briefly for its status.
    auto st = await_exit(child_, pool_fd_, std::chrono::milliseconds(5000));
    if (!st) {
      status = kill_and_reap_keep_err();
      d.kind = RunnerDeath::Kind::Timeout;
      d.description = "closed its channel but did not exit; killed";
    } else if (*st == kLostStatus) {
      d.kind = RunnerDeath::Kind::Lost;
      d.description = "was lost with the runner pool that started it (the pool ended)";
    } else {
      status = *st;
      if (WIFSIGNALED(status)) {
        d.kind = RunnerDeath::Kind::Signal;
        d.signal = WTERMSIG(status);
      } else {
        d.kind = RunnerDeath::Kind::Exited;
        d.exit_code = WEXITSTATUS(status);
      }
      d.description = describe_wait_status(status);
    }
  }
  // Let the stderr reader catch up with the last words.
  usleep(50000);
  d.stderr_tail = stderr_tail();
  death_ = d;
}

std::optional<CallError> RunnerClient::refusal_of(const json& reply, const char* cmd) {
  auto ok = reply.is_object() ? reply.find("ok") : reply.end();
  if (ok != reply.end() && ok->is_boolean() && ok->get<bool>()) return std::nullopt;
  auto e = proto::decode<proto::ErrorReply>(reply, "error reply");
  if (!e) return CallError{e.error(), std::nullopt, true};
  std::string msg = e->error.empty() ? fmt::format("the runner refused '{}' without saying why", cmd) : e->error;
  return CallError{Error{std::move(msg)}, std::move(*e)};
}

namespace {
// KEVO_TRACE_CALLS=1: every runner call's round trip on stderr ("kevo-trace <pid> <cmd> <ms>", then
// the runner's own account of its driver calls as JSON when it sent one), to see where an
// evaluation's time goes (docs/measurements); off by default.
bool tracing_calls() {
  const char* v = std::getenv("KEVO_TRACE_CALLS");  // read per call: next to a round trip, nothing
  return v && *v && std::string(v) != "0";
}
}  // namespace

Result<json> RunnerClient::call_json(const json& request, std::chrono::milliseconds timeout) {
  std::string what = request.value("cmd", "?");
  const auto t0 = std::chrono::steady_clock::now();
  // The runner's own account of the request (runner/op_trace.h), when it sent one.
  auto trace = [&](const Result<json>& reply) {
    if (!tracing_calls()) return;
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const json* inside = reply && reply->is_object() && reply->contains("trace") ? &(*reply)["trace"] : nullptr;
    std::fprintf(stderr, "kevo-trace %d %s %.3f%s%s\n", static_cast<int>(child_.pid), what.c_str(), ms,
                 inside ? " " : "", inside ? inside->dump().c_str() : "");
  };
  if (death_ || child_.pid <= 0) return fail(ErrorCode::kProcessDied, "the runner is no longer running");
  if (!write_message(req_fd_, request)) {
    on_failure(what, false);
    return fail(ErrorCode::kProcessDied, "runner died before '{}': {}", what, death_->description);
  }
  auto reply = read_message(reply_fd_, std::chrono::steady_clock::now() + timeout);
  trace(reply);
  if (!reply) {
    on_failure(what, reply.error().code == ErrorCode::kTimeout);
    return fail(death_->kind == RunnerDeath::Kind::Timeout ? ErrorCode::kTimeout : ErrorCode::kProcessDied,
                "runner {} during '{}'", death_->description, what);
  }
  return reply;
}

}  // namespace kevo
