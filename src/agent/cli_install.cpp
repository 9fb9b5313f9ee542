#include "agent/cli_install.h"

#include <fstream>

#include "util/subprocess.h"

namespace kevo::agent {

namespace fs = std::filesystem;

namespace {

// What to allow for an executable: its nearest node_modules ancestor (the package and its platform
// binaries), else the file alone: its folder may be a user's ~/bin beside anything else.
fs::path install_root(const fs::path& real) {
  for (fs::path p = real.parent_path(); !p.empty() && p != p.root_path(); p = p.parent_path())
    if (p.filename() == "node_modules") return p;
  return real;
}

bool runs_node(const fs::path& file) {
  std::ifstream in(file);
  std::string first;
  std::getline(in, first);
  return first.rfind("#!", 0) == 0 && first.find("node") != std::string::npos;
}

}  // namespace

CliPackage cli_package(AgentCliKind kind) {
  switch (kind) {
    case AgentCliKind::kClaudeCode: return {"@anthropic-ai/claude-code", "2.1.332", "claude"};
    case AgentCliKind::kCodex: return {"@openai/codex", "0.169.0", "codex"};
    case AgentCliKind::kCommand: return {};
  }
  return {};
}

Result<fs::path> find_cli(AgentCliKind kind, const std::optional<fs::path>& explicit_path) {
  const CliPackage pkg = cli_package(kind);
  const std::string name = explicit_path ? explicit_path->string() : pkg.executable;
  if (name.empty()) return fail("{}: no executable named", to_string(kind));
  if (auto found = find_program(name)) return fs::path(*found);
  if (!*pkg.npm) return fail(ErrorCode::kNotFound, "{}: '{}' is not installed or not executable", to_string(kind), name);
  return fail(ErrorCode::kNotFound,
              "{}: the '{}' CLI is not installed ({}); install it with `npm install -g {}@{}` "
              "(or scripts/agent-clis.sh, which installs the tested versions under build/agent-clis)",
              to_string(kind), name, explicit_path ? "no such executable" : "not on PATH", pkg.npm, pkg.version);
}

CliInstall cli_install(const fs::path& executable) {
  CliInstall c;
  c.executable = executable;
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(executable, ec);
  c.read_only.push_back(install_root(real));
  c.path_dirs.push_back(executable.parent_path());
  if (runs_node(real))
    if (auto node = find_program("node")) {
      // node's own install (PREFIX/bin/node beside PREFIX/lib/node_modules), else the binary alone.
      const fs::path node_real = fs::weakly_canonical(*node, ec), prefix = node_real.parent_path().parent_path();
      c.read_only.push_back(fs::is_directory(prefix / "lib" / "node_modules", ec) ? prefix : node_real);
      c.path_dirs.push_back(fs::path(*node).parent_path());
    }
  return c;
}

}  // namespace kevo::agent
