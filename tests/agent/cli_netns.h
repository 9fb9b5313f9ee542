// A network namespace with loopback only, for tests that run real agent CLIs: once entered, a
// request to anything but 127.0.0.1 fails, so a CLI that phones home fails its test instead of
// leaking. As root, unshare(CLONE_NEWNET); otherwise a user namespace first (the calling process
// must be single-threaded then). It applies to the calling thread and what it starts afterwards.
#pragma once

#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

namespace kevo::test {

inline bool write_proc(const char* file, const std::string& text) {
  std::ofstream f(file);
  f << text;
  return static_cast<bool>(f.flush());
}

// "" when entered, else why not.
inline std::string enter_loopback_netns() {
  const uid_t uid = geteuid();
  const gid_t gid = getegid();
  if (uid == 0) {
    if (unshare(CLONE_NEWNET) != 0) return std::string("unshare(CLONE_NEWNET): ") + strerror(errno);
  } else {
    if (unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) return std::string("unshare(CLONE_NEWUSER|NEWNET): ") + strerror(errno);
    // Keep the same ids inside, so files the CLIs write are the user's.
    write_proc("/proc/self/setgroups", "deny");
    if (!write_proc("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1\n") ||
        !write_proc("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1\n"))
      return "cannot write the user namespace's id maps";
  }
  // `ip link set lo up`, without needing iproute2.
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return std::string("socket: ") + strerror(errno);
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  bool up = ioctl(s, SIOCGIFFLAGS, &ifr) == 0;
  ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
  up = up && ioctl(s, SIOCSIFFLAGS, &ifr) == 0;
  const int err = errno;
  close(s);
  return up ? "" : std::string("bringing lo up: ") + strerror(err);
}

}  // namespace kevo::test
