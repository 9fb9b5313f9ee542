// The confinement of a candidate's runner, set up before any candidate code runs and never lifted.
// The candidate's code is hostile: it must not reach the checker, the trusted runner (oracle and
// baseline), the runner pool or other evaluations' runners, their files or credentials. Layers,
// each applied where the machine offers it (proto::Isolation says which were):
//   - identity: a runner started as root gives up root (uid/gid, supplementary groups, every
//     capability) for an unprivileged identity (KEVO_RUNNER_UID/GID, default 65534 "nobody"),
//     on every thread; root's other processes and 0700 folders are then out of reach;
//   - no core dumps, no ptrace access (PR_SET_DUMPABLE 0: every kevo process sets it);
//   - Landlock (file system): read only the system folders, the GPU's device files and the
//     process's own /proc entry, write nothing but /dev/null and the GPU's device files; scoped
//     signals and abstract sockets (ABI 6); no TCP (ABI 4). It binds the thread that loads the
//     candidate and the threads it starts (the CUDA driver's own threads predate it);
//   - the seccomp filter (runner/seccomp.h), on every thread.
//   - a /proc of its own (runner/private_proc.h), made at the runner's start: once it has given
//     up root it lists no process but itself.
// No PID namespace: legacy CUDA IPC (the oracle's runner maps the candidate's buffers) does not
// work across PID namespaces, and runners are started before their role is known.
#pragma once

#include <string>
#include <vector>

#include "run/protocol.h"

namespace kevo::runner {

// Makes this process non-dumpable (no core dump, no /proc/<pid>/fd, mem or environ for processes
// of its user without CAP_SYS_PTRACE). Every runner calls it at start, before CUDA.
void make_undumpable();

struct ConfineOptions {
  bool drop_identity = true;  // false only where the caller has no other identity to use (tests)
  bool identity_only = false;  // a tool's runner: identity, undumpable, no new privileges; no filters
  // Read-only beside the system folders (proto::ConfineRequest::read_dirs): absolute folders only;
  // "/" and relative paths are ignored (they would undo the file layer).
  std::vector<std::string> read_dirs;
};

// Applies every layer this machine offers to the calling process (identity for every thread,
// Landlock for the calling thread and those it starts, seccomp for every thread) and says which
// took. Irreversible. Call it after the last thing the runner itself needs to open.
proto::Isolation confine_process(const ConfineOptions& o = {});

// The Landlock ABI this kernel offers (0: none).
int landlock_abi_version();

}  // namespace kevo::runner
