// The wire formats the loopback model server speaks, each in its own file:
// - Anthropic Messages (POST /v1/messages): with "stream": true the server-sent events
//   message_start, content_block_start, content_block_delta (text_delta, or input_json_delta for a
//   tool_use block), content_block_stop, message_delta (stop_reason, usage), message_stop; without
//   it one message object.
// - OpenAI Responses (POST /v1/responses, always streamed by the CLIs): response.created,
//   response.output_item.added, response.function_call_arguments.delta/.done (or the output_text
//   events of a message), response.output_item.done, response.completed. Codex finds an MCP tool
//   by `name` plus `namespace: "mcp__<server>"` on the function call.
// Each side reads from a request what decides its answer: the tool-call ids it carries results
// for and the tools it offers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/fake_model_server_script.h"

namespace kevo::test {

struct WireAnswer {
  int status = 200;
  std::string content_type = "text/event-stream";
  std::vector<std::string> chunks;  // sent in order (one SSE event each when streaming)
};

// A tool the request offers, as the script's (server, tool) resolves to it.
struct OfferedTool {
  std::string name;        // as the model must call it
  std::string name_space;  // OpenAI: the namespace it sits in ("mcp__kevo"), else empty
};

// ---- Anthropic Messages ----
std::vector<std::string> anthropic_tool_results(const nlohmann::json& body);
// nullopt: the request offers tools, none of them this one; "" offered: the request offers none.
std::optional<OfferedTool> anthropic_find_tool(const nlohmann::json& body, const std::string& server,
                                               const std::string& tool);
bool anthropic_offers_tools(const nlohmann::json& body);
// `tools` holds one resolved tool per call of the turn (empty for a text turn).
WireAnswer anthropic_answer(const ScriptedTurn& turn, size_t k, const std::vector<OfferedTool>& tools,
                            const nlohmann::json& body);
WireAnswer anthropic_text(const std::string& text, const nlohmann::json& body);
WireAnswer anthropic_error(int status, const std::string& type, const std::string& message);

// ---- OpenAI Responses ----
std::vector<std::string> openai_tool_results(const nlohmann::json& body);
std::optional<OfferedTool> openai_find_tool(const nlohmann::json& body, const std::string& server,
                                            const std::string& tool);
bool openai_offers_tools(const nlohmann::json& body);
WireAnswer openai_answer(const ScriptedTurn& turn, size_t k, const std::vector<OfferedTool>& tools,
                         const nlohmann::json& body);
WireAnswer openai_text(const std::string& text, const nlohmann::json& body);
WireAnswer openai_error(int status, const std::string& type, const std::string& message);

// ---- OpenAI Chat Completions (POST /v1/chat/completions, not streamed: kevo's own LLM layer) ----
// Tool results are `role: "tool"` messages with a tool_call_id; the answer is one chat.completion
// object whose message carries tool_calls (finish_reason "tool_calls") or a text ("stop").
std::vector<std::string> chat_tool_results(const nlohmann::json& body);
std::optional<OfferedTool> chat_find_tool(const nlohmann::json& body, const std::string& server,
                                          const std::string& tool);
bool chat_offers_tools(const nlohmann::json& body);
WireAnswer chat_answer(const ScriptedTurn& turn, size_t k, const std::vector<OfferedTool>& tools,
                       const nlohmann::json& body);
WireAnswer chat_text(const std::string& text, const nlohmann::json& body);

// One server-sent event: "event: NAME\ndata: JSON\n\n".
std::string sse_event(const std::string& name, const nlohmann::json& data);

}  // namespace kevo::test
