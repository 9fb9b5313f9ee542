// A candidate's runner sees no other process in /proc (runner/private_proc.h): its own procfs,
// hidepid=invisible, in a mount namespace of its own, and nothing of it reaches the host's /proc.
// Each probe runs first without the private /proc (it sees other processes there: the probe can
// tell), then with it.
#include "runner/private_proc.h"

#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <vector>

#include "check/isolation.h"
#include "run/runner_client.h"
#include "runner/confine.h"

using namespace kevo;
namespace fs = std::filesystem;

namespace {

// The pids /proc lists (-1: it cannot be listed).
int listed_pids(std::vector<int>& pids) {
  DIR* d = opendir("/proc");
  if (!d) return -1;
  while (dirent* e = readdir(d))
    if (std::isdigit(static_cast<unsigned char>(e->d_name[0]))) pids.push_back(std::atoi(e->d_name));
  closedir(d);
  return static_cast<int>(pids.size());
}

enum class Probe { kListsOnlyItself = 0, kListsOthers = 1, kCannotList = 2, kSetupFailed = 3 };

// In a child: the private /proc (or not), the runner's confinement, then what /proc lists.
// `identity_only`: no Landlock (it forbids listing /proc at all): the /proc layer alone.
Probe probe(bool private_proc, bool identity_only, int other_pid) {
  pid_t pid = fork();
  if (pid == 0) {
    if (private_proc && !runner::make_proc_private().in_force) _exit(3);
    proto::Isolation iso = runner::confine_process({.identity_only = identity_only});
    if (getuid() == 0 || iso.proc_private != private_proc) _exit(3);
    struct stat st {};
    const bool sees_other = stat(("/proc/" + std::to_string(other_pid)).c_str(), &st) == 0;
    std::vector<int> pids;
    const int n = listed_pids(pids);
    if (n < 0) _exit(sees_other ? 1 : 2);
    _exit(sees_other || n != 1 || pids[0] != getpid() ? 1 : 0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? static_cast<Probe>(WEXITSTATUS(status)) : Probe::kSetupFailed;
}

fs::path runner_binary() { return fs::path(KEVO_BINARY_DIR) / "bin" / "kevo-runner"; }

}  // namespace

TEST(PrivateProc, ACandidateSeesOnlyItselfInProc) {
  if (geteuid() != 0) GTEST_SKIP() << "a private /proc needs root (CI, the GPU machines)";
  const int me = static_cast<int>(getpid());  // a root process: visible to nobody in a shared /proc
  EXPECT_EQ(probe(false, true, me), Probe::kListsOthers) << "the probe must see others in a shared /proc";
  const Probe alone = probe(true, true, me);
  if (alone == Probe::kSetupFailed) GTEST_SKIP() << "no private /proc here: " << runner::make_proc_private().why_not;
  EXPECT_EQ(alone, Probe::kListsOnlyItself);
  // Fully confined, Landlock also refuses to list /proc; no other pid is found by name either.
  const Probe full = probe(true, false, me);
  EXPECT_TRUE(full == Probe::kListsOnlyItself || full == Probe::kCannotList) << static_cast<int>(full);
  // Nothing propagated back: this process's /proc is the host's, unchanged.
  EXPECT_EQ(proc_hidden(me), 0);
}

// The real kevo-runner makes its /proc private at its start, seen from outside (its mountinfo);
// the checker's stays shared.
TEST(PrivateProc, EveryRunnerStartsWithItsOwnProc) {
  if (!fs::exists(runner_binary())) GTEST_SKIP() << "kevo-runner not built here (no CUDA toolkit)";
  if (geteuid() != 0) GTEST_SKIP() << "a private /proc needs root (CI, the GPU machines)";
  auto r = spawn_runner({.runner = runner_binary()});
  ASSERT_TRUE(r) << r.error().message;
  int hidden = 0;
  for (int i = 0; i < 100 && (hidden = proc_hidden(r->child.pid)) != 1; ++i) usleep(20000);
  EXPECT_EQ(hidden, 1) << "the runner's /proc is the host's";
  EXPECT_EQ(proc_hidden(static_cast<int>(getpid())), 0);
  kill_and_reap(r->child);
  r->close_fds();
}
