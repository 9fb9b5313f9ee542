// Internal: the two wire protocols, as pure functions from a resolved request to a body and
// from a response body to a ChatResponse, so they are testable without a network.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "llm/model_spec.h"
#include "llm/types.h"
#include "util/result.h"

namespace kevo::llm {

// Lenient field readers: a missing, null or mistyped field reads as 0 or "" instead of throwing.
int64_t json_int(const nlohmann::json& o, const char* key);
std::string json_str(const nlohmann::json& o, const char* key);

// A request after the config's defaults were applied.
struct ResolvedRequest {
  std::string system;
  std::vector<Message> messages;
  std::optional<double> temperature;
  int max_tokens = 16384;
  std::optional<std::string> reasoning_effort;
  std::optional<int> thinking_budget;
  std::vector<ToolDef> tools;
};

// A tool call's JSON text as an object, or null when it is not one (a malformed call).
nlohmann::json tool_arguments(const std::string& text);
// A tool's schema text as JSON; an object with no properties when it does not parse.
nlohmann::json tool_schema(const std::string& text);

struct WireRequest {
  std::string url;
  nlohmann::json body;
};

// The error object both protocols put in a non-2xx body: {"error": {"type", "code", "message"}}.
struct ErrorBody {
  std::string type;     // "rate_limit_error", "invalid_request_error", ...
  std::string code;     // OpenAI's finer code: "insufficient_quota", "model_not_found", ...
  std::string message;  // the server's explanation
};
ErrorBody parse_error_body(const std::string& body);

Result<WireRequest> openai_request(const ModelSpec& spec, const ResolvedRequest& r);
std::vector<std::string> openai_headers(const ModelSpec& spec, const std::string& key);
// Errors are malformed or unusable answers (retryable): invalid JSON, no choices, no message.
Result<ChatResponse> openai_parse(const std::string& body);

Result<WireRequest> anthropic_request(const ModelSpec& spec, const ResolvedRequest& r);
std::vector<std::string> anthropic_headers(const ModelSpec& spec, const std::string& key);
Result<ChatResponse> anthropic_parse(const std::string& body);

}  // namespace kevo::llm
