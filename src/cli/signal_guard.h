// A signal handler installed for one scope: the handler that was there before is back when the
// scope ends, on every return path. Commands install their Ctrl-C (and a worker's SIGTERM)
// handler with it around the work a signal should stop cleanly. Thread-safety: construct and
// destroy on one thread; the handler itself must be async-signal-safe.
#pragma once

#include <csignal>

namespace kevo::cli {

class SignalGuard {
 public:
  using Handler = decltype(std::signal(SIGINT, SIG_DFL));

  SignalGuard(int signum, Handler handler) : signum_(signum), previous_(std::signal(signum, handler)) {}
  ~SignalGuard() { restore(); }
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

  // The previous handler back now, before the scope ends (the destructor then leaves it).
  void restore() {
    if (active_) std::signal(signum_, previous_);
    active_ = false;
  }

 private:
  int signum_;
  Handler previous_;
  bool active_ = true;
};

}  // namespace kevo::cli
