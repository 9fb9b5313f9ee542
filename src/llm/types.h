// The provider-neutral request and response the evolution engine exchanges with any model.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kevo::llm {

enum class Role { kUser, kAssistant };

// A tool a model may call (both providers take these): its name, what it does, and the JSON Schema
// of its arguments object, as JSON text.
struct ToolDef {
  std::string name, description, parameters_json = R"({"type":"object","properties":{}})";
};

// A call the model made. `arguments` is the JSON text it sent; `arguments_valid` is false when that
// is not a JSON object (the caller answers with a tool error the model sees).
struct ToolCall {
  std::string id, name, arguments = "{}";
  bool arguments_valid = true;
};

// The answer to one call, sent back in the next user turn.
struct ToolResultBlock {
  std::string call_id, content;
  bool is_error = false;
};

// One turn. An assistant turn may carry the calls it made (with or without text); a user turn may
// carry the results of the previous turn's calls (with or without text).
struct Message {
  Role role = Role::kUser;
  std::string content;
  std::vector<ToolCall> tool_calls;
  std::vector<ToolResultBlock> tool_results;
};

// Unset optionals fall back to the configured defaults for the model (see config.h), and then to
// the provider's own defaults, so a request only states what it means to change.
struct ChatRequest {
  std::string system;
  std::vector<Message> messages;
  std::optional<double> temperature;
  std::optional<int> max_tokens;
  std::optional<std::string> reasoning_effort;  // OpenAI-style: "minimal", "low", "medium", "high"
  std::optional<int> thinking_budget;           // Anthropic extended thinking, in tokens
  std::vector<ToolDef> tools;                   // none: a plain answer
  // Part of the cache key: lets a caller ask the same prompt again and get a fresh sample.
  std::string cache_tag;

  static ChatRequest user(std::string text, std::string system = {});
};

enum class FinishReason { kStop, kLength, kRefusal, kContentFilter, kToolUse, kOther };
const char* to_string(FinishReason f);

struct Usage {
  int64_t input_tokens = 0;   // all prompt tokens, cached ones included
  int64_t output_tokens = 0;  // all completion tokens, reasoning included
  int64_t reasoning_tokens = 0;
  int64_t cached_input_tokens = 0;  // the part of input_tokens read from a provider-side cache
  int64_t total() const { return input_tokens + output_tokens; }
};

struct ChatResponse {
  std::string model;  // the spec it came from, e.g. "anthropic:claude-sonnet-4-5"
  std::string text;   // the answer's visible text
  std::string thinking;  // reasoning text when the provider returns it
  std::vector<ToolCall> tool_calls;  // several where the provider allows (finish kToolUse)
  FinishReason finish = FinishReason::kStop;
  std::string raw_finish;  // the provider's own word for it ("end_turn", "length", ...)
  Usage usage;
  // The server reported no usage (or zero tokens for an answer): `usage` is kevo's estimate
  // (client.cpp: estimate_usage), counted against the budgets like reported tokens.
  bool usage_estimated = false;
  double cost_usd = 0;     // 0 for cache hits: they cost nothing now
  bool cost_known = true;  // false when the model has no price in the table
  double latency_s = 0;
  int attempts = 0;
  bool from_cache = false;
  std::string request_id;  // the provider's id, for support tickets
};

}  // namespace kevo::llm

namespace kevo::llm {
// The cache's stored form of an answer.
std::string response_to_json(const ChatResponse& r);
bool response_from_json(const std::string& text, ChatResponse& out);
}  // namespace kevo::llm
