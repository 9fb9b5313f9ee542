// The compiler's file sandbox: nvcc, its steps and g++ see only the toolkit and system directories
// (read-only), the include directories kevo passes (read-only) and the compile's private build
// directory (writable). Two ways, probed once each: bubblewrap (`bwrap`, Debian package bubblewrap:
// a mount namespace in which nothing else of the host exists) or, where bubblewrap cannot make
// namespaces (e.g. a GPU machine's container), Landlock (the kernel refuses to open anything
// else). Where neither works kevo warns once and relies on the include rules
// (compile/include_rules.h), which refuse every way the source itself could name a file.
// Thread-safe: the probes run once per process.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "util/subprocess.h"

namespace kevo {

enum class SandboxKind { None, Bubblewrap, Landlock };
const char* to_string(SandboxKind k);  // "none", "bubblewrap", "landlock"

// What a compile asks for: the first kind that works here (Auto), none, or one kind (tests).
enum class SandboxMode { Auto, Off, Bubblewrap, Landlock };

// The kind Auto picks on this machine: bubblewrap, else Landlock, else none (after one warning).
// KEVO_SANDBOX=off|bubblewrap|landlock overrides the choice (off: for debugging the compiler's
// environment).
SandboxKind sandbox_kind();

// Whether this kind confines a command here (probed once per kind: /etc/passwd must be unreadable).
bool sandbox_works(SandboxKind k);

struct SandboxPaths {
  std::vector<std::filesystem::path> read_only;  // besides the system dirs: toolkit, include dirs
  std::filesystem::path writable;                // the build directory (also the working directory)
};

// How commands run confined: an argv prefix ("bwrap", ..., "--") or a Landlock ruleset the child
// restricts itself to before exec. Paths keep their names either way, so the compiler's messages
// and nvcc's step list read the same as without it. Owns the ruleset's descriptor.
class Sandbox {
 public:
  Sandbox() = default;
  Sandbox(Sandbox&& o) noexcept;
  Sandbox& operator=(Sandbox&& o) noexcept;
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;
  ~Sandbox();

  SandboxKind kind() const { return kind_; }
  // Makes `ro` (argv already set) run inside.
  void apply(RunOptions& ro) const;

 private:
  friend Sandbox make_sandbox(const SandboxPaths&, SandboxMode);
  SandboxKind kind_ = SandboxKind::None;
  std::vector<std::string> prefix_;
  int landlock_fd_ = -1;
};

// The sandbox for one compile; kind None when the mode's kind does not work here.
Sandbox make_sandbox(const SandboxPaths& paths, SandboxMode mode = SandboxMode::Auto);

// The root of the toolkit a compiler belongs to (the parent of its bin/), resolved through
// symlinks and PATH; empty if the program is not found.
std::filesystem::path toolkit_root(const std::string& compiler);

}  // namespace kevo
