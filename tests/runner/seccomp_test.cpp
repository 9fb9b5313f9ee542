// The candidate runner's seccomp filter, installed in a child process: what a kernel never needs
// is refused (EPERM), what the CUDA runtime needs (threads, plain memory) still works. And the
// runner binary itself is linked with full RELRO and immediate binding.
#include "runner/seccomp.h"

#include <gtest/gtest.h>

#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

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
// write its own verdict there); local sockets, which the CUDA driver may use, still work.
TEST(Seccomp, RefusesNetworkSocketsKeepsLocalOnes) {
  if (!have_filter()) GTEST_SKIP() << "built without libseccomp (or the kernel refuses filters): not tested";
  EXPECT_EQ(in_sandbox([] { return socket(AF_INET, SOCK_STREAM, 0) < 0 && errno == EACCES ? 0 : 1; }), 0);
  EXPECT_EQ(in_sandbox([] { return socket(AF_INET6, SOCK_DGRAM, 0) < 0 && errno == EACCES ? 0 : 1; }), 0);
  EXPECT_EQ(in_sandbox([] {
              int fd = socket(AF_UNIX, SOCK_STREAM, 0);
              if (fd < 0) return 1;
              close(fd);
              return 0;
            }),
            0);
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
  EXPECT_EQ(in_sandbox([] {
              int s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
              if (s < 0) return 2;
              return listen(s, 1) != 0 && errno == EPERM ? 0 : 1;
            }),
            0);
  EXPECT_EQ(in_sandbox([] {
              raise(SIGUSR1);  // tgkill to itself: allowed, so the default action ends the process
              return 1;
            }),
            200 + SIGUSR1);
}
