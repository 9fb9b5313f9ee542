#include "util/subprocess.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "support/temp_dir.h"

using namespace kevo;
using namespace std::chrono_literals;

TEST(Subprocess, CapturesOutputAndExitCode) {
  auto r = run_process({.argv = {"sh", "-c", "echo out; echo err >&2; exit 3"}});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  EXPECT_FALSE(r->ok());
}

TEST(Subprocess, FeedsStdin) {
  std::string big(1 << 20, 'x');
  auto r = run_process({.argv = {"wc", "-c"}, .stdin_data = big});
  ASSERT_TRUE(r);
  EXPECT_EQ(std::stol(r->out), 1 << 20);
}

TEST(Subprocess, TimeoutKillsTheWholeGroup) {
  // The grandchild (sleep) must die too, or the pipe would stay open and this would hang.
  auto r = run_process({.argv = {"sh", "-c", "sleep 30 & sleep 30"}, .timeout = 300ms});
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->timed_out);
  EXPECT_LT(r->wall_seconds, 5.0);
  EXPECT_NE(r->describe().find("timed out"), std::string::npos);
}

TEST(Subprocess, ReportsSignals) {
  auto r = run_process({.argv = {"sh", "-c", "kill -SEGV $$"}});
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->signaled);
  EXPECT_EQ(r->term_signal, 11);
}

TEST(Subprocess, MissingProgramIsAnError) {
  auto r = run_process({.argv = {"/nonexistent/kevo-no-such-program"}});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("kevo-no-such-program"), std::string::npos);
}

TEST(Subprocess, FileSizeLimitApplies) {
  ProcessLimits lim;
  lim.max_file_bytes = 4096;
  kevo::test::TempDir dir;
  auto r = run_process({.argv = {"sh", "-c", "head -c 100000 /dev/zero > /dev/null; "
                                             "head -c 100000 /dev/zero > \"$T\""},
                        .env_add = {{"T", (dir.path / "big").string()}},
                        .limits = lim});
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->ok());
}

TEST(Subprocess, ChildDiesWithItsParent) {
  // A process that spawns a long sleep with die_with_parent, reports its pid, then dies: the sleep
  // must not outlive it (this is what keeps a hung candidate from surviving a killed checker).
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t mid = fork();
  ASSERT_GE(mid, 0);
  if (mid == 0) {
    SpawnOptions so;
    so.argv = {"sleep", "30"};
    so.die_with_parent = true;
    auto c = spawn_process(so);
    int pid = c ? c->pid : -1;
    (void)!write(fds[1], &pid, sizeof pid);
    _exit(0);
  }
  int pid = -1;
  ASSERT_EQ(read(fds[0], &pid, sizeof pid), static_cast<ssize_t>(sizeof pid));
  waitpid(mid, nullptr, 0);
  ASSERT_GT(pid, 0);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    // Gone, or a zombie waiting for init to reap it.
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string s;
    std::getline(stat, s);
    gone = s.empty() || s.find(") Z") != std::string::npos;
    if (!gone) usleep(20000);
  }
  EXPECT_TRUE(gone) << "the child outlived its parent";
}
