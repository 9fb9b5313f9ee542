// Internal: tool calling in the two wire protocols (protocol.h), following each provider's
// documented format.
//  - OpenAI chat completions: `tools: [{type: "function", function: {name, description,
//    parameters}}]`; an assistant turn's calls as `tool_calls: [{id, type: "function", function:
//    {name, arguments: "<JSON text>"}}]`; each result as its own `{role: "tool", tool_call_id,
//    content}` message; the answer's calls in `choices[0].message.tool_calls`.
//  - Anthropic Messages: `tools: [{name, description, input_schema}]`; calls as `tool_use` content
//    blocks `{id, name, input}`; results as `tool_result` blocks `{tool_use_id, content, is_error}`
//    in the next user turn.
#pragma once

#include <nlohmann/json.hpp>

#include "llm/types.h"

namespace kevo::llm {

nlohmann::json openai_tools(const std::vector<ToolDef>& tools);
// The chat-completions messages one Message becomes (a user turn with results: one per result).
void openai_append_message(nlohmann::json& messages, const Message& m);
std::vector<ToolCall> openai_tool_calls(const nlohmann::json& message);

nlohmann::json anthropic_tools(const std::vector<ToolDef>& tools);
nlohmann::json anthropic_message(const Message& m);
// A tool_use content block's call.
ToolCall anthropic_tool_call(const nlohmann::json& block);

}  // namespace kevo::llm
