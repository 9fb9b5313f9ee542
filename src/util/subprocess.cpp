#include "util/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>

extern char** environ;

namespace kevo {
namespace {

using Clock = std::chrono::steady_clock;

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

std::vector<std::string> child_environment(const std::map<std::string, std::string>& add,
                                           const std::vector<std::string>& drop_prefixes,
                                           const std::vector<std::string>* base) {
  std::vector<std::string> from;
  if (base) from = *base;
  else
    for (char** e = environ; e && *e; ++e) from.emplace_back(*e);
  std::vector<std::string> env;
  for (std::string& kv : from) {
    auto eq = kv.find('=');
    std::string key = kv.substr(0, eq);
    bool dropped = false;
    for (const auto& p : drop_prefixes) dropped = dropped || key.rfind(p, 0) == 0;
    if (!add.count(key) && !dropped) env.push_back(std::move(kv));
  }
  for (const auto& [k, v] : add) env.push_back(k + "=" + v);
  return env;
}

void apply_limits_in_child(const ProcessLimits& limits) {
  struct rlimit rl;
  if (limits.no_core_dump) {
    rl.rlim_cur = rl.rlim_max = 0;
    setrlimit(RLIMIT_CORE, &rl);
  }
  if (limits.max_file_bytes) {
    rl.rlim_cur = rl.rlim_max = static_cast<rlim_t>(*limits.max_file_bytes);
    setrlimit(RLIMIT_FSIZE, &rl);
  }
  if (limits.max_open_files) {
    rl.rlim_cur = rl.rlim_max = static_cast<rlim_t>(*limits.max_open_files);
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  if (limits.max_cpu_seconds) {
    rl.rlim_cur = rl.rlim_max = static_cast<rlim_t>(*limits.max_cpu_seconds);
    setrlimit(RLIMIT_CPU, &rl);
  }
  if (limits.landlock_ruleset_fd >= 0) {
#ifdef SYS_landlock_restrict_self
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
        syscall(SYS_landlock_restrict_self, limits.landlock_ruleset_fd, 0) == 0)
      return;
#endif
    static const char kMsg[] = "kevo: cannot apply the Landlock file sandbox\n";
    (void)!write(2, kMsg, sizeof kMsg - 1);
    _exit(127);
  }
}

Result<Child> spawn_process(const SpawnOptions& opts) {
  if (opts.argv.empty()) return fail("spawn: empty command line");
  int in_p[2], out_p[2], err_p[2];
  if (pipe2(in_p, O_CLOEXEC) != 0) return fail("spawn {}: pipe: {}", opts.argv[0], strerror(errno));
  if (pipe2(out_p, O_CLOEXEC) != 0) {
    ::close(in_p[0]), ::close(in_p[1]);
    return fail("spawn {}: pipe: {}", opts.argv[0], strerror(errno));
  }
  if (pipe2(err_p, O_CLOEXEC) != 0) {
    ::close(in_p[0]), ::close(in_p[1]), ::close(out_p[0]), ::close(out_p[1]);
    return fail("spawn {}: pipe: {}", opts.argv[0], strerror(errno));
  }
  // Everything the child needs is prepared before fork: only async-signal-safe calls after it.
  std::vector<std::string> env =
      child_environment(opts.env_add, opts.env_drop_prefixes, opts.env_exact ? &*opts.env_exact : nullptr);
  std::vector<char*> argv, envp;
  for (const auto& a : opts.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  int exec_err[2];
  if (pipe2(exec_err, O_CLOEXEC) != 0) return fail("spawn: pipe: {}", strerror(errno));

  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return fail("spawn {}: fork: {}", opts.argv[0], strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    if (opts.die_with_parent) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);  // the parent died before prctl took effect
    }
    // Move passed fds out of the way first so dup2 onto 3, 4, ... cannot clobber a source.
    int moved[16];
    size_t npass = std::min<size_t>(opts.pass_fds.size(), 16);
    for (size_t i = 0; i < npass; ++i) moved[i] = fcntl(opts.pass_fds[i], F_DUPFD_CLOEXEC, 64);
    const int exec_fd = opts.exec_fd < 0 ? -1 : fcntl(opts.exec_fd, opts.exec_fd_script ? F_DUPFD : F_DUPFD_CLOEXEC, 64);
    if (opts.null_stdio) {
      int nul = open("/dev/null", O_RDWR);
      dup2(nul, 0);
      dup2(nul, 1);
    } else {
      dup2(in_p[0], 0);
      dup2(out_p[1], 1);
    }
    dup2(err_p[1], 2);
    for (size_t i = 0; i < npass; ++i) dup2(moved[i], static_cast<int>(3 + i));
    if (opts.cwd && chdir(opts.cwd->c_str()) != 0) {
      int e = errno;
      (void)!write(exec_err[1], &e, sizeof e);
      _exit(127);
    }
    apply_limits_in_child(opts.limits);
    if (opts.exec_fd >= 0)
      syscall(SYS_execveat, exec_fd, "", argv.data(), envp.data(), AT_EMPTY_PATH);
    else
      execvpe(argv[0], argv.data(), envp.data());
    int e = errno;
    (void)!write(exec_err[1], &e, sizeof e);
    _exit(127);
  }
  setpgid(pid, pid);  // also from the parent, so kill(-pid) works even before the child runs
  ::close(in_p[0]);
  ::close(out_p[1]);
  ::close(err_p[1]);
  ::close(exec_err[1]);
  int child_errno = 0;
  ssize_t n = read(exec_err[0], &child_errno, sizeof child_errno);
  ::close(exec_err[0]);
  if (n == static_cast<ssize_t>(sizeof child_errno)) {
    int status;
    waitpid(pid, &status, 0);
    ::close(in_p[1]), ::close(out_p[0]), ::close(err_p[0]);
    return fail(child_errno == ENOENT ? ErrorCode::kNotFound : ErrorCode::kUnspecified, "cannot run '{}': {}",
                opts.argv[0], strerror(child_errno));
  }
  Child c;
  c.pid = pid;
  c.in_fd = in_p[1];
  c.out_fd = out_p[0];
  c.err_fd = err_p[0];
  return c;
}

int kill_and_reap(Child& child) {
  int status = 0;
  if (child.pid > 0) {
    kill(-child.pid, SIGKILL);
    kill(child.pid, SIGKILL);
    while (waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
    }
    child.pid = -1;
  }
  close_fd(child.in_fd);
  close_fd(child.out_fd);
  close_fd(child.err_fd);
  return status;
}

std::optional<int> wait_for_exit(const Child& child, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  for (;;) {
    int status = 0;
    pid_t r = waitpid(child.pid, &status, WNOHANG);
    if (r == child.pid) return status;
    if (r < 0 && errno != EINTR) return 0;
    if (Clock::now() >= deadline) return std::nullopt;
    usleep(2000);
  }
}

std::string describe_wait_status(int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    return fmt::format("killed by signal {} ({})", sig, strsignal(sig));
  }
  if (WIFEXITED(status)) return fmt::format("exit code {}", WEXITSTATUS(status));
  return fmt::format("wait status {}", status);
}

