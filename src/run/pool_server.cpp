#include "run/pool_server.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "run/runner_pool.h"
#include "util/fd_passing.h"
#include "util/json_fields.h"
#include "util/gpu_lock.h"

namespace kevo {
namespace fs = std::filesystem;
namespace {
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

std::atomic<bool> g_signalled{false};
void on_signal(int) {
  g_signalled = true;
}

// Which file a runner path names now: when it changes, the pool looks at its bytes again.
struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  long long mtime_ns = 0;
  bool operator==(const FileId&) const = default;
};
FileId file_id(const fs::path& p) {
  struct stat st {};
  if (stat(p.c_str(), &st) != 0) return {};
  return {st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec};
}

void kill_group(int pid) {
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL);
}

struct Spare {
  RunnerProcess p;
  std::string uuid;  // its GPU, from its hello
};

// A runner never handed out: its fds closed, killed and reaped.
void end_spare(Spare& s) {
  s.p.close_fds();
  if (s.p.child.pid <= 0) return;
  kill_group(s.p.child.pid);
  while (waitpid(s.p.child.pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  s.p.child.pid = -1;
}

struct Kind {
  PoolKind spec;
  std::deque<Spare> ready;
  Clock::time_point asked;
  int failures = 0;  // starts failed in a row; refills stop at 2 until the kind is asked for again
  // The GPU of the last runner of this kind that answered hello: the next start takes its lock even
  // when every ready runner has been handed out (only the very first start goes without).
  std::string uuid;
};

// A runner handed out, until the pool has reaped it. Only the main thread kills or reaps (so a pid
// is never signalled after it was reaped); a thread holding the GPU lock for a kill asks by flag.
struct Out {
  int conn = -1;  // the taker's connection; -1 once it closed
  int pid = -1;
  std::string uuid;
  struct Shared {
    std::atomic<bool> kill_now{false}, reaped{false};
  };
  std::shared_ptr<Shared> state = std::make_shared<Shared>();
  bool killed = false;
};

class PoolServer {
 public:
  // `image`: the one binary it starts (its path is what takes name); `env`: its runners'
  // environment (the pool's, less credentials), the kind's GPUs added.
  PoolServer(const PoolServerOptions& o, int listen_fd, std::shared_ptr<const RunnerImage> image,
             std::vector<std::string> env)
      : o_(o),
        listen_(listen_fd),
        image_(std::move(image)),
        runner_(image_->path()),
        file_seen_(file_id(runner_)),
        env_(std::move(env)) {}
  Status run();

 private:
  void refill_loop();
  std::optional<std::string> short_kind() const;  // under mu_
  Result<Spare> start_spare(const PoolKind& spec, const std::string& uuid);
  void accept_one();
  void on_request(int conn);
  void take(int conn, const json& req);
  std::optional<std::string> file_changed();
  void on_out_message(Out& x);
  void end_out(Out& x);
  void reap_out();
  void reap_ready();
  void end_ready();
  json status_json();
  void shutdown();
  bool stopping() {
    std::lock_guard l(mu_);
    return stopping_;
  }

  PoolServerOptions o_;
  int listen_ = -1;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Kind> kinds_;
  const std::shared_ptr<const RunnerImage> image_;
  const fs::path runner_;
  FileId file_seen_;       // the runner file's identity when its bytes were last compared
  bool file_same_ = true;  // ... and whether they were the image's
  const std::vector<std::string> env_;
  Clock::time_point last_take_ = Clock::now() - std::chrono::hours(1);
  bool stopping_ = false;     // asked to stop: nothing more is started or handed out
  bool exit_ = false;         // ending: the refill thread may go
  std::vector<int> pending_;  // connections whose request has not come yet
  std::vector<Out> out_;
  Clock::time_point last_activity_ = Clock::now(), last_ready_reap_ = Clock::now();
  std::atomic<long> started_{0}, taken_{0}, failed_{0};
  std::atomic<size_t> out_alive_{0};  // out_.size(), for the refill thread
  std::thread refill_;
};

Status PoolServer::run() {
  refill_ = std::thread([this] { refill_loop(); });
  while (!g_signalled) {
    if (stopping() && out_.empty()) break;
    if (out_.empty() && pending_.empty() && Clock::now() - last_activity_ > o_.idle_exit) {
      spdlog::info("runner pool: idle for {} s; ending", o_.idle_exit.count());
      break;
    }
    std::vector<pollfd> fds;
    fds.push_back({listen_, POLLIN, 0});
    for (const Out& x : out_) fds.push_back({x.conn, POLLIN, 0});  // -1 (closed) is skipped by poll
    for (int c : pending_) fds.push_back({c, POLLIN, 0});
    // Handed-out runners are reaped by polling (5 ms): their exit status is what a taker waits for.
    if (poll(fds.data(), fds.size(), out_.empty() ? 200 : 5) < 0 && errno != EINTR)
      return fail("runner pool: poll: {}", std::strerror(errno));
    const size_t n_out = out_.size();
    for (size_t i = 0; i < n_out; ++i)
      if (fds[1 + i].revents) on_out_message(out_[i]);
    std::vector<int> pend;
    pend.swap(pending_);
    for (size_t i = 0; i < pend.size(); ++i) {
      if (fds[1 + n_out + i].revents)
        on_request(pend[i]);
      else
        pending_.push_back(pend[i]);
    }
    if (listen_ >= 0 && (fds[0].revents & POLLIN)) accept_one();
    reap_out();
    if (Clock::now() - last_ready_reap_ > 1s) reap_ready();
  }
  shutdown();
  return {};
}

void PoolServer::accept_one() {
  int c = accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
  if (c < 0) return;
  // Only the pool's own user may take its runners (the folder is 0700 too).
  if (peer_uid(c) != static_cast<long>(getuid()) || pending_.size() >= 64) {
    ::close(c);
    return;
  }
  pending_.push_back(c);
}

void PoolServer::on_request(int conn) {
  auto m = recv_fd_message(conn, Clock::now() + 100ms);
  if (!m) return (void)::close(conn);
  for (int fd : m->fds) ::close(fd);  // a request hands us nothing
  json req = json::parse(m->bytes, nullptr, false);
  auto reply = [&](json r) {
    r["v"] = kPoolProtocol;
    (void)send_fd_message(conn, r.dump());
    ::close(conn);
  };
  // Whatever arrives is read by type (a wrong one is a refusal, never an exception here).
  JsonFields f(req, "runner pool request");
  if (f.get<int>("v", 0) != kPoolProtocol)
    return reply(
        {{"ok", false}, {"why", fmt::format("this pool speaks protocol {}", kPoolProtocol)}});
  const std::string cmd = f.get<std::string>("cmd", "");
  if (cmd == "take") return take(conn, req);
  if (cmd == "status") return reply(status_json());
  if (cmd == "stop") {
    spdlog::info("runner pool: asked to stop; {} runner(s) still out", out_.size());
    {
      std::lock_guard l(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (listen_ >= 0) ::close(listen_), listen_ = -1;  // nothing new is taken from now on
    end_ready();
    return reply({{"ok", true}});
  }
  reply({{"ok", false}, {"why", "unknown command"}});
}

void PoolServer::take(int conn, const json& req) {
  auto kind = PoolKind::from_json(req.contains("kind") ? req["kind"] : json());
  auto no = [&](const std::string& why) {
    (void)send_fd_message(conn, json{{"v", kPoolProtocol}, {"ok", false}, {"why", why}}.dump());
    ::close(conn);
  };
  if (!kind) return no(kind.error().message);
  const std::string asked = req.contains("runner") && req["runner"].is_string() ? req["runner"].get<std::string>() : "";
  if (asked != runner_.string())
    return no(fmt::format("this pool starts only its own kevo-runner ({}), not '{}'", runner_.string(), asked));
  if (auto changed = file_changed()) return no(*changed);
  const std::string key = kind->key();
  std::optional<Spare> got;
  std::deque<Spare> stale;
  {
    std::lock_guard l(mu_);
    last_take_ = last_activity_ = Clock::now();
    auto it = kinds_.find(key);
    if (it == kinds_.end()) {
      if (static_cast<int>(kinds_.size()) >= o_.max_kinds) {
        auto lru = std::min_element(kinds_.begin(), kinds_.end(), [](const auto& a, const auto& b) {
          return a.second.asked < b.second.asked;
        });
        for (auto& s : lru->second.ready) stale.push_back(std::move(s));
        kinds_.erase(lru);
      }
      it = kinds_.emplace(key, Kind{*kind, {}, {}, 0}).first;
    }
    Kind& k = it->second;
    k.asked = Clock::now();
    k.failures = 0;
    while (!got && !k.ready.empty()) {
      Spare s = std::move(k.ready.front());
      k.ready.pop_front();
      if (waitpid(s.p.child.pid, nullptr, WNOHANG) == 0)
        got = std::move(s);
      else
        s.p.child.pid = -1, stale.push_back(std::move(s));  // died while ready (reaped just now)
    }
    if (got) ++out_alive_;  // before the refill thread wakes: it must see this runner out
  }
  cv_.notify_all();
  for (auto& s : stale) end_spare(s);
  if (!got) return no("none ready");
  const int fds[4] = {got->p.arena_fd, got->p.req_fd, got->p.reply_fd, got->p.child.err_fd};
  json ok = {{"v", kPoolProtocol}, {"ok", true}, {"pid", got->p.child.pid}};
  if (!send_fd_message(conn, ok.dump(), fds)) {
    end_spare(*got);
    --out_alive_;
    ::close(conn);
    return;
  }
  got->p
      .close_fds();  // the taker holds them now: the runner sees EOF when the taker closes its end
  Out x;
  x.conn = conn;
  x.pid = got->p.child.pid;
  x.uuid = got->uuid;
  out_.push_back(std::move(x));
  out_alive_ = out_.size();
  ++taken_;
}

// Whether the file the pool was started from no longer holds its image's bytes (compared again
// only when the file's identity changed): a rebuild, or a replacement. The pool still runs only its
// image; a take that names the path gets none, so its client starts the runner that file is now.
// A refused take is no activity: the pool ends when idle, and the next one reads the new file.
std::optional<std::string> PoolServer::file_changed() {
  const FileId now = file_id(runner_);
  if (!(now == file_seen_)) {
    file_seen_ = now;
    auto digest = file_sha256(runner_);
    const bool same = digest && *digest == image_->sha256();
    if (file_same_ && !same)
      spdlog::warn("runner pool: {} no longer holds the kevo-runner this pool started with (SHA-256 {}); "
                   "takes are refused until it is restarted",
                   runner_.string(), image_->sha256());
    file_same_ = same;
  }
  if (file_same_) return std::nullopt;
  return fmt::format("the kevo-runner at {} changed since this pool started (it runs only the one it read "
                     "then, SHA-256 {}): `kevo runners stop` ends it",
                     runner_.string(), image_->sha256());
}

void PoolServer::on_out_message(Out& x) {
  auto m = recv_fd_message(x.conn, Clock::now());
  if (!m) {
    if (m.error().code != ErrorCode::kTimeout) end_out(x);
    return;
  }
  for (int fd : m->fds) ::close(fd);
  json j = json::parse(m->bytes, nullptr, false);
  if (JsonFields(j, "runner pool message").get<std::string>("cmd", "") == "kill" && !x.killed)
    kill_group(x.pid), x.killed = true;
}

// The taker is gone (it ended, or dropped the runner): the runner goes too, once the GPU is not
// being timed, since a context's teardown stalls the GPU for everyone on it.
void PoolServer::end_out(Out& x) {
  ::close(x.conn);
  x.conn = -1;
  std::thread([state = x.state, uuid = x.uuid] {
    std::optional<GpuLock> lock;
    if (!uuid.empty())
      if (auto l = GpuLock::acquire(uuid, 30s, {}, GpuLock::Mode::Shared))
        lock.emplace(std::move(*l));
    state->kill_now = true;
    for (int i = 0; i < 1500 && !state->reaped; ++i) std::this_thread::sleep_for(2ms);
  }).detach();
}

void PoolServer::reap_out() {
  for (auto it = out_.begin(); it != out_.end();) {
    if (it->state->kill_now && !it->killed) kill_group(it->pid), it->killed = true;
    int status = 0;
    pid_t r = waitpid(it->pid, &status, WNOHANG);
    if (r == 0 || (r < 0 && errno == EINTR)) {
      ++it;
      continue;
    }
    if (it->conn >= 0) {
      (void)send_fd_message(
          it->conn, json{{"v", kPoolProtocol}, {"exit_status", r > 0 ? status : -1}}.dump());
      ::close(it->conn);
    }
    it->state->reaped = true;
    last_activity_ = Clock::now();
    it = out_.erase(it);
    out_alive_ = out_.size();
  }
}

void PoolServer::reap_ready() {
  last_ready_reap_ = Clock::now();
  std::lock_guard l(mu_);
  for (auto& [key, k] : kinds_)
    for (auto it = k.ready.begin(); it != k.ready.end();)
      if (waitpid(it->p.child.pid, nullptr, WNOHANG) != 0) {
        it->p.child.pid = -1;
        end_spare(*it);
        it = k.ready.erase(it);
      } else {
        ++it;
      }
}

void PoolServer::end_ready() {
  std::deque<Spare> all;
  {
    std::lock_guard l(mu_);
    for (auto& [key, k] : kinds_)
      for (auto& s : k.ready) all.push_back(std::move(s));
    kinds_.clear();
  }
  for (auto& s : all) end_spare(s);
}

json PoolServer::status_json() {
  std::lock_guard l(mu_);
  int ready = 0;
  for (const auto& [key, k] : kinds_) ready += static_cast<int>(k.ready.size());
  return {{"ok", true},
          {"pid", static_cast<long>(getpid())},
          {"kinds", kinds_.size()},
          {"ready", ready},
          {"handed_out", out_.size()},
          {"started", started_.load()},
          {"taken", taken_.load()},
          {"failed", failed_.load()},
          {"spares", o_.spares},
          {"idle_exit_s", static_cast<double>(o_.idle_exit.count())}};
}

std::optional<std::string> PoolServer::short_kind() const {
  for (const auto& [key, k] : kinds_)
    if (static_cast<int>(k.ready.size()) < o_.spares && k.failures < 2) return key;
  return std::nullopt;
}

// This thread forks every runner, and a runner dies with the thread that forked it
// (PR_SET_PDEATHSIG): it lives until the pool ends (exit_), not just until it stops taking.
void PoolServer::refill_loop() {
  std::unique_lock l(mu_);
  while (!exit_) {
    auto key = stopping_ ? std::nullopt : short_kind();
    const auto since_take = Clock::now() - last_take_;
    if (!key || since_take < o_.refill_delay ||
        (out_alive_ > 0 && since_take < o_.busy_refill_delay)) {
      cv_.wait_for(l, 50ms);
      continue;
    }
    const PoolKind spec = kinds_.at(*key).spec;
    const std::string uuid = kinds_.at(*key).uuid;
    l.unlock();
    auto spare = start_spare(spec, uuid);
    l.lock();
    auto it = kinds_.find(*key);
    if (!spare) {
      ++failed_;
      spdlog::warn("runner pool: a runner ({}) did not start: {}", spec.key(), spare.error().message);
      if (it != kinds_.end()) ++it->second.failures;
      continue;
    }
    if (it == kinds_.end() || stopping_) {
      end_spare(*spare);
      continue;
    }
    ++started_;
    it->second.failures = 0;
    it->second.uuid = spare->uuid;
    it->second.ready.push_back(std::move(*spare));
  }
}

// Starts one runner and waits for its hello, under the GPU's shared lock (known from an earlier
// runner's hello), giving up early when the pool stops.
Result<Spare> PoolServer::start_spare(const PoolKind& spec, const std::string& uuid) {
  std::optional<GpuLock> lock;
  for (int i = 0; !uuid.empty() && !lock && i < 150 && !stopping(); ++i)
    if (auto g = GpuLock::acquire(uuid, 200ms, {}, GpuLock::Mode::Shared))
      lock.emplace(std::move(*g));
  RunnerOptions ro;
  ro.runner = runner_;
  ro.image = image_;
  ro.env_exact = pool_runner_env(env_, spec);
  ro.cwd = "/";
  auto p = spawn_runner(ro);
  if (!p) return p.unexpected();
  Spare s{*p, ""};
  auto give_up = [&](Error e) {
    end_spare(s);
    return Unexpected{std::move(e)};
  };
  if (auto w = write_message(s.p.req_fd, json(proto::HelloRequest{})); !w)
    return give_up(w.error());
  const auto deadline = Clock::now() + 60s;
  Result<json> r = fail(ErrorCode::kTimeout, "no hello within 60 s");
  while (Clock::now() < deadline && !stopping()) {
    r = read_message(s.p.reply_fd, std::min(deadline, Clock::now() + 200ms));
    if (r || r.error().code != ErrorCode::kTimeout) break;
  }
  if (!r) return give_up(r.error());
  JsonFields hello(*r, "hello reply");
  if (!hello.get<bool>("ok", false))
    return give_up(Error{hello.get<std::string>("error", "refused hello")});
  auto h = proto::decode<proto::HelloReply>(*r, "hello reply");
  if (!h) return give_up(h.error());
  s.uuid = h->uuid;
  return s;
}

void PoolServer::shutdown() {
  {
    std::lock_guard l(mu_);
    stopping_ = exit_ = true;
  }
  cv_.notify_all();
  if (refill_.joinable()) refill_.join();
  end_ready();
  for (int c : pending_) ::close(c);
  for (Out& x : out_) {  // signalled: what is out dies with the pool anyway
    kill_group(x.pid);
    while (waitpid(x.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    if (x.conn >= 0) ::close(x.conn);
  }
  if (listen_ >= 0) ::close(listen_);
}

}  // namespace

Status serve_runner_pool(const PoolServerOptions& o) {
  fs::path dir = o.dir;
  if (dir.empty()) {
    auto d = pool_dir(true);
    if (!d) return d.unexpected();
    dir = *d;
  }
  const fs::path lock_path = dir / "pool.lock";
  int lock = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0)
    return fail(ErrorCode::kIo, "cannot open {}: {}", lock_path.string(), std::strerror(errno));
  if (flock(lock, LOCK_EX | LOCK_NB) != 0) {
    char buf[32] = {};
    (void)!pread(lock, buf, sizeof buf - 1, 0);
    ::close(lock);
    return fail("another runner pool (pid {}) serves {}",
                std::string(buf).substr(0, std::string(buf).find('\n')), dir.string());
  }
  const std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(lock, 0) != 0 || pwrite(lock, pid.data(), pid.size(), 0) < 0)
    spdlog::warn("runner pool: cannot write its pid to {}", lock_path.string());
  std::optional<fs::path> runner = o.runner.empty() ? find_runner() : std::optional<fs::path>(o.runner);
  std::error_code ec;
  if (!runner || !fs::is_regular_file(*runner, ec))
    return ::close(lock), fail(ErrorCode::kNotFound, "runner pool: no kevo-runner to start (set KEVO_RUNNER)");
  auto image = RunnerImage::read(fs::weakly_canonical(*runner, ec), o.runner_sha256);
  if (!image) return ::close(lock), fail("runner pool: not started: {}", image.error().message);
  const fs::path sock = pool_socket(dir);
  ::unlink(sock.c_str());  // a dead pool's (we hold the lock: no live pool listens there)
  auto listen_fd = listen_seqpacket(sock);
  if (!listen_fd) return ::close(lock), listen_fd.unexpected();
  signal(SIGPIPE, SIG_IGN);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  spdlog::info("runner pool {} serving {} ({} ready per kind, ends after {} s idle), starting {} (SHA-256 {}, "
               "read once into a sealed memfd)",
               getpid(), sock.string(), o.spares, o.idle_exit.count(), (*image)->path().string(), (*image)->sha256());
  Status st = PoolServer(o, *listen_fd, *image, child_environment({}, runner_secret_prefixes())).run();
  ::unlink(sock.c_str());
  ::close(lock);
  return st;
}

}  // namespace kevo
