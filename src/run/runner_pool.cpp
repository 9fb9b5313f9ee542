#include "run/runner_pool.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "util/enum_text.h"
#include "util/fd_passing.h"
#include "util/json_fields.h"

namespace kevo {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// KEVO_RUNNER_POOL's values; unset or empty is auto.
constexpr EnumText<PoolMode> kPoolModeTexts[] = {{PoolMode::kOff, "off"},  {PoolMode::kUse, "use"},
                                                 {PoolMode::kAuto, "auto"}, {PoolMode::kAuto, ""},
                                                 {PoolMode::kOff, "0"},    {PoolMode::kOff, "no"}};

}  // namespace

PoolMode pool_mode() {
  const char* v = std::getenv("KEVO_RUNNER_POOL");
  const std::string s = v ? v : "";
  if (auto mode = enum_parse(kPoolModeTexts, s)) return *mode;
  static const bool warned =
      (spdlog::warn("KEVO_RUNNER_POOL={} is not off, use or auto; using auto", s), true);
  (void)warned;
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

std::string PoolKind::key() const { return gpus ? "gpus=" + *gpus : std::string("gpus unset"); }

json PoolKind::to_json() const {
  json j = json::object();
  if (gpus) j["gpus"] = *gpus;
  return j;
}

namespace {
bool gpu_list(const std::string& v) {
  return v.size() <= 256 && std::all_of(v.begin(), v.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == ',' || c == '-';
         });
}
}  // namespace

Result<PoolKind> PoolKind::from_json(const json& j) {
  if (!j.is_object()) return fail(ErrorCode::kParse, "a runner kind is an object");
  PoolKind k;
  for (const auto& [name, v] : j.items()) {
    if (name != "gpus")
      return fail(ErrorCode::kParse,
                  "a runner kind names only its GPUs (\"{}\" is the pool's to choose: binary, folder and "
                  "environment are its own)",
                  name);
    if (!v.is_string() || !gpu_list(v.get<std::string>()))
      return fail(ErrorCode::kParse, "a runner kind's gpus is a CUDA_VISIBLE_DEVICES list (digits, commas, ids)");
    k.gpus = v.get<std::string>();
  }
  return k;
}

Result<PoolKind> pool_kind_of(const RunnerOptions& o) {
  if (o.env_exact || o.cwd) return fail(ErrorCode::kNotFound, "an exact environment or folder: not a pool's runner");
  PoolKind k;
  for (const auto& [name, value] : o.env) {
    if (name != "CUDA_VISIBLE_DEVICES" || !gpu_list(value))
      return fail(ErrorCode::kNotFound, "{} set for the runner: not a pool's runner", name);
    k.gpus = value;
  }
  if (!k.gpus)
    if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) {
      if (!gpu_list(v)) return fail(ErrorCode::kNotFound, "CUDA_VISIBLE_DEVICES: not a pool's runner");
      k.gpus = v;
    }
  return k;
}

std::vector<std::string> pool_runner_env(const std::vector<std::string>& base, const PoolKind& k) {
  std::vector<std::string> e;
  for (const auto& kv : base)
    if (kv.rfind("CUDA_VISIBLE_DEVICES=", 0) != 0) e.push_back(kv);
  if (k.gpus) e.push_back("CUDA_VISIBLE_DEVICES=" + *k.gpus);
  return e;
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
  auto runner = o.runner.empty() ? find_runner() : std::optional<fs::path>(o.runner);
  std::error_code ec;
  if (!runner) return std::nullopt;
  const fs::path bin = fs::weakly_canonical(*runner, ec);
  auto x = ask_pool({{"cmd", "take"}, {"kind", kind->to_json()}, {"runner", bin.string()}}, true);
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
  // The runner this process would start, named with its bytes: the pool refuses to start from a
  // file that holds others by the time it reads it.
  if (auto runner = find_runner()) {
    std::error_code rc;
    const fs::path bin = fs::weakly_canonical(*runner, rc);
    if (auto digest = file_sha256(bin)) args.insert(args.end(), {"--runner", bin.string(), "--runner-sha256", *digest});
  }
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
