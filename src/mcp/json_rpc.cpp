#include "mcp/json_rpc.h"

namespace kevo::mcp {

using nlohmann::json;

namespace {

bool valid_id(const json& id) { return id.is_string() || id.is_number_integer(); }

}  // namespace

Parsed parse_message(const json& msg) {
  Parsed p;
  const json id = msg.is_object() && msg.contains("id") && valid_id(msg["id"]) ? msg["id"] : json();
  if (!msg.is_object() || string_at(msg, "jsonrpc") != "2.0") {
    p.error_reply = rpc_error(id, RpcError::kInvalidRequest, "not a JSON-RPC 2.0 message (\"jsonrpc\": \"2.0\" missing)");
    return p;
  }
  if (!msg.contains("method")) {
    if (msg.contains("result") || msg.contains("error")) return p;  // a response to nothing we asked
    p.error_reply = rpc_error(id, RpcError::kInvalidRequest, "a request needs a \"method\"");
    return p;
  }
  if (!msg["method"].is_string()) {
    p.error_reply = rpc_error(id, RpcError::kInvalidRequest, "\"method\" must be a string");
    return p;
  }
  if (msg.contains("id") && !valid_id(msg["id"])) {
    p.error_reply = rpc_error(json(), RpcError::kInvalidRequest, "\"id\" must be a string or an integer");
    return p;
  }
  if (msg.contains("params") && !msg["params"].is_object()) {
    p.error_reply = rpc_error(id, RpcError::kInvalidParams, "\"params\" must be an object");
    return p;
  }
  p.request = RpcRequest{id, msg["method"].get<std::string>(), msg.value("params", json::object())};
  return p;
}

json rpc_result(const json& id, json result) { return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}}; }

json rpc_error(const json& id, RpcError code, const std::string& message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", static_cast<int>(code)}, {"message", message}}}};
}

std::string dump_message(const json& msg) { return msg.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string string_at(const json& obj, const char* key) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<json> parse_json(std::string_view text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

}  // namespace kevo::mcp
