// The compiler's file sandbox: nvcc, its steps and g++ see only the toolkit and system directories
// (read-only), the include directories kevo passes (read-only) and the compile's private build
// directory (writable), through bubblewrap (`bwrap`, Debian package bubblewrap). Nothing else of
// the host (home, /etc, /work, other caches) exists inside. Where bubblewrap cannot run (e.g. a GPU
// machine's container without user namespaces) kevo warns once and relies on the include rules
// (compile/include_rules.h), which refuse every way the source itself could name a file.
// Thread-safe: the probe runs once per process.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kevo {

enum class SandboxKind { None, Bubblewrap };
const char* to_string(SandboxKind k);  // "none", "bubblewrap"

// The sandbox that works on this machine, probed once (a trivial command under bwrap).
// KEVO_SANDBOX=off turns it off (for debugging the compiler's environment).
SandboxKind sandbox_kind();

struct SandboxPaths {
  std::vector<std::filesystem::path> read_only;  // besides the system dirs: toolkit, include dirs
  std::filesystem::path writable;                // the build directory (also the working directory)
};

// The argv prefix that runs a command inside the sandbox ("bwrap", ..., "--"), or empty when no
// sandbox works here (after one warning per process). Paths keep their names inside, so the
// compiler's messages and nvcc's step list read the same as without it.
std::vector<std::string> sandbox_prefix(const SandboxPaths& paths);

// The root of the toolkit a compiler belongs to (the parent of its bin/), resolved through
// symlinks and PATH; empty if the program is not found.
std::filesystem::path toolkit_root(const std::string& compiler);

}  // namespace kevo
