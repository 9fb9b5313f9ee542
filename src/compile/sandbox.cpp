#include "compile/sandbox.h"

#include <mutex>

#include "util/log.h"
#include "util/subprocess.h"

namespace kevo {
namespace fs = std::filesystem;

namespace {

// Top-level system directories the compilers need. On merged-/usr systems /bin, /lib, ... are
// symlinks into /usr and are recreated as symlinks inside.
constexpr const char* kSystemDirs[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};
// Single files of /etc that the dynamic loader and the compiler drivers read; the rest of /etc
// (passwd, credentials, dotfiles) stays outside.
constexpr const char* kEtcFiles[] = {"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
                                     "/etc/alternatives"};

std::vector<std::string> system_args() {
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

bool env_off() {
  const char* e = std::getenv("KEVO_SANDBOX");
  return e && std::string_view(e) == "off";
}

SandboxKind probe() {
  if (env_off()) return SandboxKind::None;
  auto bwrap = find_program("bwrap");
  if (!bwrap) return SandboxKind::None;
  RunOptions ro;
  ro.argv = system_args();
  ro.argv.insert(ro.argv.end(), {"--", "/bin/sh", "-c", "test ! -e /etc/passwd && echo ok"});
  ro.timeout = std::chrono::seconds(20);
  auto r = run_process(ro);
  if (r && r->ok() && r->out == "ok\n") return SandboxKind::Bubblewrap;
  spdlog::debug("bubblewrap probe failed: {}", r ? r->describe() + ": " + r->err : r.error().message);
  return SandboxKind::None;
}

}  // namespace

const char* to_string(SandboxKind k) {
  return k == SandboxKind::Bubblewrap ? "bubblewrap" : "none";
}

SandboxKind sandbox_kind() {
  static std::once_flag once;
  static SandboxKind kind = SandboxKind::None;
  std::call_once(once, [] {
    kind = probe();
    if (kind == SandboxKind::None && !env_off())
      spdlog::warn(
          "the compiler runs without a file sandbox here (bubblewrap missing or not permitted); "
          "candidates are still limited to #include <header> by the include rules");
  });
  return kind;
}

std::vector<std::string> sandbox_prefix(const SandboxPaths& paths) {
  if (sandbox_kind() != SandboxKind::Bubblewrap) return {};
  std::vector<std::string> a = system_args();
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

fs::path toolkit_root(const std::string& compiler) {
  auto p = find_program(compiler);
  if (!p) return {};
  std::error_code ec;
  fs::path c = fs::canonical(*p, ec);
  if (ec) return {};
  return c.parent_path().parent_path();
}

}  // namespace kevo
