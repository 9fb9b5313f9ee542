#include "run/runner_pool.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "util/fd_passing.h"
#include "util/json_fields.h"

namespace kevo {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

PoolMode pool_mode() {
  const char* v = std::getenv("KEVO_RUNNER_POOL");
  const std::string s = v ? v : "";
  if (s == "off" || s == "0" || s == "no") return PoolMode::kOff;
  if (s == "use") return PoolMode::kUse;
  if (!s.empty() && s != "auto") {
    static const bool warned =
        (spdlog::warn("KEVO_RUNNER_POOL={} is not off, use or auto; using auto", s), true);
    (void)warned;
  }
  return PoolMode::kAuto;
}

Result<fs::path> pool_dir(bool create) {
  fs::path d;
  if (const char* e = std::getenv("KEVO_RUNNER_POOL_DIR"); e && *e)
    d = e;
  else if (const char* x = std::getenv("XDG_RUNTIME_DIR"); x && *x && fs::is_directory(x))
    d = fs::path(x) / "kevo";
  else
    d = fmt::format("/tmp/kevo-runners-{}", getuid());
  if (!create && !fs::exists(d))
    return fail(ErrorCode::kNotFound, "no runner pool folder {}", d.string());
  if (create && mkdir(d.c_str(), 0700) != 0 && errno != EEXIST)
    return fail(ErrorCode::kIo, "cannot make the runner pool's folder {}: {}", d.string(),
                std::strerror(errno));
  struct stat st {};
  if (lstat(d.c_str(), &st) != 0)
    return fail(ErrorCode::kIo, "runner pool folder {}: {}", d.string(), std::strerror(errno));
  if (!S_ISDIR(st.st_mode))
    return fail("runner pool folder {} is not a folder (a link?): not used", d.string());
  if (st.st_uid != getuid())
    return fail("runner pool folder {} belongs to user {}, not to you: not used", d.string(),
                st.st_uid);
  if ((st.st_mode & 077) != 0)
    return fail("runner pool folder {} is open to other users (mode {:o}): not used", d.string(),
                st.st_mode & 0777);
  return d;
}

fs::path pool_socket(const fs::path& dir) {
  return dir / "pool.sock";
}

std::string PoolKind::key() const {
  std::vector<std::string> e;
  for (const auto& kv : env) {
    const std::string name = kv.substr(0, kv.find('='));
    const bool volatile_name = name == "_" || name == "PWD" || name == "OLDPWD" ||
                               name == "SHLVL" || name.rfind("GTEST_", 0) == 0;
    if (!volatile_name) e.push_back(kv);
  }
  std::sort(e.begin(), e.end());
  std::string k = runner.string() + '\0' + cwd.string();
  for (const auto& kv : e) k += '\0' + kv;
  return k;
}

json PoolKind::to_json() const {
  return {{"runner", runner.string()}, {"cwd", cwd.string()}, {"env", env}};
}

Result<PoolKind> PoolKind::from_json(const json& j) {
  if (!j.is_object() || !j.contains("runner") || !j["runner"].is_string() || !j.contains("cwd") ||
      !j["cwd"].is_string() || !j.contains("env") || !j["env"].is_array())
    return fail(ErrorCode::kParse, "a runner kind needs runner, cwd (strings) and env (an array)");
  PoolKind k;
  k.runner = j["runner"].get<std::string>();
  k.cwd = j["cwd"].get<std::string>();
  for (const auto& e : j["env"]) {
    if (!e.is_string() || e.get<std::string>().find('=') == std::string::npos)
      return fail(ErrorCode::kParse, "a runner kind's env holds NAME=value strings");
    k.env.push_back(e.get<std::string>());
  }
  if (!k.runner.is_absolute() || !k.cwd.is_absolute())
    return fail(ErrorCode::kParse, "a runner kind's runner and cwd are absolute paths");
  return k;
}

Result<PoolKind> pool_kind_of(const RunnerOptions& o) {
  PoolKind k;
  k.runner = o.runner;
  if (k.runner.empty()) {
    auto r = find_runner();
    if (!r) return fail(ErrorCode::kNotFound, "cannot find kevo-runner");
    k.runner = *r;
  }
  std::error_code ec;
  k.runner = fs::absolute(k.runner, ec);
  k.cwd = o.cwd ? fs::absolute(*o.cwd, ec) : fs::current_path(ec);
  if (ec) return fail(ErrorCode::kIo, "runner pool: {}", ec.message());
  k.env = child_environment(o.env, runner_secret_prefixes(), o.env_exact ? &*o.env_exact : nullptr);
  return k;
}

namespace {

// One request and its reply on a fresh connection to the pool; the connection is returned open
// (a taken runner's) in `conn` when asked for.
struct Exchange {
  json reply;
  std::vector<int> fds;
  int conn = -1;
};

Result<Exchange> ask_pool(const json& request, bool keep_conn) {
  auto dir = pool_dir(false);
  if (!dir) return dir.unexpected();
  auto s = connect_seqpacket(pool_socket(*dir));
  if (!s) return s.unexpected();
  auto drop = [&](Error e) {
    ::close(*s);
    return Unexpected{std::move(e)};
  };
  if (peer_uid(*s) != static_cast<long>(getuid()))
    return drop(Error{"the runner pool's socket is another user's"});
  json req = request;
  req["v"] = kPoolProtocol;
  if (auto w = send_fd_message(*s, req.dump()); !w) return drop(w.error());
  auto m = recv_fd_message(*s, std::chrono::steady_clock::now() + 5s);
  if (!m) return drop(m.error());
  Exchange x;
  x.fds = std::move(m->fds);
  x.reply = json::parse(m->bytes, nullptr, false);
  if (!x.reply.is_object() || JsonFields(x.reply, "runner pool reply").get<int>("v", 0) != kPoolProtocol) {
    for (int fd : x.fds) ::close(fd);
    return drop(
        Error{fmt::format("the runner pool speaks another protocol (kevo's is {}): stop it with "
                          "`kevo runners stop`",
                          kPoolProtocol)});
  }
  if (keep_conn)
    x.conn = *s;
  else
    ::close(*s);
  return x;
}

}  // namespace

std::optional<std::pair<std::unique_ptr<RunnerClient>, proto::HelloReply>> take_pooled(
    const RunnerOptions& o) {
  if (pool_mode() == PoolMode::kOff || !o.launcher.empty()) return std::nullopt;
  auto kind = pool_kind_of(o);
  if (!kind) return std::nullopt;
  auto x = ask_pool({{"cmd", "take"}, {"kind", kind->to_json()}}, true);
  if (!x) {
    if (x.error().code != ErrorCode::kNotFound) spdlog::debug("runner pool: {}", x.error().message);
    return std::nullopt;
  }
  JsonFields r(x->reply, "runner pool reply");
  const long pid = r.get<long>("pid", 0L);
  if (!r.get<bool>("ok", false) || !r.ok() || x->fds.size() != 4 || pid <= 0) {
    for (int fd : x->fds) ::close(fd);
    ::close(x->conn);
    return std::nullopt;
  }
  RunnerProcess p;
  p.arena_fd = x->fds[0];
  p.req_fd = x->fds[1];
  p.reply_fd = x->fds[2];
  p.child.err_fd = x->fds[3];
  p.child.pid = static_cast<int>(pid);
  auto c = RunnerClient::adopt(p, x->conn);
  // Alive and answering now, and answering us: the pipes are the runner's.
  auto h = c->call(proto::HelloRequest{}, 10s);
  if (!h) return std::nullopt;
  return std::make_pair(std::move(c), std::move(*h));
}

Result<PoolStatus> pool_status() {
  auto x = ask_pool({{"cmd", "status"}}, false);
  if (!x) return x.unexpected();
  for (int fd : x->fds) ::close(fd);
  JsonFields r(x->reply, "runner pool status");
  PoolStatus s;
  s.pid = r.get<long>("pid", 0L);
  s.kinds = r.get<int>("kinds", 0);
  s.ready = r.get<int>("ready", 0);
  s.handed_out = r.get<int>("handed_out", 0);
  s.started = r.get<long>("started", 0L);
  s.taken = r.get<long>("taken", 0L);
  s.failed = r.get<long>("failed", 0L);
  s.idle_exit_s = r.get<double>("idle_exit_s", 0.0);
  s.spares = r.get<int>("spares", 0);
  if (auto st = r.status(); !st) return st.unexpected();
  return s;
}

Status stop_pool() {
  auto x = ask_pool({{"cmd", "stop"}}, false);
  if (!x) return x.unexpected();
  for (int fd : x->fds) ::close(fd);
  return {};
}

Result<long> start_pool(const PoolStartOptions& o) {
  if (auto st = pool_status()) return st->pid;
  auto dir = pool_dir(true);
  if (!dir) return dir.unexpected();
  std::error_code ec;
  fs::path exe = o.kevo.empty() ? fs::read_symlink("/proc/self/exe", ec) : o.kevo;
  if (exe.empty())
    return fail(ErrorCode::kNotFound, "cannot find the kevo executable to start the runner pool");
  const std::string log = (*dir / "pool.log").string();
  std::vector<std::string> args = {exe.string(),
                                   "runners",
                                   "serve",
                                   "--spares",
                                   std::to_string(o.spares),
                                   "--idle-exit",
                                   std::to_string(o.idle_exit_s)};
  // The pool holds no credentials: it gets the environment a runner would.
  std::vector<std::string> env = child_environment({}, runner_secret_prefixes());
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return fail("fork: {}", std::strerror(errno));
  if (pid == 0) {
    // A session of its own, and not our child (the middle process exits): nothing of ours
    // (a terminal's Ctrl-C, a test harness's pipes) reaches it.
    setsid();
    if (fork() != 0) _exit(0);
    int nul = open("/dev/null", O_RDONLY);
    int out = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (nul < 0 || out < 0) _exit(127);
    dup2(nul, 0), dup2(out, 1), dup2(out, 2);
    close_range(3, ~0U, 0);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  for (int i = 0; i < 250; ++i) {
    if (auto st = pool_status()) return st->pid;
    std::this_thread::sleep_for(20ms);
  }
  return fail(ErrorCode::kUnavailable, "the runner pool did not answer within 5 s; see {}", log);
}

}  // namespace kevo