std::string RunResult::describe() const {
  if (timed_out) return fmt::format("timed out after {:.1f} s", wall_seconds);
  if (signaled) return fmt::format("killed by signal {} ({})", term_signal, strsignal(term_signal));
  return fmt::format("exit code {}", exit_code);
}

Result<RunResult> run_process(const RunOptions& opts) {
  SpawnOptions so;
  so.argv = opts.argv;
  so.cwd = opts.cwd;
  so.env_add = opts.env_add;
  so.limits = opts.limits;
  auto start = Clock::now();
  auto child = spawn_process(so);
  if (!child) return child.unexpected();
  Child c = *child;
  RunResult res;
  // Non-blocking pipes: feed stdin and drain stdout/stderr in one poll loop so neither side stalls.
  for (int fd : {c.in_fd, c.out_fd, c.err_fd}) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  size_t in_off = 0;
  if (opts.stdin_data.empty()) close_fd(c.in_fd);
  auto deadline = start + opts.timeout;
  char buf[65536];
  while (c.out_fd >= 0 || c.err_fd >= 0) {
    auto now = Clock::now();
    if (now >= deadline) {
      res.timed_out = true;
      break;
    }
    int ms = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count()) + 1;
    std::vector<pollfd> pfds;
    if (c.in_fd >= 0) pfds.push_back({c.in_fd, POLLOUT, 0});
    if (c.out_fd >= 0) pfds.push_back({c.out_fd, POLLIN, 0});
    if (c.err_fd >= 0) pfds.push_back({c.err_fd, POLLIN, 0});
    int pr = poll(pfds.data(), pfds.size(), std::min(ms, 200));
    if (pr < 0 && errno != EINTR) break;
    for (auto& p : pfds) {
      if (!p.revents) continue;
      if (p.fd == c.in_fd) {
        ssize_t w = write(c.in_fd, opts.stdin_data.data() + in_off, opts.stdin_data.size() - in_off);
        if (w > 0) in_off += static_cast<size_t>(w);
        if (w < 0 && errno != EAGAIN && errno != EINTR) in_off = opts.stdin_data.size();
        if (in_off >= opts.stdin_data.size()) close_fd(c.in_fd);
        continue;
      }
      bool is_out = p.fd == c.out_fd;
      ssize_t r = read(p.fd, buf, sizeof buf);
      if (r > 0) {
        std::string& dst = is_out ? res.out : res.err;
        size_t room = opts.max_output_bytes > dst.size() ? opts.max_output_bytes - dst.size() : 0;
        dst.append(buf, std::min(room, static_cast<size_t>(r)));
      } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
        close_fd(is_out ? c.out_fd : c.err_fd);
      }
    }
  }
  int status = 0;
  if (res.timed_out) {
    status = kill_and_reap(c);
  } else {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    auto st = wait_for_exit(c, std::max(left, std::chrono::milliseconds(1)));
    if (!st) {
      res.timed_out = true;
      status = kill_and_reap(c);
    } else {
      status = *st;
      c.pid = -1;
      kill_and_reap(c);  // closes the remaining fds
    }
  }
  res.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (!res.timed_out) {
    if (WIFSIGNALED(status)) {
      res.signaled = true;
      res.term_signal = WTERMSIG(status);
    } else if (WIFEXITED(status)) {
      res.exit_code = WEXITSTATUS(status);
    }
  }
  return res;
}

std::optional<std::string> find_program(const std::string& name) {
  namespace fs = std::filesystem;
  if (name.find('/') != std::string::npos) {
    if (access(name.c_str(), X_OK) == 0) return name;
    return std::nullopt;
  }
  const char* path = getenv("PATH");
  std::string p = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    std::string dir = p.substr(start, end - start);
    if (!dir.empty()) {
      std::string cand = dir + "/" + name;
      if (access(cand.c_str(), X_OK) == 0 && !fs::is_directory(cand)) return cand;
    }
    start = end + 1;
  }
  return std::nullopt;
}

}  // namespace kevo
