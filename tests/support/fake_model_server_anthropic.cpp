// Anthropic Messages, as platform.claude.com documents its streaming: every event carries its type
// twice (the SSE event name and "type" in the data), a tool_use block starts with an empty input
// that input_json_delta events fill with partial JSON, and message_delta carries the stop reason.
#include <fmt/format.h>

#include "support/fake_model_server_wire.h"

namespace kevo::test {

using nlohmann::json;

namespace {

// Messages carries a tool_use block's input as JSON: raw arguments that parse go as that value (an
// array, a string), others as the text itself.
json anthropic_input(const ScriptedToolCall& c) {
  if (!c.raw_arguments) return c.arguments;
  json v = json::parse(*c.raw_arguments, nullptr, false);
  return v.is_discarded() ? json(*c.raw_arguments) : v;
}

constexpr size_t kJsonPiece = 256;  // the size of each partial_json piece, so a client must join them

json usage(const json& body, int output_tokens) {
  // Roughly four characters a token: a client that prices the call sees plausible figures.
  return {{"input_tokens", static_cast<int>(body.dump().size() / 4)},
          {"cache_creation_input_tokens", 0},
          {"cache_read_input_tokens", 0},
          {"output_tokens", output_tokens}};
}

std::string model_of(const json& body) { return body.value("model", std::string("kevo-fake-model")); }

// The content blocks of the turn, complete (the non-streaming message's content).
json content_blocks(const ScriptedTurn& turn, size_t k, const std::vector<OfferedTool>& tools) {
  json blocks = json::array();
  if (turn.tool_calls.empty()) blocks.push_back({{"type", "text"}, {"text", turn.text}});
  for (size_t i = 0; i < turn.tool_calls.size(); ++i)
    blocks.push_back({{"type", "tool_use"},
                      {"id", tool_call_id("toolu_", k, i)},
                      {"name", tools[i].name},
                      {"input", anthropic_input(turn.tool_calls[i])}});
  return blocks;
}

void stream_block(WireAnswer& a, size_t index, const json& block) {
  json start = block;
  json delta;
  if (block["type"] == "text") {
    start["text"] = "";
    delta = {{"type", "text_delta"}, {"text", block["text"]}};
  } else {
    start["input"] = json::object();
  }
  a.chunks.push_back(sse_event("content_block_start",
                               {{"type", "content_block_start"}, {"index", index}, {"content_block", start}}));
  if (block["type"] == "text") {
    a.chunks.push_back(
        sse_event("content_block_delta", {{"type", "content_block_delta"}, {"index", index}, {"delta", delta}}));
  } else {
    const std::string args = block["input"].dump();
    for (size_t off = 0; off < args.size(); off += kJsonPiece)
      a.chunks.push_back(sse_event(
          "content_block_delta",
          {{"type", "content_block_delta"},
           {"index", index},
           {"delta", {{"type", "input_json_delta"}, {"partial_json", args.substr(off, kJsonPiece)}}}}));
  }
  a.chunks.push_back(sse_event("content_block_stop", {{"type", "content_block_stop"}, {"index", index}}));
}

WireAnswer message(const json& blocks, const std::string& stop_reason, size_t k, const json& body) {
  WireAnswer a;
  const std::string id = fmt::format("msg_kevo_{}", k);
  if (!body.value("stream", false)) {
    a.content_type = "application/json";
    a.chunks.push_back(json{{"id", id},
                            {"type", "message"},
                            {"role", "assistant"},
                            {"model", model_of(body)},
                            {"content", blocks},
                            {"stop_reason", stop_reason},
                            {"stop_sequence", nullptr},
                            {"usage", usage(body, 20)}}
                           .dump());
    return a;
  }
  json start = {{"id", id},           {"type", "message"},          {"role", "assistant"},
                {"model", model_of(body)}, {"content", json::array()}, {"stop_reason", nullptr},
                {"stop_sequence", nullptr}, {"usage", usage(body, 1)}};
  a.chunks.push_back(sse_event("message_start", {{"type", "message_start"}, {"message", start}}));
  a.chunks.push_back(sse_event("ping", {{"type", "ping"}}));
  for (size_t i = 0; i < blocks.size(); ++i) stream_block(a, i, blocks[i]);
  a.chunks.push_back(sse_event("message_delta", {{"type", "message_delta"},
                                                 {"delta", {{"stop_reason", stop_reason}, {"stop_sequence", nullptr}}},
                                                 {"usage", {{"output_tokens", 20}}}}));
  a.chunks.push_back(sse_event("message_stop", {{"type", "message_stop"}}));
  return a;
}

}  // namespace

std::vector<std::string> anthropic_tool_results(const json& body) {
  std::vector<std::string> ids;
  if (!body.contains("messages") || !body["messages"].is_array()) return ids;
  for (const auto& m : body["messages"]) {
    if (!m.is_object() || !m.contains("content") || !m["content"].is_array()) continue;
    for (const auto& c : m["content"])
      if (c.is_object() && c.value("type", "") == "tool_result" && c.contains("tool_use_id") &&
          c["tool_use_id"].is_string())
        ids.push_back(c["tool_use_id"].get<std::string>());
  }
  return ids;
}

bool anthropic_offers_tools(const json& body) {
  return body.contains("tools") && body["tools"].is_array() && !body["tools"].empty();
}

std::optional<OfferedTool> anthropic_find_tool(const json& body, const std::string& server, const std::string& tool) {
  if (!anthropic_offers_tools(body)) return std::nullopt;
  const std::string mcp_name = "mcp__" + server + "__" + tool;
  for (const auto& t : body["tools"]) {
    const std::string name = t.is_object() ? t.value("name", "") : "";
    if (name == mcp_name || name == tool) return OfferedTool{name, ""};
  }
  return std::nullopt;
}

WireAnswer anthropic_answer(const ScriptedTurn& turn, size_t k, const std::vector<OfferedTool>& tools,
                            const json& body) {
  return message(content_blocks(turn, k, tools), turn.tool_calls.empty() ? "end_turn" : "tool_use", k, body);
}

WireAnswer anthropic_text(const std::string& text, const json& body) {
  ScriptedTurn t;
  t.text = text;
  return message(content_blocks(t, 0, {}), "end_turn", 9999, body);
}

WireAnswer anthropic_error(int status, const std::string& type, const std::string& message) {
  WireAnswer a;
  a.status = status;
  a.content_type = "application/json";
  a.chunks.push_back(json{{"type", "error"}, {"error", {{"type", type}, {"message", message}}}}.dump());
  return a;
}

std::string sse_event(const std::string& name, const json& data) {
  return "event: " + name + "\ndata: " + data.dump() + "\n\n";
}

}  // namespace kevo::test
