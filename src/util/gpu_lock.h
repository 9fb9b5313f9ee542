// One timer per GPU: a lock file per GPU uuid, held exclusively (flock) while anything is timed on
// that GPU and shared while correctness checks run, so two kevo processes (two evaluations, two
// runs, sharded tests) never time on the same GPU at once, nor while another checks correctness
// there; correctness checks of several candidates share it. A timer waiting announces itself on a
// second "intent" lock, which new shared holders pass through, so timers are not starved. The lock dies with its
// process (flock), so a killed kevo never leaves a GPU locked.
// Where: $KEVO_LOCK_DIR, else /tmp/kevo-gpu-locks (shared by every user's kevo on the machine).
// Thread-safety: one GpuLock per holder; the kernel serializes holders.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

#include "util/result.h"

namespace kevo {

class GpuLock {
 public:
  // Waits up to `timeout` for the GPU; `on_wait` is called once if the lock is taken when asked
  // (so a user sees why nothing moves). An error names the lock file and who holds it, if known.
  enum class Mode { Exclusive, Shared };
  static Result<GpuLock> acquire(const std::string& gpu_uuid, std::chrono::milliseconds timeout,
                                 const std::function<void(const std::string& holder)>& on_wait = {},
                                 Mode mode = Mode::Exclusive);
  GpuLock(GpuLock&& o) noexcept : fd_(o.fd_), intent_fd_(o.intent_fd_), waited_s_(o.waited_s_) {
    o.fd_ = o.intent_fd_ = -1;
  }
  GpuLock& operator=(GpuLock&&) = delete;
  GpuLock(const GpuLock&) = delete;
  ~GpuLock();
  double waited_seconds() const { return waited_s_; }
  static std::filesystem::path path_for(const std::string& gpu_uuid);

 private:
  GpuLock(int fd, int intent_fd, double waited) : fd_(fd), intent_fd_(intent_fd), waited_s_(waited) {}
  int fd_ = -1, intent_fd_ = -1;
  double waited_s_ = 0;
};

}  // namespace kevo
