// One timer per GPU: a second holder waits (and is told who holds it), gives up after its timeout
// with an error naming the lock, and gets the GPU as soon as the first lets go or dies.
#include "util/gpu_lock.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "support/temp_dir.h"

using namespace kevo;
using namespace std::chrono_literals;

class GpuLockTest : public testing::Test {
 protected:
  void SetUp() override { setenv("KEVO_LOCK_DIR", dir_.path.c_str(), 1); }
  void TearDown() override { unsetenv("KEVO_LOCK_DIR"); }
  test::TempDir dir_;
};

TEST_F(GpuLockTest, SecondHolderWaitsThenTimesOut) {
  auto a = GpuLock::acquire("GPU-abc", 1s);
  ASSERT_TRUE(a) << a.error().message;
  // Another process (flock locks belong to open files: a child opens its own).
  pid_t pid = fork();
  if (pid == 0) {
    std::string seen;
    auto b = GpuLock::acquire("GPU-abc", 200ms, [&](const std::string& who) { seen = who; });
    _exit(!b && seen.find("pid ") == 0 && b.error().message.find("being timed by pid") != std::string::npos ? 0 : 1);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

TEST_F(GpuLockTest, ReleasedOrDeadHolderFreesTheGpu) {
  pid_t pid = fork();
  if (pid == 0) {
    auto a = GpuLock::acquire("GPU-dead", 1s);
    if (!a) _exit(2);
    _exit(0);  // dies holding it: the kernel drops the lock with the process
  }
  int st = 0;
  waitpid(pid, &st, 0);
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  auto b = GpuLock::acquire("GPU-dead", 200ms);
  EXPECT_TRUE(b) << (b ? "" : b.error().message);
  {
    auto c = GpuLock::acquire("GPU-other", 200ms);  // another GPU is another lock
    EXPECT_TRUE(c);
  }
  EXPECT_TRUE(std::filesystem::exists(GpuLock::path_for("GPU-dead")));
}

TEST_F(GpuLockTest, CorrectnessChecksShareTimingWaitsForThem) {
  auto a = GpuLock::acquire("GPU-rw", 1s, {}, GpuLock::Mode::Shared);
  ASSERT_TRUE(a) << a.error().message;
  pid_t pid = fork();
  if (pid == 0) {
    auto b = GpuLock::acquire("GPU-rw", 200ms, {}, GpuLock::Mode::Shared);  // another check: shares
    auto c = GpuLock::acquire("GPU-rw", 200ms);                             // a timer: must wait
    _exit(b && !c ? 0 : 1);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}
