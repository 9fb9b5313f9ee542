#include "cli_netns.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace kevo::test {

namespace {

std::string why(const std::string& what) { return what + ": " + strerror(errno); }

bool write_proc(const char* file, const std::string& text) {
  std::ofstream f(file);
  f << text;
  return static_cast<bool>(f.flush());
}

std::string bring_lo_up() {  // `ip link set lo up`, without needing iproute2
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return why("socket");
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  bool up = ioctl(s, SIOCGIFFLAGS, &ifr) == 0;
  ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
  up = up && ioctl(s, SIOCSIFFLAGS, &ifr) == 0;
  std::string err = up ? "" : why("bringing lo up");
  close(s);
  return err;
}

// `ip route add local 0.0.0.0/0 dev lo table local`, over rtnetlink.
std::string add_anyip_route() {
  struct {
    nlmsghdr nh;
    rtmsg rt;
    char attrs[32];
  } req{};
  req.nh.nlmsg_type = RTM_NEWROUTE;
  req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK;
  req.rt.rtm_family = AF_INET;
  req.rt.rtm_table = RT_TABLE_LOCAL;
  req.rt.rtm_protocol = RTPROT_BOOT;
  req.rt.rtm_scope = RT_SCOPE_HOST;
  req.rt.rtm_type = RTN_LOCAL;
  auto* attr = reinterpret_cast<rtattr*>(req.attrs);
  attr->rta_type = RTA_OIF;
  attr->rta_len = RTA_LENGTH(sizeof(int));
  const int lo = static_cast<int>(if_nametoindex("lo"));
  std::memcpy(RTA_DATA(attr), &lo, sizeof lo);
  req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(rtmsg)) + RTA_ALIGN(attr->rta_len);
  int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (s < 0) return why("netlink socket");
  std::string err;
  char reply[256];
  if (send(s, &req, req.nh.nlmsg_len, 0) < 0) {
    err = why("netlink send");
  } else if (recv(s, reply, sizeof reply, 0) < static_cast<ssize_t>(NLMSG_LENGTH(sizeof(nlmsgerr)))) {
    err = why("netlink reply");
  } else if (int e = -reinterpret_cast<nlmsgerr*>(NLMSG_DATA(reply))->error; e != 0) {
    err = std::string("adding the AnyIP route: ") + strerror(e);
  }
  close(s);
  return err;
}

// The name a DNS query asks for (its first question), or "?".
std::string dns_name(const unsigned char* p, size_t n) {
  std::string name;
  for (size_t i = 12; i < n && p[i] != 0;) {
    const size_t len = p[i++];
    if (len > 63 || i + len > n) return "?";
    if (!name.empty()) name += '.';
    name.append(reinterpret_cast<const char*>(p + i), len);
    i += len;
  }
  return name.empty() ? "?" : name;
}

}  // namespace

std::string enter_loopback_netns() {
  const uid_t uid = geteuid();
  const gid_t gid = getegid();
  if (uid == 0) {
    if (unshare(CLONE_NEWNET) != 0) return why("unshare(CLONE_NEWNET)");
  } else {
    if (unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) return why("unshare(CLONE_NEWUSER | CLONE_NEWNET)");
    write_proc("/proc/self/setgroups", "deny");  // keep the same ids inside: files stay the user's
    if (!write_proc("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1\n") ||
        !write_proc("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1\n"))
      return "cannot write the user namespace's id maps";
  }
  if (std::string e = bring_lo_up(); !e.empty()) return e;
  return add_anyip_route();
}

std::string Tripwire::start() {
  if (pipe2(stop_, O_CLOEXEC) != 0) return why("pipe");
  const std::pair<int, int> listeners[] = {{SOCK_DGRAM, 53}, {SOCK_STREAM, 53}, {SOCK_STREAM, 80}, {SOCK_STREAM, 443}};
  for (auto [type, port] : listeners) {
    int s = socket(AF_INET, type | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    if (s < 0 || bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || (type == SOCK_STREAM && listen(s, 16) != 0))
      return why("tripwire on port " + std::to_string(port));
    fds_.push_back(s);
  }
  thread_ = std::thread([this] { watch(); });
  return "";
}

Tripwire::~Tripwire() {
  if (stop_[1] >= 0) (void)!write(stop_[1], "x", 1);
  if (thread_.joinable()) thread_.join();
  for (int fd : fds_) close(fd);
  for (int fd : stop_)
    if (fd >= 0) close(fd);
}

std::vector<std::string> Tripwire::attempts() const {
  std::lock_guard lock(mu_);
  return attempts_;
}

void Tripwire::record(std::string what) {
  std::lock_guard lock(mu_);
  attempts_.push_back(std::move(what));
}

void Tripwire::watch() {
  std::vector<pollfd> p;
  for (int fd : fds_) p.push_back({fd, POLLIN, 0});
  p.push_back({stop_[0], POLLIN, 0});
  while (poll(p.data(), p.size(), -1) >= 0 && !p.back().revents) {
    for (size_t i = 0; i + 1 < p.size(); ++i) {
      if (!p[i].revents) continue;
      if (i == 0) {  // UDP 53: log the name, answer REFUSED so the resolver gives up at once
        unsigned char q[512];
        sockaddr_in from{};
        socklen_t len = sizeof from;
        ssize_t n = recvfrom(p[i].fd, q, sizeof q, 0, reinterpret_cast<sockaddr*>(&from), &len);
        if (n < 12) continue;
        record("DNS query for " + dns_name(q, static_cast<size_t>(n)));
        q[2] |= 0x80;                                   // a response
        q[3] = static_cast<unsigned char>((q[3] & 0xF0) | 5);  // REFUSED
        sendto(p[i].fd, q, static_cast<size_t>(n), 0, reinterpret_cast<sockaddr*>(&from), len);
      } else {
        int c = accept4(p[i].fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (c >= 0) close(c);
        record("TCP connection to port " + std::to_string(i == 1 ? 53 : i == 2 ? 80 : 443));
      }
    }
  }
}

}  // namespace kevo::test
