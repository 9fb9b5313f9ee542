#include "runner/seccomp.h"

#include <errno.h>
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
  // No network: a candidate must not reach the run database (a worker's PostgreSQL, where it
  // could write its own verdict) or anything else. Local (AF_UNIX) sockets stay: the CUDA
  // driver may use them.
  for (int domain : {AF_INET, AF_INET6, AF_PACKET})
    rc |= seccomp_rule_add(f.ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 1,
                           SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(domain)));
  // Other processes stay out of reach: no signal to any process but this one (the checker, the
  // runner pool and other evaluations' runners run as the same user), and no listening socket
  // (a candidate could pose as the runner pool at its socket and hand out runners of its own).
  const auto self = static_cast<scmp_datum_t>(getpid());
  for (int nr : {SCMP_SYS(kill), SCMP_SYS(tgkill), SCMP_SYS(rt_sigqueueinfo), SCMP_SYS(rt_tgsigqueueinfo)})
    rc |= seccomp_rule_add(f.ctx, SCMP_ACT_ERRNO(EPERM), nr, 1, SCMP_A0_32(SCMP_CMP_NE, self));
  for (int nr : {SCMP_SYS(tkill), SCMP_SYS(pidfd_open), SCMP_SYS(pidfd_send_signal), SCMP_SYS(listen),
                 SCMP_SYS(accept), SCMP_SYS(accept4)})
    rc |= deny(f.ctx, nr);
  if (rc != 0) return {false, std::string("seccomp_rule_add: ") + std::strerror(-rc)};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return {false, std::string("PR_SET_NO_NEW_PRIVS: ") + std::strerror(errno)};
  if ((rc = seccomp_load(f.ctx)) != 0) return {false, std::string("seccomp_load: ") + std::strerror(-rc)};
  st.installed = true;
  return st;
}
#else
SandboxStatus install_candidate_filter() { return {false, "built without libseccomp"}; }
#endif

}  // namespace kevo::runner
