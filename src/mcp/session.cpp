#include "mcp/session.h"

#include <algorithm>

#include <fmt/format.h>

#include "mcp/schema_check.h"

namespace kevo::mcp {

using nlohmann::json;

namespace {

json tool_json(const ToolSpec& t) {
  json j = {{"name", t.name}, {"description", t.description}, {"inputSchema", t.input_schema}};
  if (!t.title.empty()) j["title"] = t.title;
  if (!t.output_schema.is_null()) j["outputSchema"] = t.output_schema;
  j["annotations"] = {{"readOnlyHint", t.read_only}, {"openWorldHint", false}};
  return j;
}

json result_json(const ToolResult& r, bool structured) {
  json j = {{"content", json::array({{{"type", "text"}, {"text", r.text}}})}, {"isError", r.is_error}};
  if (structured && !r.is_error) j["structuredContent"] = r.structured;
  return j;
}

}  // namespace

bool known_protocol(const std::string& v) {
  return v == "2025-11-25" || v == "2025-06-18" || v == "2025-03-26" || v == "2024-11-05";
}

Session::Session(ServerInfo info, std::unique_ptr<ToolProvider> provider)
    : info_(std::move(info)), provider_(std::move(provider)) {}

Session::~Session() { close(CloseReason::kShutdown); }

void Session::close(CloseReason why) {
  if (closed_.exchange(true)) return;
  provider_->close(why, refused_);
}

std::string Session::protocol() const {
  std::lock_guard lock(mu_);
  return protocol_;
}

std::optional<json> Session::handle_text(std::string_view text) {
  auto j = parse_json(text);
  if (!j) {
    ++refused_;
    return rpc_error(json(), RpcError::kParse, "the message is not JSON");
  }
  return handle(*j);
}

std::optional<json> Session::handle(const json& msg) {
  if (msg.is_array()) {  // a batch (revision 2025-03-26); later revisions send none, but it costs nothing
    json replies = json::array();
    for (const auto& m : msg)
      if (auto r = handle(m)) replies.push_back(std::move(*r));
    if (msg.empty()) return refuse({}, RpcError::kInvalidRequest, "an empty batch");
    if (replies.empty()) return std::nullopt;
    return replies;
  }
  Parsed p = parse_message(msg);
  if (!p.request) {
    if (p.error_reply.is_null()) return std::nullopt;
    ++refused_;
    return p.error_reply;
  }
  if (p.request->notification()) {
    if (p.request->method == "notifications/initialized") initialized_ = true;
    return std::nullopt;  // cancelled, progress, roots: nothing to answer
  }
  return dispatch(*p.request);
}

json Session::refuse(const RpcRequest& r, RpcError code, const std::string& message) {
  ++refused_;
  return rpc_error(r.id, code, message);
}

json Session::dispatch(const RpcRequest& r) {
  if (r.method == "initialize") return initialize(r);
  if (r.method == "ping") return rpc_result(r.id, json::object());
  if (protocol().empty())
    return refuse(r, RpcError::kNotInitialized, "the session is not initialized: send \"initialize\" first");
  if (r.method == "tools/list") {
    json tools = json::array();
    for (const auto& t : provider_->tools()) tools.push_back(tool_json(t));
    return rpc_result(r.id, {{"tools", tools}});
  }
  if (r.method == "tools/call") return call_tool(r);
  if (r.method == "resources/list") {
    json list = json::array();
    for (const auto& s : provider_->resources())
      list.push_back({{"uri", s.uri}, {"name", s.name}, {"description", s.description}, {"mimeType", s.mime_type}});
    return rpc_result(r.id, {{"resources", list}});
  }
  if (r.method == "resources/templates/list") return rpc_result(r.id, {{"resourceTemplates", json::array()}});
  if (r.method == "resources/read") return read_resource(r);
  return refuse(r, RpcError::kMethodNotFound, fmt::format("method '{}' is not served here", r.method));
}

json Session::initialize(const RpcRequest& r) {
  const std::string asked = string_at(r.params, "protocolVersion");
  ClientInfo client;
  if (auto ci = r.params.find("clientInfo"); ci != r.params.end() && ci->is_object())
    client = {string_at(*ci, "name"), string_at(*ci, "version")};
  {
    std::lock_guard lock(mu_);
    protocol_ = known_protocol(asked) ? asked : kLatestProtocol;
  }
  provider_->on_initialized(client);
  json result = {{"protocolVersion", protocol()},
                 {"capabilities", {{"tools", {{"listChanged", false}}}, {"resources", {{"listChanged", false}}}}},
                 {"serverInfo", {{"name", info_.name}, {"version", info_.version}}}};
  if (!info_.instructions.empty()) result["instructions"] = info_.instructions;
  return rpc_result(r.id, result);
}

json Session::call_tool(const RpcRequest& r) {
  if (!r.params.contains("name") || !r.params["name"].is_string())
    return refuse(r, RpcError::kInvalidParams, "tools/call needs a \"name\" string");
  const std::string name = r.params["name"];
  const auto tools = provider_->tools();
  auto t = std::find_if(tools.begin(), tools.end(), [&](const ToolSpec& s) { return s.name == name; });
  if (t == tools.end()) {
    std::string names;
    for (const auto& s : tools) names += (names.empty() ? "" : ", ") + s.name;
    return refuse(r, RpcError::kInvalidParams, fmt::format("unknown tool '{}' (tools: {})", name, names));
  }
  const json args = r.params.value("arguments", json::object());
  // A wrong argument is the model's to fix: it comes back as a tool error it can read.
  if (auto e = argument_error(t->input_schema, args)) {
    ++refused_;
    return rpc_result(r.id, result_json(ToolResult::error(*e), false));
  }
  const bool structured = protocol() >= std::string("2025-06-18");  // structuredContent came then
  return rpc_result(r.id, result_json(provider_->call(name, args), structured));
}

json Session::read_resource(const RpcRequest& r) {
  const std::string uri = string_at(r.params, "uri");
  auto text = provider_->read_resource(uri);
  if (!text) return refuse(r, RpcError::kInvalidParams, fmt::format("no resource '{}'", uri));
  std::string mime = "text/plain";
  for (const auto& s : provider_->resources())
    if (s.uri == uri) mime = s.mime_type;
  return rpc_result(r.id, {{"contents", json::array({{{"uri", uri}, {"mimeType", mime}, {"text", *text}}})}});
}

ToolResult ToolResult::error(std::string message) {
  ToolResult r;
  r.text = std::move(message);
  r.is_error = true;
  return r;
}

}  // namespace kevo::mcp
