// Anthropic's Messages API (POST {base}/messages, anthropic-version 2023-06-01).
#include "llm/errors.h"
#include "llm/protocol.h"
#include "llm/tool_wire.h"

namespace kevo::llm {

using nlohmann::json;

Result<WireRequest> anthropic_request(const ModelSpec& spec, const ResolvedRequest& r) {
  json messages = json::array();
  for (const auto& m : r.messages) messages.push_back(anthropic_message(m));
  json body = {{"model", spec.model}, {"messages", messages}, {"max_tokens", r.max_tokens}};
  if (!r.tools.empty()) body["tools"] = anthropic_tools(r.tools);
  if (!r.system.empty()) body["system"] = r.system;
  std::optional<int> budget = r.thinking_budget;
  if (!budget && r.reasoning_effort) {
    // No effort knob in this protocol: map the OpenAI-style words onto a thinking budget.
    const std::string& e = *r.reasoning_effort;
    if (e == "low") budget = 2048;
    else if (e == "medium") budget = 8192;
    else if (e == "high") budget = 24576;
  }
  if (budget && *budget > 0) {
    // The API's own rules, checked here so the user gets the fix instead of a 400.
    if (*budget < 1024)
      return make_error(ErrorKind::kFatal,
                        fmt::format("{}: thinking_budget {} is below Anthropic's minimum of 1024 "
                                    "tokens",
                                    spec.text, *budget));
    if (*budget >= r.max_tokens)
      return make_error(ErrorKind::kFatal,
                        fmt::format("{}: thinking_budget ({}) must be less than max_tokens ({}); "
                                    "raise max_tokens or lower the budget",
                                    spec.text, *budget, r.max_tokens));
    body["thinking"] = {{"type", "enabled"}, {"budget_tokens", *budget}};
    // Extended thinking is incompatible with a modified temperature; the API rejects it.
  } else if (r.temperature) {
    body["temperature"] = *r.temperature;
  }
  return WireRequest{spec.provider.base_url + "/messages", std::move(body)};
}

std::vector<std::string> anthropic_headers(const ModelSpec&, const std::string& key) {
  std::vector<std::string> h{"Content-Type: application/json", "Accept: application/json",
                             "anthropic-version: 2023-06-01"};
  if (!key.empty()) h.push_back("x-api-key: " + key);
  return h;
}

Result<ChatResponse> anthropic_parse(const std::string& body) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return fail("the answer is not valid JSON ({} bytes{})", body.size(),
                body.empty() ? "" : ", possibly truncated");
  if (json_str(j, "type") == "error")
    return fail("the answer carries an error: {}", parse_error_body(body).message);
  auto content = j.find("content");
  if (content == j.end() || !content->is_array())
    return fail("the answer has no content list");
  ChatResponse r;
  for (const auto& block : *content) {
    if (!block.is_object()) continue;
    const std::string type = json_str(block, "type");
    if (type == "text") r.text += json_str(block, "text");
    else if (type == "thinking") r.thinking += json_str(block, "thinking");
    else if (type == "tool_use") r.tool_calls.push_back(anthropic_tool_call(block));
  }
  if (auto it = j.find("stop_reason"); it != j.end() && it->is_string())
    r.raw_finish = it->get<std::string>();
  const std::string& f = r.raw_finish;
  r.finish = f == "end_turn" || f == "stop_sequence" || f.empty() ? FinishReason::kStop
             : f == "max_tokens" || f == "model_context_window_exceeded" ? FinishReason::kLength
             : f == "refusal"  ? FinishReason::kRefusal
             : f == "tool_use" ? FinishReason::kToolUse
                               : FinishReason::kOther;
  if (r.text.empty() && r.finish == FinishReason::kStop && r.thinking.empty() && r.tool_calls.empty())
    return fail("the answer has no text");
  if (auto u = j.find("usage"); u != j.end() && u->is_object()) {
    // input_tokens excludes cache reads and writes; kevo's input_tokens counts them all.
    const int64_t read = json_int(*u, "cache_read_input_tokens");
    const int64_t write = json_int(*u, "cache_creation_input_tokens");
    r.usage.input_tokens = json_int(*u, "input_tokens") + read + write;
    r.usage.cached_input_tokens = read;
    r.usage.output_tokens = json_int(*u, "output_tokens");
  }
  if (auto it = j.find("id"); it != j.end() && it->is_string()) r.request_id = it->get<std::string>();
  return r;
}

}  // namespace kevo::llm
