// A network namespace with loopback only, for tests that run real agent CLIs, and a tripwire in it.
// Once entered, nothing outside the machine can be reached, so a CLI that phones home cannot leak;
// and every IPv4 address is made local (an "AnyIP" route on lo), so that what a CLI tries anyway
// lands on the tripwire and fails the test instead of failing quietly: a DNS query (UDP or TCP port
// 53, answered REFUSED at once), or a TCP connection to port 80 or 443. Connections the agent's
// sandbox refuses (any TCP port but the model's) never leave the CLI, so DNS is where an attempt to
// reach a real host shows.
//
// As root, unshare(CLONE_NEWNET); otherwise a user namespace first (the calling process must be
// single-threaded then). It applies to the calling thread and what it starts afterwards.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kevo::test {

// "" when entered (lo up, the AnyIP route added), else why not.
std::string enter_loopback_netns();

class Tripwire {
 public:
  // Listens on 0.0.0.0 at UDP 53 and TCP 53, 80, 443; "" on success, else why not.
  std::string start();
  ~Tripwire();
  // What was tried: "DNS query for api.anthropic.com", "TCP connection to port 443", ...
  std::vector<std::string> attempts() const;

 private:
  void watch();
  void record(std::string what);
  std::vector<int> fds_;
  int stop_[2] = {-1, -1};
  std::thread thread_;
  mutable std::mutex mu_;
  std::vector<std::string> attempts_;
};

}  // namespace kevo::test
