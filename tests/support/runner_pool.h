// A runner pool for one test: `kevo runners serve` (the built binary) in a process of its own, on a
// scratch folder, with the environment's KEVO_RUNNER_POOL set to `use` while it lives. Header-only.
#pragma once

#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "run/runner_pool.h"
#include "support/temp_dir.h"
#include "util/subprocess.h"

namespace kevo::test {

class PoolForTest {
 public:
  // Starts the pool (spares per kind, refills at once, or busy_refill_ms after a take while a
  // runner handed out is alive); ok() says whether it answers.
  // `runner`: the binary the pool starts (empty: kevo's own kevo-runner).
  explicit PoolForTest(int spares = 2, int busy_refill_ms = 0, const std::filesystem::path& runner = {}) {
    ::setenv("KEVO_RUNNER_POOL_DIR", (dir_.path / "pool").c_str(), 1);
    ::setenv("KEVO_RUNNER_POOL", "use", 1);
    SpawnOptions so;
    // Its log goes to a file (a pipe nobody reads would fill and stall it): log() reads it.
    so.argv = {"/bin/sh",
               "-c",
               "exec \"$0\" runners serve --spares \"$1\" --idle-exit 120 --refill-delay-ms 0 "
               "--busy-refill-delay-ms \"$3\" ${4:+--runner \"$4\"} >>\"$2\" 2>&1",
               std::string(KEVO_BINARY_DIR) + "/bin/kevo",
               std::to_string(spares),
               (dir_.path / "serve.log").string(),
               std::to_string(busy_refill_ms),
               runner.string()};
    so.null_stdio = true;
    so.die_with_parent = true;
    if (auto c = spawn_process(so)) child_ = *c;
    for (int i = 0; i < 250 && child_.pid > 0 && !pool_status(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ~PoolForTest() {
    (void)stop_pool();
    if (child_.pid > 0 && wait_for_exit(child_, std::chrono::seconds(10)))
      child_.pid = -1;      // reaped
    kill_and_reap(child_);  // a pool that did not stop; closes the pipes either way
    ::setenv("KEVO_RUNNER_POOL", "off", 1);
    ::unsetenv("KEVO_RUNNER_POOL_DIR");
  }
  bool ok() const { return static_cast<bool>(pool_status()); }
  // Waits until `ready` runners are ready in all (up to 20 s).
  bool wait_ready(int ready) const {
    for (int i = 0; i < 1000; ++i) {
      if (auto s = pool_status(); s && s->ready >= ready) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  Child& child() { return child_; }
  std::string log() const {
    std::ifstream f(dir_.path / "serve.log");
    return std::string(std::istreambuf_iterator<char>(f), {});
  }

 private:
  TempDir dir_{"kevo-pool-test"};
  Child child_;
};

}  // namespace kevo::test
