// Where an agent CLI is installed: the npm package and version kevo was tested with, finding the
// executable, and the folders it must read inside its sandbox (its install folder, and node's when
// the executable is a node script).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "agent/cli_kind.h"
#include "util/result.h"

namespace kevo::agent {

struct CliPackage {
  const char* npm = "";         // "@anthropic-ai/claude-code"
  const char* version = "";     // the version the CLI episode tests pass with
  const char* executable = "";  // "claude"
};

// kCommand has none (empty strings).
CliPackage cli_package(AgentCliKind kind);

// The executable: `explicit_path` when given, else the package's executable on PATH. Not found:
// ErrorCode::kNotFound, the message naming the npm package to install with its version.
Result<std::filesystem::path> find_cli(AgentCliKind kind, const std::optional<std::filesystem::path>& explicit_path);

struct CliInstall {
  std::filesystem::path executable;               // as found (a symlink in node_modules/.bin, say)
  std::vector<std::filesystem::path> read_only;   // what the sandbox must let it read and run
  std::vector<std::filesystem::path> path_dirs;   // for PATH: its bin folder, node's
};

// The install behind an executable: the nearest node_modules folder above its real path (which
// holds the package's platform binaries too), else the file alone; and node's install when its
// first line runs node. Files under /usr are readable in any sandbox already.
CliInstall cli_install(const std::filesystem::path& executable);

}  // namespace kevo::agent
