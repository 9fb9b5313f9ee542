// A /proc of the runner's own, so a candidate's runner sees no other process there at all: at its
// start (one thread, before CUDA) the runner moves into a mount namespace of its own (mounts made
// private: nothing propagates back) and mounts a procfs instance with hidepid=invisible over /proc.
// That instance lists only the processes its reader may trace; once the candidate's runner has
// given up root, that is itself (every other kevo process and runner is undumpable or another
// user's). A trusted runner keeps root and sees everything, as before. Every thread sees it, the
// CUDA driver's own included (Landlock binds only the loading thread and those it starts).
//
// Not a PID namespace: legacy CUDA IPC handles, which the oracle's runner opens to read the
// candidate's buffers, cannot be opened across PID namespaces, and a pooled runner is started
// before its role is known. The pids stay the host's; only their visibility changes.
#pragma once

#include <string>

namespace kevo::runner {

struct PrivateProc {
  bool in_force = false;
  std::string why_not;  // for people, when it is not
};

// Needs root (CAP_SYS_ADMIN) and Linux >= 5.8 (per-mount procfs options: an older kernel refuses
// "invisible", so the host's /proc is never changed). KEVO_RUNNER_SHARED_PROC=1 (a runner under
// compute-sanitizer or ncu, whose tool talks to it) keeps the shared one.
PrivateProc make_proc_private();

// What make_proc_private did in this process (runner/confine.h reports it).
const PrivateProc& private_proc();

}  // namespace kevo::runner
