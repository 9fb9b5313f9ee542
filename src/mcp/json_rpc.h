// JSON-RPC 2.0 as MCP uses it: requests (with an id), notifications (without), responses, and the
// standard error codes. Message text that is not JSON, or JSON that is not a message, becomes the
// error reply the specification asks for; nothing here throws.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kevo::mcp {

enum class RpcError {
  kParse = -32700,           // not JSON
  kInvalidRequest = -32600,  // JSON, but not a request
  kMethodNotFound = -32601,
  kInvalidParams = -32602,   // also an unknown tool or resource
  kInternal = -32603,
  kServerBusy = -32000,      // too many requests in flight
  kNotInitialized = -32002,  // a request before `initialize`
};

struct RpcRequest {
  nlohmann::json id;  // null for a notification
  std::string method;
  nlohmann::json params = nlohmann::json::object();
  bool notification() const { return id.is_null(); }
};

// A request or notification; otherwise the error reply to send (id null where none could be read).
struct Parsed {
  std::optional<RpcRequest> request;
  nlohmann::json error_reply;  // set when !request, unless the message was a response (ignored)
};
Parsed parse_message(const nlohmann::json& msg);

nlohmann::json rpc_result(const nlohmann::json& id, nlohmann::json result);
nlohmann::json rpc_error(const nlohmann::json& id, RpcError code, const std::string& message);

// Text that is not valid UTF-8 (a kernel source may hold any bytes) is replaced, never thrown on.
std::string dump_message(const nlohmann::json& msg);

// The string at key of an object; "" when it is missing or not a string (params come from anyone).
std::string string_at(const nlohmann::json& obj, const char* key);

// Parses text as JSON; nullopt when it is not.
std::optional<nlohmann::json> parse_json(std::string_view text);

}  // namespace kevo::mcp
