// The candidate runner's seccomp filter, installed in a child process: what a kernel never needs
// is refused (EPERM), what the CUDA runtime needs (threads, plain memory) still works. And the
// runner binary itself is linked with full RELRO and immediate binding.
#include "runner/seccomp.h"

#include <gtest/gtest.h>

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "util/subprocess.h"

using namespace kevo;

namespace {

// Runs `probe` in a child after installing the filter; the child's exit code is the probe's.
int in_sandbox(int (*probe)()) {
  pid_t pid = fork();
  if (pid == 0) {
    auto st = runner::install_candidate_filter();
    if (!st.installed) _exit(100);
    _exit(probe());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status);
}

bool have_filter() {
  pid_t pid = fork();
  if (pid == 0) _exit(runner::install_candidate_filter().installed ? 0 : 1);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

TEST(Seccomp, RefusesProcessesTracingAndExecutableMemory) {
  if (!have_filter()) GTEST_SKIP() << "built without libseccomp (or the kernel refuses filters): not tested";
  // fork: refused.
  EXPECT_EQ(in_sandbox([] { return fork() < 0 && errno == EPERM ? 0 : 1; }), 0);
  // execve: refused.
  EXPECT_EQ(in_sandbox([] {
              char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
              execv("/bin/true", argv);
              return errno == EPERM ? 0 : 1;
            }),
            0);
  // Making memory executable after the fact, or writable and executable at once: refused.
  EXPECT_EQ(in_sandbox([] {
              void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
              if (p == MAP_FAILED) return 2;
              return mprotect(p, 4096, PROT_READ | PROT_EXEC) != 0 && errno == EPERM ? 0 : 1;
            }),
            0);
  EXPECT_EQ(in_sandbox([] {
              void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
              return p == MAP_FAILED && errno == EPERM ? 0 : 1;
            }),
            0);
}

// A candidate must not reach the network (a worker's PostgreSQL run database above all: it could
// write its own verdict there) nor any local socket (the runner pool starts runners on request).
TEST(Seccomp, RefusesEverySocket) {
  if (!have_filter()) GTEST_SKIP() << "built without libseccomp (or the kernel refuses filters): not tested";
  EXPECT_EQ(in_sandbox([] { return socket(AF_INET, SOCK_STREAM, 0) < 0 && errno == EACCES ? 0 : 1; }), 0);
  EXPECT_EQ(in_sandbox([] { return socket(AF_INET6, SOCK_DGRAM, 0) < 0 && errno == EACCES ? 0 : 1; }), 0);
  EXPECT_EQ(in_sandbox([] { return socket(AF_UNIX, SOCK_SEQPACKET, 0) < 0 && errno == EACCES ? 0 : 1; }), 0);
  EXPECT_EQ(in_sandbox([] {
              int sv[2];
              return socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 && errno == EACCES ? 0 : 1;
            }),
            0);
}

// Code that would run by itself while the runner waits (a signal handler fired by a timer or by
// SIGIO): no way to arrange it is left.
TEST(Seccomp, RefusesTimersAndAsynchronousSignals) {
  if (!have_filter()) GTEST_SKIP() << "built without libseccomp (or the kernel refuses filters): not tested";
  EXPECT_EQ(in_sandbox([] {
              itimerval t{{0, 1000}, {0, 1000}};
              return setitimer(ITIMER_REAL, &t, nullptr) != 0 && errno == EPERM ? 0 : 1;
            }),
            0);
  EXPECT_EQ(in_sandbox([] { return syscall(SYS_alarm, 1) != 0 && errno == EPERM ? 0 : 1; }), 0);
  EXPECT_EQ(in_sandbox([] {
              timer_t id;
              sigevent ev{};
              ev.sigev_notify = SIGEV_SIGNAL;
              ev.sigev_signo = SIGALRM;
              return timer_create(CLOCK_MONOTONIC, &ev, &id) != 0 && errno == EPERM ? 0 : 1;
            }),
            0);
  EXPECT_EQ(in_sandbox([] {
              int p[2];
              if (pipe(p) != 0) return 2;
              const bool owner = fcntl(p[0], F_SETOWN, getpid()) != 0 && errno == EPERM;
              const bool async = fcntl(p[0], F_SETFL, O_ASYNC | O_NONBLOCK) != 0 && errno == EPERM;
              int on = 1;
              const bool fioasync = ioctl(p[0], FIOASYNC, &on) != 0 && errno == EPERM;
              const bool plain = fcntl(p[0], F_SETFL, O_NONBLOCK) == 0;  // what is not async still works
              return owner && async && fioasync && plain ? 0 : 1;
            }),
            0);
  EXPECT_EQ(in_sandbox([] { return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0 && errno == EPERM ? 0 : 1; }), 0);
}

// The filter binds threads that were running before it was installed (the CUDA driver's).
TEST(Seccomp, BindsThreadsStartedBefore) {
  if (!have_filter()) GTEST_SKIP() << "built without libseccomp (or the kernel refuses filters): not tested";
  pid_t pid = fork();
  if (pid == 0) {
    std::atomic<int> go{0}, result{-1};
    std::thread t([&] {
      while (go.load() == 0) std::this_thread::yield();
      result = socket(AF_INET, SOCK_STREAM, 0) < 0 && errno == EACCES ? 0 : 1;
    });
    if (!runner::install_candidate_filter().installed) _exit(100);
    go = 1;
    t.join();
    _exit(result.load());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

// The runner's environment holds no credentials: the run database's URL and password, LLM keys.
TEST(RunnerEnv, SecretsAreNotPassedToProcessesThatRunCandidates) {
  setenv("PGPASSWORD", "hunter2", 1);
  setenv("KEVO_DB", "postgresql://kevo:pw@db/kevo", 1);
  setenv("OPENAI_API_KEY", "sk-x", 1);
  setenv("KEVO_SECCOMP_TEST_KEEP", "kept", 1);
  auto c = spawn_process({.argv = {"/bin/sh", "-c", "env > /dev/stderr"},
                          .env_drop_prefixes = {"PG", "KEVO_DB", "OPENAI_"},
                          .null_stdio = true});
  ASSERT_TRUE(c);
  std::string err;
  char buf[4096];
  for (ssize_t n; (n = read(c->err_fd, buf, sizeof buf)) > 0;) err.append(buf, static_cast<size_t>(n));
  kill_and_reap(*c);
  EXPECT_EQ(err.find("hunter2"), std::string::npos);
  EXPECT_EQ(err.find("KEVO_DB="), std::string::npos);
  EXPECT_EQ(err.find("sk-x"), std::string::npos);
  EXPECT_NE(err.find("KEVO_SECCOMP_TEST_KEEP=kept"), std::string::npos) << err;
  for (const char* k : {"PGPASSWORD", "KEVO_DB", "OPENAI_API_KEY", "KEVO_SECCOMP_TEST_KEEP"}) unsetenv(k);
}

TEST(Seccomp, ThreadsAndPlainMemoryStillWork) {
  if (!have_filter()) GTEST_SKIP() << "built without libseccomp (or the kernel refuses filters): not tested";
  EXPECT_EQ(in_sandbox([] {
              int x = 0;
              std::thread t([&] { x = 1; });
              t.join();
              void* p = mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
              if (p == MAP_FAILED || mprotect(p, 4096, PROT_READ) != 0) return 2;
              return x == 1 ? 0 : 1;
            }),
            0);
}

TEST(RunnerBinary, FullRelroAndBindNow) {
  std::filesystem::path bin = std::filesystem::path(KEVO_BINARY_DIR) / "bin" / "kevo-runner";
  if (!std::filesystem::exists(bin)) GTEST_SKIP() << "kevo-runner not built here (no CUDA toolkit)";
  if (!find_program("readelf")) GTEST_SKIP() << "readelf not installed";
  RunOptions o;
  o.argv = {"readelf", "-d", "-l", bin.string()};
  auto r = run_process(o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_NE(r->out.find("GNU_RELRO"), std::string::npos);
  EXPECT_NE(r->out.find("BIND_NOW"), std::string::npos) << "kevo-runner must be linked with -z now";
}

// Other processes of the user's (the checker, the runner pool, other runners) cannot be signalled,
// and no socket can listen (posing as the runner pool); signalling itself still works (abort).
TEST(Seccomp, RefusesSignalsToOthersAndListeningSockets) {
  if (!have_filter()) GTEST_SKIP() << "built without libseccomp (or the kernel refuses filters): not tested";
  EXPECT_EQ(in_sandbox([] { return kill(getppid(), 0) != 0 && errno == EPERM ? 0 : 1; }), 0);
  EXPECT_EQ(in_sandbox([] { return kill(0, 0) != 0 && errno == EPERM ? 0 : 1; }), 0);
  EXPECT_EQ(in_sandbox([] { return kill(getpid(), 0) == 0 ? 0 : 1; }), 0);
  // An inherited socket cannot listen either.
  int inherited = socket(AF_UNIX, SOCK_SEQPACKET, 0);
  ASSERT_GE(inherited, 0);
  static int s_fd;
  s_fd = inherited;
  EXPECT_EQ(in_sandbox([] { return listen(s_fd, 1) != 0 && errno == EPERM ? 0 : 1; }), 0);
  close(inherited);
  EXPECT_EQ(in_sandbox([] {
              raise(SIGUSR1);  // tgkill to itself: allowed, so the default action ends the process
              return 1;
            }),
            200 + SIGUSR1);
}
