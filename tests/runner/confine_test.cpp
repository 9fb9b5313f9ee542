// A candidate's runner after runner::confine_process, against the real processes it must not
// reach: a real kevo-runner (the trusted one: its request pipe), a real runner pool (`kevo runners
// serve`: its socket), the checker (this test process: its environment, where secrets live) and a
// compile cache (a root-owned folder with a kernel.so). Each reach is first made from a process
// that is not confined, as on the design before confinement (the candidate's runner had only the
// seccomp filter): there it succeeds, so the probe can tell; confined, it must fail.
#include "runner/confine.h"

#include <gtest/gtest.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <grp.h>

#include <filesystem>
#include <thread>
#include <fstream>
#include <string>

#include "run/runner_client.h"
#include "support/runner_pool.h"
#include "support/temp_dir.h"

using namespace kevo;
namespace fs = std::filesystem;

namespace {

// What a hostile candidate tries; each returns true when the reach succeeded.
struct Targets {
  int runner_pid = -1;
  int checker_pid = -1;
  fs::path pool_socket, cache_file;
};

bool open_runner_pipe(const Targets& t) {
  const std::string p = "/proc/" + std::to_string(t.runner_pid) + "/fd/4";
  int fd = open(p.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  close(fd);
  return true;
}

// The environment the checker started with (where its credentials are): any byte of it.
bool read_checker_environ(const Targets& t) {
  std::ifstream in("/proc/" + std::to_string(t.checker_pid) + "/environ");
  return in && in.get() != std::char_traits<char>::eof();
}

bool read_checker_cmdline(const Targets& t) {
  std::ifstream in("/proc/" + std::to_string(t.checker_pid) + "/cmdline");
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return !all.empty();
}

bool connect_pool(const Targets& t) {
  int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (s < 0) return false;
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", t.pool_socket.c_str());
  const bool ok = connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(s);
  return ok;
}

bool write_cache(const Targets& t) {
  int fd = open(t.cache_file.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = write(fd, "x", 1) == 1;
  close(fd);
  return ok;
}

bool signal_checker(const Targets& t) { return kill(t.checker_pid, 0) == 0; }

using Reach = bool (*)(const Targets&);
struct NamedReach {
  const char* name;
  Reach fn;
};
constexpr NamedReach kReaches[] = {{"open the trusted runner's request pipe", open_runner_pipe},
                                   {"read the checker's environment", read_checker_environ},
                                   {"read the checker's command line", read_checker_cmdline},
                                   {"connect to the runner pool", connect_pool},
                                   {"write the compile cache", write_cache},
                                   {"signal the checker", signal_checker}};

// Runs every reach in a child (confined first, or not); bit i of the result: reach i succeeded.
// 255: the confinement itself failed.
enum class Confined { kNo, kFully, kUnderTool };
int reaches_in_child(const Targets& t, Confined how) {
  pid_t pid = fork();
  if (pid == 0) {
    if (how != Confined::kNo) {
      const bool tool = how == Confined::kUnderTool;
      proto::Isolation iso = runner::confine_process({.identity_only = tool});
      if (iso.seccomp == tool || (tool && iso.landlock_abi != 0) || getuid() == 0) _exit(255);
    }
    int bits = 0;
    for (size_t i = 0; i < std::size(kReaches); ++i)
      if (kReaches[i].fn(t)) bits |= 1 << i;
    _exit(bits);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 254;
}

std::string describe(int bits) {
  std::string s;
  for (size_t i = 0; i < std::size(kReaches); ++i)
    if (bits & (1 << i)) s += std::string(s.empty() ? "" : ", ") + kReaches[i].name;
  return s.empty() ? "nothing" : s;
}

fs::path runner_binary() { return fs::path(KEVO_BINARY_DIR) / "bin" / "kevo-runner"; }

}  // namespace

TEST(Confine, ACandidateReachesNoOtherProcessFileOrSocket) {
  if (geteuid() != 0) GTEST_SKIP() << "runs as root (CI, the GPU machines): the identity drop is what it tests";
  if (!fs::exists(runner_binary())) GTEST_SKIP() << "kevo-runner not built here (no CUDA toolkit)";
  test::TempDir dir;
  // The trusted runner: a real kevo-runner, waiting for its first request (it needs no GPU for that).
  auto trusted = spawn_runner({.runner = runner_binary()});
  ASSERT_TRUE(trusted) << trusted.error().message;
  test::PoolForTest pool(1);
  ASSERT_TRUE(pool.ok()) << pool.log();
  auto pdir = pool_dir(false);
  ASSERT_TRUE(pdir);
  fs::create_directories(dir.path / "cache" / "abc");
  const fs::path so = dir.path / "cache" / "abc" / "kernel.so";
  std::ofstream(so) << "ELF";
  fs::permissions(so, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  Targets t{trusted->child.pid, static_cast<int>(getpid()), pool_socket(*pdir), so};
  // Before confinement the checker itself must be undumpable too (kevo sets it in main).
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);

  const int all = (1 << std::size(kReaches)) - 1;
  EXPECT_EQ(reaches_in_child(t, Confined::kNo), all) << "unconfined, the probe must reach everything: "
                                                     << describe(reaches_in_child(t, Confined::kNo));
  const int confined = reaches_in_child(t, Confined::kFully);
  ASSERT_NE(confined, 255) << "the confinement could not be set up here";
  // Without Landlock, /proc/<pid>/cmdline stays world-readable (no secrets are passed there).
  const int allowed = runner::landlock_abi_version() > 0 ? 0 : 1 << 2;
  EXPECT_EQ(confined & ~allowed, 0) << "a confined candidate could still: " << describe(confined);
  // Under a tool (compute-sanitizer, ncu: no Landlock, no filter) the identity alone still keeps it
  // from every process, socket and file above; only the command line stays readable.
  const int under_tool = reaches_in_child(t, Confined::kUnderTool);
  ASSERT_NE(under_tool, 255) << "the tool's confinement could not be set up here";
  EXPECT_EQ(under_tool & ~(1 << 2), 0) << "a candidate under a tool could still: " << describe(under_tool);
  prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
  kill_and_reap(trusted->child);
  trusted->close_fds();
}

// Every runner is undumpable from its start: another process of its own user cannot open its
// /proc entries (a candidate's runner, same user, reopening a trusted runner's pipes). Both run as
// nobody here (setpriv), so only the flag can refuse it; a dumpable process of that user is the
// control.
TEST(Confine, EveryRunnerIsUndumpableFromItsStart) {
  if (!fs::exists(runner_binary())) GTEST_SKIP() << "kevo-runner not built here (no CUDA toolkit)";
  if (geteuid() != 0 || !find_program("setpriv")) GTEST_SKIP() << "needs root and setpriv to run both as nobody";
  const std::vector<std::string> as_nobody = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
  auto r = spawn_runner({.runner = runner_binary(), .launcher = as_nobody});
  ASSERT_TRUE(r) << r.error().message;
  SpawnOptions so;
  so.argv = as_nobody;
  so.argv.insert(so.argv.end(), {"sleep", "30"});
  so.null_stdio = true;
  auto control = spawn_process(so);
  ASSERT_TRUE(control);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // both have exec'd as nobody
  auto readable_as_nobody = [](int target) {
    pid_t pid = fork();
    if (pid == 0) {
      if (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0) _exit(2);
      const std::string p = "/proc/" + std::to_string(target) + "/fd/4";
      int fd = open(p.c_str(), O_WRONLY | O_NONBLOCK);
      _exit(fd >= 0 || errno == ENXIO || errno == ENOENT ? 1 : 0);  // 1: the fd entry could be followed
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 3;
  };
  EXPECT_EQ(readable_as_nobody(control->pid), 1) << "the control (dumpable, same user) must be reachable";
  EXPECT_EQ(readable_as_nobody(r->child.pid), 0) << "another process of the runner's user reached its fds";
  kill_and_reap(*control);
  kill_and_reap(r->child);
  r->close_fds();
}

// The report says what took: undumpable, the filter, Landlock where the kernel has it, and root's
// identity given up for nobody.
TEST(Confine, ReportsWhatItSetUp) {
  const bool was_root = geteuid() == 0;
  pid_t pid = fork();
  if (pid == 0) {
    proto::Isolation iso = runner::confine_process();
    const bool ok = iso.undumpable && iso.seccomp && iso.uid == static_cast<int>(geteuid()) &&
                    (iso.landlock_abi > 0) == (runner::landlock_abi_version() > 0) &&
                    (!was_root || (iso.identity_dropped && geteuid() == 65534 && getegid() == 65534));
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
