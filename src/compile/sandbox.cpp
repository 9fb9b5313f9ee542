#include "compile/sandbox.h"

#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <map>
#include <mutex>

#include "util/enum_text.h"
#include "util/log.h"

namespace kevo {
namespace fs = std::filesystem;

namespace {

// Top-level system directories the compilers need. On merged-/usr systems /bin, /lib, ... are
// symlinks into /usr (bubblewrap recreates them as symlinks).
constexpr const char* kSystemDirs[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};
// Single files of /etc that the dynamic loader and the compiler drivers read; the rest of /etc
// (passwd, credentials, dotfiles) stays outside.
constexpr const char* kEtcFiles[] = {"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
                                     "/etc/alternatives"};
constexpr const char* kProbe = "cat /etc/passwd >/dev/null 2>&1 || echo ok";

// ---- bubblewrap ---------------------------------------------------------------------------------

std::vector<std::string> bwrap_system_args() {
  std::vector<std::string> a = {"bwrap", "--unshare-all", "--die-with-parent", "--proc", "/proc",
                                "--dev", "/dev", "--tmpfs", "/tmp"};
  std::error_code ec;
  for (const char* d : kSystemDirs) {
    if (fs::is_symlink(d, ec)) {
      a.insert(a.end(), {"--symlink", fs::read_symlink(d, ec).string(), d});
    } else if (fs::is_directory(d, ec)) {
      a.insert(a.end(), {"--ro-bind", d, d});
    }
  }
  for (const char* f : kEtcFiles) a.insert(a.end(), {"--ro-bind-try", f, f});
  return a;
}

std::vector<std::string> bwrap_prefix(const SandboxPaths& paths) {
  std::vector<std::string> a = bwrap_system_args();
  std::error_code ec;
  for (const auto& p : paths.read_only) {
    fs::path c = fs::weakly_canonical(p, ec);
    if (ec || !fs::exists(c, ec)) continue;  // a missing -I dir is the compiler's to report
    a.insert(a.end(), {"--ro-bind", c.string(), c.string()});
    // The name kevo uses, when it is a symlink outside the read-only system dirs.
    if (c != p && p.is_absolute() && p.string().rfind("/usr/", 0) != 0)
      a.insert(a.end(), {"--ro-bind", c.string(), p.string()});
  }
  const std::string w = paths.writable.string();
  a.insert(a.end(), {"--bind", w, w, "--chdir", w, "--"});
  return a;
}

// ---- Landlock -----------------------------------------------------------------------------------

#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif

constexpr uint64_t kFileRights =
    LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE;
constexpr uint64_t kReadRights = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;

int landlock_abi() {
#ifdef SYS_landlock_create_ruleset
  long v = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return v < 0 ? 0 : static_cast<int>(v);
#else
  return 0;
#endif
}

// Everything the ruleset controls, for this kernel's ABI.
uint64_t handled_rights(int abi) {
  uint64_t r = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |
               LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
               LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
               LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
               LANDLOCK_ACCESS_FS_MAKE_SYM;
  if (abi >= 2) r |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) r |= LANDLOCK_ACCESS_FS_TRUNCATE;
  return r;
}

// Allows `rights` beneath `path` (a file gets its file rights only); a missing path is skipped.
void landlock_allow(int ruleset, const fs::path& path, uint64_t rights, uint64_t handled) {
#ifdef SYS_landlock_add_rule
  int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) return;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) rights &= kFileRights;
  landlock_path_beneath_attr pb{};
  pb.allowed_access = rights & handled;
  pb.parent_fd = fd;
  (void)syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
  close(fd);
#else
  (void)ruleset, (void)path, (void)rights, (void)handled;
#endif
}

// A ruleset allowing the system dirs and `paths`; -1 when Landlock is unavailable. No /proc: under
// Landlock it would show other processes' environments (API keys) to the compiler.
int landlock_ruleset(const SandboxPaths& paths) {
#ifdef SYS_landlock_create_ruleset
  const int abi = landlock_abi();
  if (abi < 1) return -1;
  landlock_ruleset_attr attr{};
  attr.handled_access_fs = handled_rights(abi);
  int fd = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0));
  if (fd < 0) return -1;
  for (const char* d : kSystemDirs) landlock_allow(fd, d, kReadRights, attr.handled_access_fs);
  for (const char* f : kEtcFiles) landlock_allow(fd, f, kReadRights, attr.handled_access_fs);
  landlock_allow(fd, "/dev/null", kFileRights, attr.handled_access_fs);
  landlock_allow(fd, "/dev/urandom", kReadRights, attr.handled_access_fs);
  for (const auto& p : paths.read_only) landlock_allow(fd, p, kReadRights, attr.handled_access_fs);
  if (!paths.writable.empty()) landlock_allow(fd, paths.writable, attr.handled_access_fs, attr.handled_access_fs);
  return fd;
#else
  (void)paths;
  return -1;
