#include "agent/cli_run.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <optional>

#include "util/subprocess.h"

namespace kevo::agent {

namespace {

using Clock = std::chrono::steady_clock;

void keep_tail(std::string& dst, const char* data, size_t n, size_t keep) {
  dst.append(data, n);
  if (dst.size() > 2 * keep) dst.erase(0, dst.size() - keep);
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Pumps stdin, stdout and stderr for up to `ms`; false once both outputs are closed.
bool pump(Child& c, const CliRunOptions& o, size_t& in_off, CliRunResult& r, int ms) {
  std::vector<pollfd> p;
  if (c.in_fd >= 0) p.push_back({c.in_fd, POLLOUT, 0});
  if (c.out_fd >= 0) p.push_back({c.out_fd, POLLIN, 0});
  if (c.err_fd >= 0) p.push_back({c.err_fd, POLLIN, 0});
  if (c.out_fd < 0 && c.err_fd < 0) {
    usleep(static_cast<useconds_t>(ms) * 1000);  // a CLI that closed both and still runs: no spinning
    return false;
  }
  if (poll(p.data(), p.size(), ms) <= 0) return true;
  char buf[65536];
  for (const auto& e : p) {
    if (!e.revents) continue;
    if (e.fd == c.in_fd) {
      ssize_t w = write(c.in_fd, o.stdin_data.data() + in_off, o.stdin_data.size() - in_off);
      if (w > 0) in_off += static_cast<size_t>(w);
      if ((w < 0 && errno != EAGAIN && errno != EINTR) || in_off >= o.stdin_data.size()) close_fd(c.in_fd);
      continue;
    }
    const bool is_out = e.fd == c.out_fd;
    ssize_t n = read(e.fd, buf, sizeof buf);
    if (n > 0) {
      keep_tail(is_out ? r.out : r.err, buf, static_cast<size_t>(n), is_out ? o.keep_stdout : o.keep_stderr);
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      close_fd(is_out ? c.out_fd : c.err_fd);
    }
  }
  return true;
}

void trim(std::string& s, size_t keep) {
  if (s.size() > keep) s.erase(0, s.size() - keep);
}

}  // namespace

Result<CliRunResult> run_cli(const CliRunOptions& o) {
  // A CLI that exits before it reads its prompt is a result (its exit code), not a SIGPIPE that
  // kills kevo while it writes the prompt.
  signal(SIGPIPE, SIG_IGN);
  SpawnOptions so;
  so.argv = o.argv;
  so.env_exact = o.env;
  so.cwd = o.cwd.string();
  so.limits.landlock_ruleset_fd = o.landlock_ruleset_fd;
  so.die_with_parent = true;
  const auto start = Clock::now();
  auto child = spawn_process(so);
  if (!child) return child.unexpected();
  Child c = *child;
  for (int fd : {c.in_fd, c.out_fd, c.err_fd}) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  if (o.stdin_data.empty()) close_fd(c.in_fd);
  CliRunResult r;
  size_t in_off = 0;
  std::optional<Clock::time_point> exited, termed;
  int status = 0;
  for (;;) {
    const bool open = pump(c, o, in_off, r, 50);
    if (!exited && waitpid(c.pid, &status, WNOHANG) == c.pid) exited = Clock::now();
    // Once the CLI has exited, what it left running gets a moment to flush, no more.
    if (exited && (!open || Clock::now() - *exited > std::chrono::seconds(1))) break;
    if (!exited && !termed && (Clock::now() - start >= o.wall_limit || (o.stop && o.stop()))) {
      r.timed_out = true;
      termed = Clock::now();
      kill(-c.pid, SIGTERM);
    }
    if (termed && !exited && Clock::now() - *termed >= o.term_grace) {
      kill(-c.pid, SIGKILL);
      while (waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
      }
      exited = Clock::now();
    }
  }
  kill(-c.pid, SIGKILL);  // the agent's leftovers in the CLI's process group
  for (int* fd : {&c.in_fd, &c.out_fd, &c.err_fd}) close_fd(*fd);
  r.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (!r.timed_out) {
    r.signaled = WIFSIGNALED(status);
    r.term_signal = r.signaled ? WTERMSIG(status) : 0;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  trim(r.out, o.keep_stdout);
  trim(r.err, o.keep_stderr);
  return r;
}

}  // namespace kevo::agent
