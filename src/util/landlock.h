// Landlock (the kernel's unprivileged file-system and network confinement), header-only so that
// kevo-runner, which links no kevo library, and the compiler's sandbox share one reading of it.
// Constants newer than the build machine's kernel headers are spelled here; a kernel that lacks
// them reports a lower ABI and they are left out.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

namespace kevo::landlock {

// Access rights by bit (include/uapi/linux/landlock.h).
constexpr uint64_t kExecute = 1ull << 0, kWriteFile = 1ull << 1, kReadFile = 1ull << 2, kReadDir = 1ull << 3,
                   kRemoveDir = 1ull << 4, kRemoveFile = 1ull << 5, kMakeChar = 1ull << 6, kMakeDir = 1ull << 7,
                   kMakeReg = 1ull << 8, kMakeSock = 1ull << 9, kMakeFifo = 1ull << 10, kMakeBlock = 1ull << 11,
                   kMakeSym = 1ull << 12, kRefer = 1ull << 13, kTruncate = 1ull << 14, kIoctlDev = 1ull << 15;
constexpr uint64_t kNetBindTcp = 1ull << 0, kNetConnectTcp = 1ull << 1;
constexpr uint64_t kScopeAbstractUnixSocket = 1ull << 0, kScopeSignal = 1ull << 1;
constexpr uint64_t kFileRights = kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev;
constexpr uint64_t kReadRights = kExecute | kReadFile | kReadDir;

// The ruleset's attributes, as large as the newest ABI's; the kernel is given the size its ABI
// knows.
struct RulesetAttr {
  uint64_t handled_access_fs = 0, handled_access_net = 0, scoped = 0;
};

inline int abi() {
#ifdef SYS_landlock_create_ruleset
  long v = syscall(SYS_landlock_create_ruleset, nullptr, 0, 1u /* LANDLOCK_CREATE_RULESET_VERSION */);
  return v < 0 ? 0 : static_cast<int>(v);
#else
  return 0;
#endif
}

// Every file-system right this ABI controls.
inline uint64_t handled_fs(int abi) {
  uint64_t r = kExecute | kWriteFile | kReadFile | kReadDir | kRemoveDir | kRemoveFile | kMakeChar | kMakeDir |
               kMakeReg | kMakeSock | kMakeFifo | kMakeBlock | kMakeSym;
  if (abi >= 2) r |= kRefer;
  if (abi >= 3) r |= kTruncate;
  if (abi >= 5) r |= kIoctlDev;
  return r;
}

inline size_t attr_size(int abi) { return abi >= 6 ? 24 : abi >= 4 ? 16 : 8; }

// A ruleset fd, or -1.
inline int create_ruleset(const RulesetAttr& a, int abi) {
#ifdef SYS_landlock_create_ruleset
  return static_cast<int>(syscall(SYS_landlock_create_ruleset, &a, attr_size(abi), 0));
#else
  (void)a, (void)abi;
  return -1;
#endif
}

// Allows `rights` beneath `path` (a file gets its file rights only); false when the path is missing
// or the rule was refused.
inline bool allow_path(int ruleset, const char* path, uint64_t rights, uint64_t handled) {
#ifdef SYS_landlock_add_rule
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) rights &= kFileRights;
  struct __attribute__((packed)) {
    uint64_t allowed_access;
    int32_t parent_fd;
  } pb{rights & handled, fd};
  const bool ok = syscall(SYS_landlock_add_rule, ruleset, 1 /* LANDLOCK_RULE_PATH_BENEATH */, &pb, 0) == 0;
  close(fd);
  return ok;
#else
  (void)ruleset, (void)path, (void)rights, (void)handled;
  return false;
#endif
}

// Binds the calling thread (and the threads and processes it starts) to the ruleset; needs
// no_new_privs (or CAP_SYS_ADMIN).
inline bool restrict_self(int ruleset) {
#ifdef SYS_landlock_restrict_self
  return syscall(SYS_landlock_restrict_self, ruleset, 0) == 0;
#else
  (void)ruleset;
  return false;
#endif
}

}  // namespace kevo::landlock
