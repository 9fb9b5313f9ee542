#include "runner/seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#ifdef KEVO_HAVE_SECCOMP
#include <seccomp.h>
#endif

#include <cstring>

namespace kevo::runner {

#ifdef KEVO_HAVE_SECCOMP
namespace {

struct Ctx {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  ~Ctx() {
    if (ctx) seccomp_release(ctx);
  }
};

int deny(scmp_filter_ctx c, int nr, int err = EPERM) {
  return seccomp_rule_add(c, SCMP_ACT_ERRNO(static_cast<uint32_t>(err)), nr, 0);
}

// Code that runs while the runner waits for its next request (the baseline's batch, say) needs a
// thread (counted) or an asynchronous signal: every way to arrange one is refused. Timers, SIGIO on
// a descriptor (fcntl F_SETOWN/F_SETSIG/O_ASYNC, ioctl FIOASYNC), message-queue notification,
// counter overflow signals (perf_event_open) and io_uring (work the kernel does later). Also
// refused: becoming traceable again, and the kernel's key store (credentials may live there).
int deny_async_code(scmp_filter_ctx c) {
  int rc = 0;
  for (int nr : {SCMP_SYS(setitimer), SCMP_SYS(alarm), SCMP_SYS(timer_create), SCMP_SYS(timer_settime),
                 SCMP_SYS(mq_notify), SCMP_SYS(perf_event_open), SCMP_SYS(io_uring_setup), SCMP_SYS(io_uring_enter),
                 SCMP_SYS(io_uring_register), SCMP_SYS(add_key), SCMP_SYS(request_key), SCMP_SYS(keyctl)})
    rc |= deny(c, nr);
  for (int cmd : {F_SETOWN, F_SETSIG, F_SETOWN_EX})
    rc |= seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(fcntl), 1, SCMP_A1(SCMP_CMP_EQ, static_cast<scmp_datum_t>(cmd)));
  rc |= seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(fcntl), 2, SCMP_A1(SCMP_CMP_EQ, F_SETFL),
                         SCMP_A2(SCMP_CMP_MASKED_EQ, O_ASYNC, O_ASYNC));
  rc |= seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1, SCMP_A1_32(SCMP_CMP_EQ, FIOASYNC));
  for (int opt : {PR_SET_DUMPABLE, PR_SET_PTRACER})
    rc |= seccomp_rule_add(c, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(prctl), 1, SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(opt)));
  return rc;
}

}  // namespace

SandboxStatus install_candidate_filter() {
  SandboxStatus st;
  Ctx f;
  if (!f.ctx) return {false, "seccomp_init failed"};
  int rc = 0;
  for (int nr : {SCMP_SYS(execve), SCMP_SYS(execveat), SCMP_SYS(fork), SCMP_SYS(vfork), SCMP_SYS(ptrace),
                 SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev), SCMP_SYS(kcmp), SCMP_SYS(pidfd_getfd)})
    rc |= deny(f.ctx, nr);
  rc |= deny(f.ctx, SCMP_SYS(clone3), ENOSYS);
  // clone without CLONE_THREAD starts a process.
  rc |= seccomp_rule_add(f.ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                         SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
  for (int nr : {SCMP_SYS(mprotect), SCMP_SYS(pkey_mprotect)})
    rc |= seccomp_rule_add(f.ctx, SCMP_ACT_ERRNO(EPERM), nr, 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC));
  rc |= seccomp_rule_add(f.ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mmap), 1,
                         SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC | PROT_WRITE, PROT_EXEC | PROT_WRITE));
  // No sockets of any family, and no socket pairs: a candidate must not reach the run database (a
  // worker's PostgreSQL, where it could write its own verdict), the runner pool's socket (it
  // starts runners) or anything else. The CUDA driver makes none once its context exists (MPS
  // aside, which kevo does not use).
  for (int nr : {SCMP_SYS(socket), SCMP_SYS(socketpair)}) rc |= deny(f.ctx, nr, EACCES);
  // Other processes stay out of reach: no signal to any process but this one (the checker, the
  // runner pool and other evaluations' runners run as the same user), and no listening socket
  // (a candidate could pose as the runner pool at its socket and hand out runners of its own).
  const auto self = static_cast<scmp_datum_t>(getpid());
  for (int nr : {SCMP_SYS(kill), SCMP_SYS(tgkill), SCMP_SYS(rt_sigqueueinfo), SCMP_SYS(rt_tgsigqueueinfo)})
    rc |= seccomp_rule_add(f.ctx, SCMP_ACT_ERRNO(EPERM), nr, 1, SCMP_A0_32(SCMP_CMP_NE, self));
  for (int nr : {SCMP_SYS(tkill), SCMP_SYS(pidfd_open), SCMP_SYS(pidfd_send_signal), SCMP_SYS(listen),
                 SCMP_SYS(accept), SCMP_SYS(accept4)})
    rc |= deny(f.ctx, nr);
  rc |= deny_async_code(f.ctx);
  if (rc != 0) return {false, std::string("seccomp_rule_add: ") + std::strerror(-rc)};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return {false, std::string("PR_SET_NO_NEW_PRIVS: ") + std::strerror(errno)};
  // Every thread, the CUDA driver's included: a candidate can have its code run on one of them
  // (a callback), which started before the filter.
  if ((rc = seccomp_attr_set(f.ctx, SCMP_FLTATR_CTL_TSYNC, 1)) != 0)
    return {false, std::string("seccomp TSYNC: ") + std::strerror(-rc)};
  if ((rc = seccomp_load(f.ctx)) != 0) return {false, std::string("seccomp_load: ") + std::strerror(-rc)};
  st.installed = true;
  return st;
}
#else
SandboxStatus install_candidate_filter() { return {false, "built without libseccomp"}; }
#endif

}  // namespace kevo::runner
