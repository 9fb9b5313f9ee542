// The confined side of the MCP bridge (cli_mcp_bridge.h), in kevo-mcp-bridge: a byte relay, one
// thread per direction, so that neither can stall the other.
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "agent/cli_mcp_bridge.h"

namespace kevo::agent {

namespace {

// Copies until `from` ends; false when `to` refused bytes.
bool copy(int from, int to) {
  char buf[65536];
  for (;;) {
    ssize_t n = read(from, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    for (ssize_t off = 0; off < n;) {
      ssize_t w = write(to, buf + off, static_cast<size_t>(n - off));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      off += w;
    }
  }
}

}  // namespace

int run_bridge_client(const std::string& socket_path) {
  signal(SIGPIPE, SIG_IGN);  // a server that went away is a write error, not a signal
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof a.sun_path) {
    std::fprintf(stderr, "kevo-mcp-bridge: socket path too long: %s\n", socket_path.c_str());
    return 1;
  }
  std::memcpy(a.sun_path, socket_path.c_str(), socket_path.size());
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0 || connect(s, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    std::fprintf(stderr, "kevo-mcp-bridge: cannot reach kevo's MCP server at %s: %s\n", socket_path.c_str(),
                 strerror(errno));
    return 1;
  }
  std::thread up([s] {
    copy(0, s);
    shutdown(s, SHUT_WR);  // the client is done: the server sees the end of its stdin
  });
  up.detach();  // it may sit in read(stdin) after the server ended; the process ends anyway
  copy(s, 1);
  return 0;
}

}  // namespace kevo::agent
