#include "util/fd_passing.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kevo {
namespace {

constexpr size_t kMaxBytes = 64 << 10;
constexpr size_t kMaxFds = 16;

Result<sockaddr_un> address_of(const std::filesystem::path& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  const std::string p = path.string();
  if (p.size() >= sizeof a.sun_path)
    return fail("socket path {} is longer than {} bytes (set a shorter folder)", p,
                sizeof a.sun_path - 1);
  std::memcpy(a.sun_path, p.c_str(), p.size() + 1);
  return a;
}

}  // namespace

Status send_fd_message(int sock, const std::string& bytes, std::span<const int> fds) {
  if (bytes.size() > kMaxBytes || fds.size() > kMaxFds)
    return fail("message of {} bytes with {} fds is over the limit", bytes.size(), fds.size());
  iovec iov{const_cast<char*>(bytes.data()), bytes.size()};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
  if (!fds.empty()) {
    m.msg_control = control;
    m.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  for (;;) {
    ssize_t n = sendmsg(sock, &m, MSG_NOSIGNAL);
    if (n == static_cast<ssize_t>(bytes.size())) return {};
    if (n < 0 && errno == EINTR) continue;
    return fail(
        n < 0 && (errno == EPIPE || errno == ECONNRESET) ? ErrorCode::kClosed : ErrorCode::kIo,
        "sending on the socket: {}", n < 0 ? std::strerror(errno) : "short write");
  }
}

Result<FdMessage> recv_fd_message(int sock, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{sock, POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>(std::max<long long>(0, left.count())));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return fail(ErrorCode::kIo, "poll: {}", std::strerror(errno));
    if (r == 0) return fail(ErrorCode::kTimeout, "no message in time");
    break;
  }
  FdMessage out;
  out.bytes.resize(kMaxBytes);
  iovec iov{out.bytes.data(), out.bytes.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = control;
  m.msg_controllen = sizeof control;
  ssize_t n;
  do n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0 && errno == ECONNRESET)
    return fail(ErrorCode::kClosed, "the peer reset the connection");
  if (n < 0) return fail(ErrorCode::kIo, "recvmsg: {}", std::strerror(errno));
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      const auto* data = reinterpret_cast<const int*>(CMSG_DATA(c));
      out.fds.insert(out.fds.end(), data, data + k);
    }
  // A message cut short, or fds cut off, would hand over half a runner: refuse it whole.
  if ((m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0) {
    for (int fd : out.fds) ::close(fd);
    return fail(ErrorCode::kIo, "a message or its fds were truncated");
  }
  if (n == 0 && out.fds.empty()) return fail(ErrorCode::kClosed, "the peer closed the connection");
  out.bytes.resize(static_cast<size_t>(n));
  return out;
}

namespace {
// A SOCK_SEQPACKET socket at `path`, connected (`serve` false) or bound and listening.
Result<int> seqpacket_at(const std::filesystem::path& path, bool serve) {
  auto a = address_of(path);
  if (!a) return a.unexpected();
  int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (s < 0) return fail(ErrorCode::kIo, "socket: {}", std::strerror(errno));
  const auto* addr = reinterpret_cast<const sockaddr*>(&*a);
  // No umask games for the listener (process-wide, racy with threads): its folder is 0700.
  const bool ok =
      serve ? bind(s, addr, sizeof *a) == 0 && chmod(path.c_str(), 0600) == 0 && listen(s, 64) == 0
            : connect(s, addr, sizeof *a) == 0;
  if (ok) return s;
  const int e = errno;
  ::close(s);
  const bool absent = !serve && (e == ENOENT || e == ECONNREFUSED);
  return fail(absent ? ErrorCode::kNotFound : ErrorCode::kIo, "{} {}: {}",
              serve ? "listen on" : "connect", path.string(), std::strerror(e));
}
}  // namespace

Result<int> connect_seqpacket(const std::filesystem::path& path) {
  return seqpacket_at(path, false);
}

Result<int> listen_seqpacket(const std::filesystem::path& path) {
  return seqpacket_at(path, true);
}

long peer_uid(int sock) {
  ucred c{};
  socklen_t len = sizeof c;
  if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &c, &len) != 0) return -1;
  return static_cast<long>(c.uid);
}

}  // namespace kevo
