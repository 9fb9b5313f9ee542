// A cancellation flag shared by a caller (e.g. the Ctrl-C handler) and every call it started.
// Checked between attempts, while waiting for a concurrency slot or a backoff, and during the
// transfer itself, so a cancelled call returns promptly and writes nothing.
#pragma once

#include <atomic>

namespace kevo::llm {

class CancelToken {
 public:
  // Async-signal-safe: a lock-free atomic store.
  void cancel() { flag_.store(true, std::memory_order_relaxed); }
  bool cancelled() const { return flag_.load(std::memory_order_relaxed); }
  void reset() { flag_.store(false, std::memory_order_relaxed); }

 private:
  std::atomic<bool> flag_{false};
};

}  // namespace kevo::llm
