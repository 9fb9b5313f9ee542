#include "runner/confine.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "runner/private_proc.h"
#include "runner/seccomp.h"
#include "util/landlock.h"

namespace kevo::runner {
namespace {

// The read-only world a candidate's runner needs after its CUDA context is made: the libraries a
// candidate links (all under the system folders), the loader's cache, the driver's /proc and /sys
// entries. Its own /proc entry is added by pid.
constexpr const char* kReadOnly[] = {"/usr",           "/lib",           "/lib64",          "/lib32",
                                     "/libx32",        "/bin",           "/etc/ld.so.cache", "/etc/ld.so.conf",
                                     "/etc/ld.so.conf.d", "/proc/driver/nvidia", "/sys",     "/dev/urandom",
                                     "/dev/zero"};
// Device files the CUDA driver opens and controls (read, write, ioctl).
constexpr const char* kDevices[] = {"/dev/null", "/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools",
                                    "/dev/nvidia-modeset", "/dev/nvidia-caps"};

unsigned id_from_env(const char* name, unsigned fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const unsigned long x = std::strtoul(v, &end, 10);
  return end && *end == '\0' && x > 0 && x < 0xFFFFFFFFul ? static_cast<unsigned>(x) : fallback;
}

bool no_capabilities() {
  __user_cap_header_struct h{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct d[2]{};
  if (syscall(SYS_capget, &h, d) != 0) return false;
  return d[0].effective == 0 && d[1].effective == 0 && d[0].permitted == 0 && d[1].permitted == 0;
}

// Root gives up its identity on every thread (glibc applies set*id to all of them). Fails closed:
// an identity that did not fully change is an error, and the caller does not load the candidate.
bool drop_identity(proto::Isolation& iso) {
  const unsigned uid = id_from_env("KEVO_RUNNER_UID", 65534), gid = id_from_env("KEVO_RUNNER_GID", 65534);
  if (setgroups(0, nullptr) != 0 || setresgid(gid, gid, gid) != 0 || setresuid(uid, uid, uid) != 0) {
    iso.error = std::string("cannot give up root for uid ") + std::to_string(uid) + ": " + std::strerror(errno);
    return false;
  }
  uid_t r = 0, e = 0, s = 0;
  gid_t gr = 0, ge = 0, gs = 0;
  if (getresuid(&r, &e, &s) != 0 || getresgid(&gr, &ge, &gs) != 0 || r != uid || e != uid || s != uid ||
      gr != gid || ge != gid || gs != gid || getgroups(0, nullptr) != 0 || !no_capabilities()) {
    iso.error = "the identity did not change on every id, or capabilities remain";
    return false;
  }
  iso.identity_dropped = true;
  return true;
}

void add_landlock(proto::Isolation& iso, const std::vector<std::string>& read_dirs) {
  const int abi = landlock::abi();
  if (abi < 1) {
    iso.error += iso.error.empty() ? "" : "; ";
    iso.error += "Landlock is not available in this kernel";
    return;
  }
  landlock::RulesetAttr a;
  a.handled_access_fs = landlock::handled_fs(abi);
  if (abi >= 4) a.handled_access_net = landlock::kNetBindTcp | landlock::kNetConnectTcp;
  if (abi >= 6) a.scoped = landlock::kScopeAbstractUnixSocket | landlock::kScopeSignal;
  const int fd = landlock::create_ruleset(a, abi);
  if (fd < 0) {
    iso.error += std::string(iso.error.empty() ? "" : "; ") + "landlock_create_ruleset: " + std::strerror(errno);
    return;
  }
  const uint64_t h = a.handled_access_fs;
  for (const char* p : kReadOnly) landlock::allow_path(fd, p, landlock::kReadRights, h);
  for (const auto& p : read_dirs)
    if (p.size() > 1 && p[0] == '/') landlock::allow_path(fd, p.c_str(), landlock::kReadRights, h);
  const std::string self = "/proc/" + std::to_string(getpid());
  landlock::allow_path(fd, self.c_str(), landlock::kReadRights, h);
  for (const char* p : kDevices) landlock::allow_path(fd, p, landlock::kFileRights | landlock::kReadDir, h);
  for (int i = 0; i < 64; ++i) {
    const std::string dev = "/dev/nvidia" + std::to_string(i);
    if (!landlock::allow_path(fd, dev.c_str(), landlock::kFileRights, h) && i >= 16) break;
  }
  if (landlock::restrict_self(fd)) {
    iso.landlock_abi = abi;
    iso.landlock_scoped = abi >= 6;
  } else {
    iso.error += std::string(iso.error.empty() ? "" : "; ") + "landlock_restrict_self: " + std::strerror(errno);
  }
  close(fd);
}

}  // namespace

void make_undumpable() { prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

int landlock_abi_version() { return landlock::abi(); }

proto::Isolation confine_process(const ConfineOptions& o) {
  proto::Isolation iso;
  make_undumpable();
  if (geteuid() == 0 && o.drop_identity && !drop_identity(iso)) return iso;  // fails closed
  make_undumpable();  // a change of identity resets it to the system's default
  iso.undumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0;
  iso.uid = static_cast<int>(geteuid());
  iso.gid = static_cast<int>(getegid());
  iso.proc_private = private_proc().in_force && iso.uid != 0;
  if (!private_proc().in_force) iso.error += (iso.error.empty() ? "" : "; ") + private_proc().why_not;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    iso.error = std::string("PR_SET_NO_NEW_PRIVS: ") + std::strerror(errno);
    return iso;
  }
  if (o.identity_only) return iso;
  add_landlock(iso, o.read_dirs);
  SandboxStatus st = install_candidate_filter();
  iso.seccomp = st.installed;
  if (!st.installed) iso.error += std::string(iso.error.empty() ? "" : "; ") + "seccomp: " + st.error;
  return iso;
}

}  // namespace kevo::runner
