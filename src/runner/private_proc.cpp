#include "runner/private_proc.h"

#include <errno.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace kevo::runner {
namespace {

PrivateProc& state() {
  static PrivateProc p{false, "no private /proc: not set up at the runner's start"};
  return p;
}

PrivateProc failed(const char* what) {
  return {false, std::string("no private /proc: ") + what + ": " + std::strerror(errno)};
}

PrivateProc set_up() {
  if (const char* s = std::getenv("KEVO_RUNNER_SHARED_PROC"); s && *s == '1')
    return {false, "no private /proc: a tool's runner shares the tool's"};
  if (geteuid() != 0) return {false, "no private /proc: it needs root at the runner's start"};
  if (unshare(CLONE_NEWNS) != 0) return failed("unshare(CLONE_NEWNS)");
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return failed("making mounts private");
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible") != 0)
    return failed("mount proc hidepid=invisible (Linux >= 5.8)");
  return {true, ""};
}

}  // namespace

PrivateProc make_proc_private() { return state() = set_up(); }

const PrivateProc& private_proc() { return state(); }

}  // namespace kevo::runner
