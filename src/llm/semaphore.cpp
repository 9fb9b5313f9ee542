#include "llm/semaphore.h"

#include <chrono>

namespace kevo::llm {

bool Semaphore::acquire(const CancelToken& cancel) {
  std::unique_lock lock(mu_);
  // Woken by release(); the timeout only bounds how late a cancellation is noticed.
  while (count_ <= 0) {
    if (cancel.cancelled()) return false;
    cv_.wait_for(lock, std::chrono::milliseconds(50));
  }
  if (cancel.cancelled()) return false;
  --count_;
  return true;
}

void Semaphore::release() {
  {
    std::lock_guard lock(mu_);
    ++count_;
  }
  cv_.notify_one();
}

std::shared_ptr<Semaphore> ConcurrencyLimits::get(const std::string& provider, int limit) {
  std::lock_guard lock(mu_);
  auto& s = sems_[provider];
  if (!s) s = std::make_shared<Semaphore>(limit < 1 ? 1 : limit);
  return s;
}

}  // namespace kevo::llm
