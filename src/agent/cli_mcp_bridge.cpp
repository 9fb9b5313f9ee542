#include "agent/cli_mcp_bridge.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kevo::agent {

namespace fs = std::filesystem;

namespace {

constexpr size_t kTail = 8192;

Result<sockaddr_un> socket_address(const fs::path& p) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (p.string().size() >= sizeof a.sun_path)
    return fail("MCP bridge: the socket path {} is longer than {} bytes", p.string(), sizeof a.sun_path - 1);
  std::memcpy(a.sun_path, p.c_str(), p.string().size());
  return a;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

Result<std::unique_ptr<McpBridgeHost>> McpBridgeHost::listen_on(const fs::path& socket_path) {
  auto addr = socket_address(socket_path);
  if (!addr) return addr.unexpected();
  std::unique_ptr<McpBridgeHost> h(new McpBridgeHost());
  h->socket_path_ = socket_path;
  if (pipe2(h->stop_pipe_, O_CLOEXEC) != 0) return fail("MCP bridge: pipe: {}", strerror(errno));
  h->listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (h->listen_fd_ < 0) return fail("MCP bridge: socket: {}", strerror(errno));
  std::error_code ec;
  fs::remove(socket_path, ec);
  if (bind(h->listen_fd_, reinterpret_cast<const sockaddr*>(&*addr), sizeof *addr) != 0 ||
      listen(h->listen_fd_, 1) != 0)
    return fail("MCP bridge: cannot listen on {}: {}", socket_path.string(), strerror(errno));
  return h;
}

Result<std::unique_ptr<McpBridgeHost>> McpBridgeHost::start(const fs::path& socket_path,
                                                            std::vector<std::string> command,
                                                            std::vector<std::string> env_drop_prefixes,
                                                            fs::path stderr_log) {
  if (command.empty()) return fail("MCP bridge: no server command");
  auto h = listen_on(socket_path);
  if (!h) return h.unexpected();
  (*h)->stderr_log_ = std::move(stderr_log);
  (*h)->command_ = std::move(command), (*h)->drop_ = std::move(env_drop_prefixes);
  (*h)->thread_ = std::thread([p = h->get()] { p->serve(); });
  return std::move(*h);
}

Result<std::unique_ptr<McpBridgeHost>> McpBridgeHost::start_in_process(const fs::path& socket_path,
                                                                       std::function<void(int fd)> serve) {
  if (!serve) return fail("MCP bridge: nothing to serve the session");
  auto h = listen_on(socket_path);
  if (!h) return h.unexpected();
  (*h)->serve_here_ = std::move(serve);
  (*h)->thread_ = std::thread([p = h->get()] { p->serve(); });
  return std::move(*h);
}

void McpBridgeHost::serve_here(int conn) {
  conn_fd_ = conn;
  serve_here_(conn);
  {
    std::lock_guard lock(mu_);
    conn_fd_ = -1;
    ::close(conn);
    status_ = 0;
  }
  child_done_ = true;
}

McpBridgeHost::~McpBridgeHost() {
  finish(std::chrono::milliseconds(0));
  for (int* fd : {&stop_pipe_[0], &stop_pipe_[1], &listen_fd_}) close_fd(*fd);
}

// Accepts the one connection, runs the server on it, keeps its stderr, reaps it.
void McpBridgeHost::serve() {
  pollfd p[2] = {{listen_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
  while (poll(p, 2, -1) < 0 && errno == EINTR) {
  }
  int conn = (p[0].revents & POLLIN) ? accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC) : -1;
  close_fd(listen_fd_);
  std::error_code ec;
  fs::remove(socket_path_, ec);
  if (conn < 0) return;
  connected_ = true;
  if (serve_here_) return serve_here(conn);
  // The connection is the server's stdin and stdout (fd 3 moved onto 0 and 1 by a shell that then
  // becomes the server): the session's bytes never pass through kevo.
  SpawnOptions so;
  so.argv = {"/bin/sh", "-c", "exec \"$0\" \"$@\" <&3 >&3 3>&-"};
  so.argv.insert(so.argv.end(), command_.begin(), command_.end());
  so.pass_fds = {conn};
  so.env_drop_prefixes = drop_;
  so.die_with_parent = true;
  Result<Child> child = fail("not started");
  {
    std::lock_guard lock(mu_);  // finish() either sees the pid or keeps the server from starting
    if (!killed_) child = spawn_process(so);
    if (!child) start_error_ = killed_ ? "the episode ended before the server started" : child.error().message;
    if (child) child_pid_ = child->pid;
  }
  close_fd(conn);
  if (!child) return;
  close_fd(child->in_fd);
  close_fd(child->out_fd);
  watch_server(child->pid, child->err_fd);
  close_fd(child->err_fd);
}

// Keeps the server's stderr until it is closed and the server reaped; a process the server started
// that holds its stderr open keeps this no longer than a second after the server ended.
void McpBridgeHost::watch_server(int pid, int err_fd) {
  using Clock = std::chrono::steady_clock;
  int log = stderr_log_.empty() ? -1 : open(stderr_log_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  bool err_open = true;
  std::optional<Clock::time_point> ended;
  int status = 0;
  char buf[4096];
  while (err_open || !ended) {
    pollfd pf{err_fd, POLLIN, 0};
    if (err_open && poll(&pf, 1, 100) > 0) {
      ssize_t n = read(err_fd, buf, sizeof buf);
      if (n > 0) {
        if (log >= 0) (void)!write(log, buf, static_cast<size_t>(n));
        std::lock_guard lock(mu_);
        stderr_tail_.append(buf, static_cast<size_t>(n));
        if (stderr_tail_.size() > 2 * kTail) stderr_tail_.erase(0, stderr_tail_.size() - kTail);
      } else if (n == 0 || errno != EINTR) {
        err_open = false;
      }
    } else if (!err_open) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!ended && waitpid(pid, &status, WNOHANG) == pid) ended = Clock::now();
    if (ended && Clock::now() - *ended > std::chrono::seconds(1)) break;
  }
  if (log >= 0) ::close(log);
  std::lock_guard lock(mu_);
  if (!killed_) status_ = status;
  child_done_ = true;
}

void McpBridgeHost::finish(std::chrono::milliseconds grace) {
  if (finished_.exchange(true)) return;
  if (stop_pipe_[1] >= 0) (void)!write(stop_pipe_[1], "x", 1);  // stops waiting for a connection
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (connected_ && !child_done_ && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  {
    std::lock_guard lock(mu_);
    if (!child_done_) {
      killed_ = true;
      if (child_pid_ > 0) kill(-child_pid_, SIGKILL);
      // In process: the session ends as if its client left (what runs is finished first).
      if (conn_fd_ >= 0) ::shutdown(conn_fd_, SHUT_RDWR);
    }
  }
  if (thread_.joinable()) thread_.join();
}

std::optional<int> McpBridgeHost::server_status() const {
  std::lock_guard lock(mu_);
  return status_;
}

std::string McpBridgeHost::start_error() const {
  std::lock_guard lock(mu_);
  return start_error_;
}

std::string McpBridgeHost::stderr_tail() const {
  std::lock_guard lock(mu_);
  return stderr_tail_.size() > kTail ? stderr_tail_.substr(stderr_tail_.size() - kTail) : stderr_tail_;
}

}  // namespace kevo::agent
