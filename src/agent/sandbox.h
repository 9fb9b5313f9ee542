// The confinement of an agent CLI: a Landlock ruleset its process restricts itself to before exec,
// so that it and everything it starts (its shell commands, its MCP bridge) see only
//   - the workspace, read-write (its files, its private HOME and TMPDIR);
//   - the system's read-only folders (/usr, /bin, /sbin, /lib*), /etc without the files that hold
//     secrets (shadow, sudoers, ssh host keys, TLS private keys, ...), the kernel's global figures
//     in /proc and /sys (CPUs, memory; no process's folder: another's environ holds its keys), the
//     few devices a shell opens;
//   - the read-only paths the caller names (the CLI's install folder, node, the bridge, its config);
//   - TCP: connections to the named ports only (the model API's), no listening (Landlock ABI 4+);
//   - no signals to, and no abstract Unix sockets of, processes outside (ABI 6+).
// Everything else (a run database, ~/.cache/kevo, other runs' work folders, held-out task data,
// the user's home) cannot be opened. Landlock needs no privileges and no namespaces, so it works in
// the containers GPU machines run kevo in, where bubblewrap cannot make namespaces.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "util/result.h"

namespace kevo::agent {

struct AgentSandboxSpec {
  std::filesystem::path workspace;                  // read-write
  std::vector<std::filesystem::path> read_only;     // besides the system's
  std::vector<int> connect_ports;                   // TCP ports it may connect to; empty: none
};

// Owns the ruleset's descriptor; the child applies it with ProcessLimits::landlock_ruleset_fd.
class AgentSandbox {
 public:
  AgentSandbox() = default;
  AgentSandbox(AgentSandbox&& o) noexcept;
  AgentSandbox& operator=(AgentSandbox&& o) noexcept;
  AgentSandbox(const AgentSandbox&) = delete;
  AgentSandbox& operator=(const AgentSandbox&) = delete;
  ~AgentSandbox();

  int ruleset_fd() const { return fd_; }
  int abi() const { return abi_; }
  bool confines_tcp() const { return abi_ >= 4; }
  bool confines_signals() const { return abi_ >= 6; }

 private:
  friend Result<AgentSandbox> make_agent_sandbox(const AgentSandboxSpec&);
  int fd_ = -1;
  int abi_ = 0;
};

// Fails (naming the cause) where Landlock is missing: an agent never runs unconfined. A missing
// read-only path is skipped; a missing workspace is an error.
Result<AgentSandbox> make_agent_sandbox(const AgentSandboxSpec& spec);

// The entries of /etc the sandbox leaves out (absolute paths): the files and folders that hold
// secrets on Debian and Ubuntu.
const std::vector<std::string>& etc_secrets();

}  // namespace kevo::agent
