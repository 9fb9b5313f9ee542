#include "llm/clock.h"

#include <algorithm>
#include <thread>

namespace kevo::llm {

namespace {
class RealClock final : public Clock {
 public:
  double now() override {
    return Seconds(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  double wall_now() override {
    return Seconds(std::chrono::system_clock::now().time_since_epoch()).count();
  }
  bool sleep_for(Seconds d, const CancelToken& cancel) override {
    // Short slices keep Ctrl-C responsive during a long Retry-After.
    const auto end = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(d);
    while (!cancel.cancelled()) {
      auto left = end - std::chrono::steady_clock::now();
      if (left <= std::chrono::steady_clock::duration::zero()) return true;
      std::this_thread::sleep_for(
          std::min<std::chrono::steady_clock::duration>(left, std::chrono::milliseconds(50)));
    }
    return false;
  }
};
}  // namespace

Clock& real_clock() {
  static RealClock clock;
  return clock;
}

}  // namespace kevo::llm
