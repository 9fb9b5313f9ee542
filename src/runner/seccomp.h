// Defence in depth for the candidate's runner (the outside clock and the separate baseline process
// are the main defences): a seccomp filter, installed before the candidate's library is loaded and
// never lifted, that refuses what a kernel never needs. Refused calls fail with EPERM (the process
// lives on; the candidate's attempt fails):
//  - starting programs or processes: execve, execveat, fork, vfork, clone without CLONE_THREAD
//    (threads stay possible: the CUDA runtime starts its own), clone3 (ENOSYS: glibc falls back to
//    clone, where the flags can be checked);
//  - reaching into other processes: ptrace, process_vm_readv/writev, kcmp, pidfd_getfd;
//  - making memory executable after the fact: mprotect/pkey_mprotect with PROT_EXEC, and mmap
//    asking for writable and executable at once (dlopen maps code read+exec, never write+exec);
//  - sockets of any family and socket pairs (EACCES), listening and accepting, signals to any
//    other process;
//  - code that runs later by itself: timers (setitimer, alarm, timer_create), SIGIO arranged on a
//    descriptor (fcntl F_SETOWN/F_SETSIG/O_ASYNC, ioctl FIOASYNC), mq_notify, perf_event_open,
//    io_uring; becoming traceable again (prctl PR_SET_DUMPABLE, PR_SET_PTRACER); the key store.
// The filter binds every thread of the process (TSYNC), the CUDA driver's too.
// Thread-safety: call once, from the runner's thread, before any candidate code runs.
#pragma once

#include <string>

namespace kevo::runner {

struct SandboxStatus {
  bool installed = false;
  std::string error;  // why not (no libseccomp in this build, the kernel refused)
};

SandboxStatus install_candidate_filter();

}  // namespace kevo::runner
