// One MCP session (the Model Context Protocol, revisions 2024-11-05 to 2025-11-25): the
// lifecycle (initialize, then requests), tools/list and tools/call, resources/list and
// resources/read, ping. A transport (stdio.h, http.h) feeds it messages; it answers each request
// and keeps the count of requests it refused. It owns the session's ToolProvider.
//
// Thread-safety: handle() may run on several threads at once once the session is initialized.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "mcp/json_rpc.h"
#include "mcp/tool.h"

namespace kevo::mcp {

struct ServerInfo {
  std::string name = "kevo", version, instructions;
};

// The newest revision this server speaks; a client asking for another it knows gets that one.
inline constexpr const char* kLatestProtocol = "2025-11-25";
bool known_protocol(const std::string& version);

class Session {
 public:
  Session(ServerInfo info, std::unique_ptr<ToolProvider> provider);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // One message (already parsed JSON); the reply, or nullopt for a notification or a response.
  std::optional<nlohmann::json> handle(const nlohmann::json& msg);
  // The same from text: text that is not JSON gets the parse error reply.
  std::optional<nlohmann::json> handle_text(std::string_view text);
  // Counts a request the transport refused before it reached the session (too large, too many).
  void count_refused() { ++refused_; }
  // Ends the session once: the provider records why. Called by the transport after the last reply.
  void close(CloseReason why);

  bool initialized() const { return initialized_; }
  bool expired() const { return provider_->expired(); }
  std::string protocol() const;
  int refused() const { return refused_; }

 private:
  nlohmann::json dispatch(const RpcRequest& r);
  nlohmann::json initialize(const RpcRequest& r);
  nlohmann::json call_tool(const RpcRequest& r);
  nlohmann::json read_resource(const RpcRequest& r);
  nlohmann::json refuse(const RpcRequest& r, RpcError code, const std::string& message);

  ServerInfo info_;
  std::unique_ptr<ToolProvider> provider_;
  std::atomic<bool> initialized_{false}, closed_{false};
  std::atomic<int> refused_{0};
  mutable std::mutex mu_;
  std::string protocol_;
};

}  // namespace kevo::mcp
