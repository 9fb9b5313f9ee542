// Time as a dependency: the retry loop asks a Clock for "now" and for sleeps, so tests run
// backoff schedules instantly and can assert on the delays chosen.
#pragma once

#include <chrono>

#include "llm/cancel.h"

namespace kevo::llm {

using Seconds = std::chrono::duration<double>;

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic seconds, for latency.
  virtual double now() = 0;
  // Seconds since the Unix epoch, for HTTP-date Retry-After values.
  virtual double wall_now() = 0;
  // Sleeps up to `d`; returns false early if `cancel` fires.
  virtual bool sleep_for(Seconds d, const CancelToken& cancel) = 0;
};

// The process-wide real clock.
Clock& real_clock();

}  // namespace kevo::llm