#endif
}

// ---- choosing -----------------------------------------------------------------------------------

bool probe(SandboxKind k) {
  RunOptions ro;
  ro.timeout = std::chrono::seconds(20);
  ro.argv = {"/bin/sh", "-c", kProbe};
  int fd = -1;
  if (k == SandboxKind::Bubblewrap) {
    if (!find_program("bwrap")) return false;
    std::vector<std::string> a = bwrap_system_args();
    a.push_back("--");
    ro.argv.insert(ro.argv.begin(), a.begin(), a.end());
  } else if (k == SandboxKind::Landlock) {
    fd = landlock_ruleset({});
    if (fd < 0) return false;
    ro.limits.landlock_ruleset_fd = fd;
  } else {
    return false;
  }
  auto r = run_process(ro);
  if (fd >= 0) close(fd);
  const bool ok = r && r->ok() && r->out == "ok\n";
  if (!ok) spdlog::debug("{} probe failed: {}", to_string(k), r ? r->describe() + ": " + r->err : r.error().message);
  return ok;
}

// Named by KEVO_SANDBOX and in `kevo doctor`: a value's text never changes.
constexpr EnumText<SandboxKind> kSandboxKindTexts[] = {
    {SandboxKind::Bubblewrap, "bubblewrap"},
    {SandboxKind::Landlock, "landlock"},
    {SandboxKind::None, "none"},
};

SandboxKind env_choice(bool& set) {
  const char* e = std::getenv("KEVO_SANDBOX");
  set = e && *e;
  if (!set) return SandboxKind::None;
  return enum_parse(kSandboxKindTexts, e).value_or(SandboxKind::None);
}

}  // namespace

const char* to_string(SandboxKind k) { return enum_text(kSandboxKindTexts, k, "none"); }

bool sandbox_works(SandboxKind k) {
  static std::mutex mu;
  static std::map<SandboxKind, bool> known;
  std::lock_guard lock(mu);
  auto it = known.find(k);
  if (it == known.end()) it = known.emplace(k, probe(k)).first;
  return it->second;
}

SandboxKind sandbox_kind() {
  static std::once_flag once;
  static SandboxKind kind = SandboxKind::None;
  std::call_once(once, [] {
    bool forced = false;
    kind = env_choice(forced);
    if (forced) {
      if (kind != SandboxKind::None && !sandbox_works(kind)) {
        spdlog::warn("KEVO_SANDBOX={}: it does not work here; the compiler runs without a file sandbox",
                     to_string(kind));
        kind = SandboxKind::None;
      }
      return;
    }
    for (SandboxKind k : {SandboxKind::Bubblewrap, SandboxKind::Landlock})
      if (sandbox_works(k)) {
        kind = k;
        return;
      }
    spdlog::warn(
        "the compiler runs without a file sandbox here (neither bubblewrap nor Landlock works); "
        "candidates are still limited to #include <header> by the include rules");
  });
  return kind;
}

Sandbox::Sandbox(Sandbox&& o) noexcept
    : kind_(o.kind_), prefix_(std::move(o.prefix_)), landlock_fd_(std::exchange(o.landlock_fd_, -1)) {}

Sandbox& Sandbox::operator=(Sandbox&& o) noexcept {
  if (this != &o) {
    if (landlock_fd_ >= 0) close(landlock_fd_);
    kind_ = o.kind_;
    prefix_ = std::move(o.prefix_);
    landlock_fd_ = std::exchange(o.landlock_fd_, -1);
  }
  return *this;
}

Sandbox::~Sandbox() {
  if (landlock_fd_ >= 0) close(landlock_fd_);
}

void Sandbox::apply(RunOptions& ro) const {
  ro.argv.insert(ro.argv.begin(), prefix_.begin(), prefix_.end());
  ro.limits.landlock_ruleset_fd = landlock_fd_;
}

Sandbox make_sandbox(const SandboxPaths& paths, SandboxMode mode) {
  SandboxKind k = mode == SandboxMode::Auto         ? sandbox_kind()
                  : mode == SandboxMode::Bubblewrap ? SandboxKind::Bubblewrap
                  : mode == SandboxMode::Landlock   ? SandboxKind::Landlock
                                                    : SandboxKind::None;
  Sandbox s;
  if (k == SandboxKind::None || !sandbox_works(k)) return s;
  if (k == SandboxKind::Bubblewrap) {
    s.prefix_ = bwrap_prefix(paths);
  } else {
    s.landlock_fd_ = landlock_ruleset(paths);
    if (s.landlock_fd_ < 0) return s;
  }
  s.kind_ = k;
  return s;
}

fs::path toolkit_root(const std::string& compiler) {
  auto p = find_program(compiler);
  if (!p) return {};
  std::error_code ec;
  fs::path c = fs::canonical(*p, ec);
  if (ec) return {};
  return c.parent_path().parent_path();
}

}  // namespace kevo
