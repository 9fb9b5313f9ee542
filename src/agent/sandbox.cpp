#include "agent/sandbox.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "util/landlock.h"

namespace kevo::agent {

namespace fs = std::filesystem;
namespace ll = kevo::landlock;

namespace {

constexpr const char* kSystemDirs[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};
// What node, the CLIs and a shell read of the kernel's views: CPU counts, memory, the cgroup's
// limits (libuv), kernel settings. Never /proc as a whole: Landlock keeps another process's memory
// and fds out of reach, but not its environ (measured on Linux 6.18), where kevo's own API keys are.
constexpr const char* kKernelReadable[] = {"/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/loadavg",
                                           "/proc/uptime", "/proc/version", "/proc/filesystems", "/proc/sys",
                                           "/sys/devices/system/cpu", "/sys/fs/cgroup"};
constexpr const char* kDevWritable[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"};
constexpr const char* kDevReadable[] = {"/dev/random", "/dev/urandom"};

// Allows TCP connections to `port` (LANDLOCK_RULE_NET_PORT).
bool allow_port(int ruleset, int port) {
#ifdef SYS_landlock_add_rule
  struct __attribute__((packed)) {
    uint64_t allowed_access;
    uint64_t port;
  } np{ll::kNetConnectTcp, static_cast<uint64_t>(port)};
  return syscall(SYS_landlock_add_rule, ruleset, 2 /* LANDLOCK_RULE_NET_PORT */, &np, 0) == 0;
#else
  (void)ruleset, (void)port;
  return false;
#endif
}

bool is_secret(const fs::path& p) {
  const auto& s = etc_secrets();
  return std::find(s.begin(), s.end(), p.string()) != s.end();
}

bool holds_secret(const fs::path& dir) {
  const std::string prefix = dir.string() + "/";
  for (const auto& s : etc_secrets())
    if (s.rfind(prefix, 0) == 0) return true;
  return false;
}

// Allows everything beneath `dir` read-only except the secrets: a folder that holds one is opened
// up entry by entry instead of as a whole (Landlock has no "deny" rule).
void allow_except_secrets(int ruleset, const fs::path& dir, uint64_t handled) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, fs::directory_options::skip_permission_denied, ec)) {
    const fs::path p = e.path();
    if (is_secret(p)) continue;
    if (!e.is_symlink(ec) && e.is_directory(ec) && holds_secret(p)) {
      allow_except_secrets(ruleset, p, handled);
    } else {
      ll::allow_path(ruleset, p.c_str(), ll::kReadRights, handled);
    }
  }
}

void allow_system(int ruleset, uint64_t handled) {
  for (const char* d : kSystemDirs) ll::allow_path(ruleset, d, ll::kReadRights, handled);
  allow_except_secrets(ruleset, "/etc", handled);
  for (const char* d : kKernelReadable) ll::allow_path(ruleset, d, ll::kReadFile | ll::kReadDir, handled);
  for (const char* d : kDevWritable) ll::allow_path(ruleset, d, ll::kReadFile | ll::kWriteFile | ll::kIoctlDev, handled);
  for (const char* d : kDevReadable) ll::allow_path(ruleset, d, ll::kReadFile, handled);
}

}  // namespace

const std::vector<std::string>& etc_secrets() {
  static const std::vector<std::string> kSecrets = {
      "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d",
      "/etc/ssh", "/etc/ssl/private", "/etc/security/opasswd", "/etc/krb5.keytab", "/etc/ipsec.secrets",
      "/etc/ipsec.d", "/etc/ppp", "/etc/wireguard", "/etc/NetworkManager/system-connections",
      "/etc/credstore", "/etc/credstore.encrypted", "/etc/environment", "/etc/docker", "/etc/libvirt",
      "/etc/kevo", "/etc/.pwd.lock"};
  return kSecrets;
}

AgentSandbox::AgentSandbox(AgentSandbox&& o) noexcept : fd_(o.fd_), abi_(o.abi_) { o.fd_ = -1; }

AgentSandbox& AgentSandbox::operator=(AgentSandbox&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = o.fd_, abi_ = o.abi_;
    o.fd_ = -1;
  }
  return *this;
}

AgentSandbox::~AgentSandbox() {
  if (fd_ >= 0) close(fd_);
}

Result<AgentSandbox> make_agent_sandbox(const AgentSandboxSpec& spec) {
  std::error_code ec;
  if (spec.workspace.empty() || !fs::is_directory(spec.workspace, ec))
    return fail("agent sandbox: the workspace {} is not a folder", spec.workspace.string());
  AgentSandbox sb;
  sb.abi_ = ll::abi();
  if (sb.abi_ < 1)
    return fail("agent sandbox: this kernel has no Landlock (it needs Linux 5.13+ with lsm=landlock); "
                "an agent CLI is never run unconfined");
  ll::RulesetAttr attr;
  attr.handled_access_fs = ll::handled_fs(sb.abi_);
  if (sb.abi_ >= 4) attr.handled_access_net = ll::kNetBindTcp | ll::kNetConnectTcp;
  if (sb.abi_ >= 6) attr.scoped = ll::kScopeAbstractUnixSocket | ll::kScopeSignal;
  sb.fd_ = ll::create_ruleset(attr, sb.abi_);
  if (sb.fd_ < 0) return fail("agent sandbox: landlock_create_ruleset failed (ABI {})", sb.abi_);
  const uint64_t handled = attr.handled_access_fs;
  allow_system(sb.fd_, handled);
  for (const auto& p : spec.read_only) ll::allow_path(sb.fd_, p.c_str(), ll::kReadRights, handled);
  if (!ll::allow_path(sb.fd_, spec.workspace.c_str(), handled, handled))
    return fail("agent sandbox: cannot add the workspace {} to the ruleset", spec.workspace.string());
  if (sb.confines_tcp())
    for (int port : spec.connect_ports)
      if (!allow_port(sb.fd_, port)) return fail("agent sandbox: cannot allow TCP port {}", port);
  return sb;
}

}  // namespace kevo::agent
