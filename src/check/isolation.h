// The confinement a candidate's runner was under (runner/confine.h), as the verdict records it: the
// runner's own report, made before any candidate code ran (proto::ConfineReply), and what the
// checker confirmed from outside that process (/proc/<pid>/status: its ids, no_new_privs and
// seccomp mode). Landlock has no outside view; its layer is the runner's word from before the load.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "run/protocol.h"
#include "util/result.h"

namespace kevo {

struct Isolation {
  int uid = -1;                   // the identity the candidate ran as
  bool identity_dropped = false;  // it gave up root
  bool same_user = false;         // the checker's own identity (others are shielded by being undumpable)
  int landlock_abi = 0;
  bool landlock_scoped = false;
  bool seccomp = false;
  bool undumpable = false;
  bool outside_checked = false;  // the ids, no_new_privs and seccomp mode confirmed from /proc
  std::string error;             // what the runner could not set up
  bool proc_private = false;     // its /proc listed no other process (confirmed from its mountinfo)

  // Root kept (every process's /proc entries, files and signals within reach) or no seccomp filter
  // (sockets, processes, timers).
  bool weak() const { return uid == 0 || !seccomp; }
  // "uid 65534 (gave up root), Landlock ABI 6 (signals and abstract sockets scoped), seccomp"
  std::string describe() const;
  nlohmann::json to_json() const;
  static Isolation from_json(const nlohmann::json& j);
};

// What /proc/<pid>/status says of a process's confinement.
struct ProcConfinement {
  int uid[4] = {-1, -1, -1, -1};  // real, effective, saved, file-system
  int no_new_privs = -1;
  int seccomp = -1;  // 2: a filter
  int threads = -1;
};
Result<ProcConfinement> read_proc_confinement(int pid);

// The number of threads of process `pid` as the kernel counts them (-1: not known). What the
// candidate's runner says of its own threads is the candidate's to forge; this is not.
int proc_threads(int pid);

// Whether process `pid`'s /proc is a private hidepid=invisible one (runner/private_proc.h): 1 yes,
// 0 no, -1 its mountinfo cannot be read from here.
int proc_hidden(int pid);

// The runner's report checked against its process as seen from outside (`pid`; <= 0: not known,
// nothing confirmed). An error when the two disagree (the report is not the process's state).
// A private /proc is confirmed from /proc/<pid>/mountinfo where this process may read it.
Result<Isolation> confirm_isolation(const proto::Isolation& reported, int pid);

}  // namespace kevo
