// kevo's tools, as one ToolProvider over a KernelSession: `task`, `compile`, `evaluate`,
// `profile`, `history`, `submit`, with their JSON schemas and descriptions, and the task's text,
// ABI and baseline as resources. `kevo mcp` serves them; the same specs and calls are what a
// search's tool-using episodes use.
#pragma once

#include <memory>

#include "agent/kernel_session.h"
#include "mcp/tool.h"

namespace kevo::agent {

// What the server tells a client about itself at `initialize` (how to use the tools).
std::string server_instructions();

class KernelTools final : public mcp::ToolProvider {
 public:
  explicit KernelTools(std::unique_ptr<KernelSession> session) : session_(std::move(session)) {}

  std::vector<mcp::ToolSpec> tools() const override;
  mcp::ToolResult call(const std::string& name, const nlohmann::json& args) override;
  std::vector<mcp::ResourceSpec> resources() const override;
  std::optional<std::string> read_resource(const std::string& uri) override;
  void on_initialized(const mcp::ClientInfo& client) override;
  bool expired() const override { return session_->expired(); }
  void close(mcp::CloseReason why, int protocol_errors) override;

  KernelSession& session() { return *session_; }

 private:
  mcp::ToolResult attempt_result(const ToolResultOr<Attempt>& a) const;
  std::unique_ptr<KernelSession> session_;
};

}  // namespace kevo::agent
