// Per-provider limits on requests in flight, shared by every client of a run, so an ensemble
// of several models on one provider still respects that provider's rate limits.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "llm/cancel.h"

namespace kevo::llm {

class Semaphore {
 public:
  explicit Semaphore(int count) : count_(count) {}
  // Waits for a slot; false if `cancel` fired first (no slot is then held).
  bool acquire(const CancelToken& cancel);
  void release();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int count_;
};

// Holds a slot for a scope.
class SemaphoreSlot {
 public:
  explicit SemaphoreSlot(Semaphore& s) : s_(&s) {}
  ~SemaphoreSlot() { s_->release(); }
  SemaphoreSlot(const SemaphoreSlot&) = delete;
  SemaphoreSlot& operator=(const SemaphoreSlot&) = delete;

 private:
  Semaphore* s_;
};

class ConcurrencyLimits {
 public:
  // The semaphore for `provider`, created with `limit` slots on first use.
  std::shared_ptr<Semaphore> get(const std::string& provider, int limit);

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Semaphore>> sems_;
};

}  // namespace kevo::llm
