// What an MCP session serves: tools (a name, a JSON schema for the arguments, a result that is both
// structured JSON and text) and read-only resources. The protocol (session.h) knows nothing about
// kernels; a ToolProvider (agent/kernel_tools.h for kevo's checker) supplies both.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kevo::mcp {

struct ToolSpec {
  std::string name, title, description;
  nlohmann::json input_schema = nlohmann::json::object();  // JSON Schema of the arguments object
  nlohmann::json output_schema;                             // of the structured result; null: none
  bool read_only = false;                                   // changes nothing (annotations.readOnlyHint)
};

// A tool's answer. An error here is the tool's (a budget, a bad argument): the model sees it and
// may try again. Protocol errors (an unknown tool, a request that is not JSON-RPC) are the
// session's and never reach a provider.
struct ToolResult {
  nlohmann::json structured = nlohmann::json::object();
  std::string text;
  bool is_error = false;

  static ToolResult error(std::string message);
};

struct ResourceSpec {
  std::string uri, name, description, mime_type = "text/plain";
};

struct ClientInfo {
  std::string name, version;
};

// Why a session ended: said once to the provider, which records it.
enum class CloseReason {
  kClientGone,  // stdin closed, the HTTP session deleted or idle past its limit
  kShutdown,    // the server was stopped (SIGINT, SIGTERM)
};

// Thread-safety: call() may run on several threads at once (a long evaluation does not hold up a
// history call); the provider serialises what must be.
class ToolProvider {
 public:
  virtual ~ToolProvider() = default;
  virtual std::vector<ToolSpec> tools() const = 0;
  // Called only with a name tools() lists and arguments that match its input schema.
  virtual ToolResult call(const std::string& name, const nlohmann::json& args) = 0;
  virtual std::vector<ResourceSpec> resources() const { return {}; }
  virtual std::optional<std::string> read_resource(const std::string& /*uri*/) { return std::nullopt; }
  virtual void on_initialized(const ClientInfo& /*client*/) {}
  // True once the session has nothing left to do (its wall-time budget has passed and no call is
  // running): the transport then ends it.
  virtual bool expired() const { return false; }
  // After the last call has returned. `protocol_errors`: requests the session refused.
  virtual void close(CloseReason /*why*/, int /*protocol_errors*/) {}
};

}  // namespace kevo::mcp
