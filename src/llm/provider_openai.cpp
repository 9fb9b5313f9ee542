// The OpenAI chat-completions protocol (POST {base}/chat/completions), spoken by OpenAI,
// DeepSeek, OpenRouter, vLLM, SGLang, llama.cpp server and ollama.
#include "llm/errors.h"
#include "llm/protocol.h"
#include "llm/tool_wire.h"

namespace kevo::llm {

using nlohmann::json;

int64_t json_int(const json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_number() ? it->get<int64_t>() : 0;
}

std::string json_str(const json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

ErrorBody parse_error_body(const std::string& body) {
  ErrorBody e;
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    e.message = body.substr(0, 300);
    return e;
  }
  const json* err = &j;
  if (auto it = j.find("error"); it != j.end()) {
    if (it->is_string()) {  // some compatible servers send {"error": "text"}
      e.message = it->get<std::string>();
      return e;
    }
    if (it->is_object()) err = &*it;
  }
  auto str = [](const json& o, const char* k) -> std::string {
    auto it = o.find(k);
    if (it == o.end() || it->is_null()) return {};
    return it->is_string() ? it->get<std::string>() : it->dump();
  };
  e.type = str(*err, "type");
  e.code = str(*err, "code");
  e.message = str(*err, "message");
  if (e.message.empty()) e.message = str(j, "detail");  // FastAPI-style servers (vLLM)
  if (e.message.empty()) e.message = body.substr(0, 300);
  // Anthropic: the spend cap arrives as {"error": {"details": {"error_code": ...}}}.
  if (auto d = err->find("details"); d != err->end() && d->is_object() && e.code.empty())
    e.code = str(*d, "error_code");
  return e;
}

Result<WireRequest> openai_request(const ModelSpec& spec, const ResolvedRequest& r) {
  json messages = json::array();
  if (!r.system.empty()) messages.push_back({{"role", "system"}, {"content", r.system}});
  for (const auto& m : r.messages) openai_append_message(messages, m);
  json body = {{"model", spec.model}, {"messages", messages}};
  if (!r.tools.empty()) body["tools"] = openai_tools(r.tools);
  body[spec.provider.max_tokens_field] = r.max_tokens;
  if (r.temperature) body["temperature"] = *r.temperature;
  if (spec.provider.name == "openrouter") {
    // OpenRouter normalizes reasoning controls under one object.
    if (r.reasoning_effort) body["reasoning"] = {{"effort", *r.reasoning_effort}};
    else if (r.thinking_budget) body["reasoning"] = {{"max_tokens", *r.thinking_budget}};
  } else if (r.reasoning_effort) {
    body["reasoning_effort"] = *r.reasoning_effort;
  }
  return WireRequest{spec.provider.base_url + "/chat/completions", std::move(body)};
}

std::vector<std::string> openai_headers(const ModelSpec& spec, const std::string& key) {
  std::vector<std::string> h{"Content-Type: application/json", "Accept: application/json"};
  if (!key.empty()) h.push_back("Authorization: Bearer " + key);
  if (spec.provider.name == "openrouter") h.push_back("X-Title: kevo");
  return h;
}

Result<ChatResponse> openai_parse(const std::string& body) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return fail("the answer is not valid JSON ({} bytes{})", body.size(),
                body.empty() ? "" : ", possibly truncated");
  // OpenRouter can report an upstream failure inside a 200 answer.
  if (auto e = j.find("error"); e != j.end() && !j.contains("choices"))
    return fail("the answer carries an error: {}", parse_error_body(body).message);
  auto choices = j.find("choices");
  if (choices == j.end() || !choices->is_array() || choices->empty())
    return fail("the answer has no choices");
  const json& c = (*choices)[0];
  auto msg = c.find("message");
  if (msg == c.end() || !msg->is_object()) return fail("the answer's first choice has no message");
  ChatResponse r;
  if (auto it = msg->find("content"); it != msg->end() && it->is_string()) r.text = it->get<std::string>();
  r.tool_calls = openai_tool_calls(*msg);
  // DeepSeek and vLLM reasoning parsers return "reasoning_content"; OpenRouter "reasoning".
  for (const char* k : {"reasoning_content", "reasoning"})
    if (auto it = msg->find(k); it != msg->end() && it->is_string() && r.thinking.empty())
      r.thinking = it->get<std::string>();
  if (auto it = c.find("finish_reason"); it != c.end() && it->is_string())
    r.raw_finish = it->get<std::string>();
  const std::string& f = r.raw_finish;
  r.finish = f == "stop" || f.empty() ? FinishReason::kStop
             : f == "length"          ? FinishReason::kLength
             : f == "content_filter"  ? FinishReason::kContentFilter
             : f == "tool_calls" || f == "function_call" ? FinishReason::kToolUse
                                                         : FinishReason::kOther;
  // A refusal comes as message.refusal (structured outputs and safety), with content null.
  if (auto it = msg->find("refusal"); it != msg->end() && it->is_string() && !it->get<std::string>().empty()) {
    r.finish = FinishReason::kRefusal;
    r.text = it->get<std::string>();
  }
  if (auto u = j.find("usage"); u != j.end() && u->is_object()) {
    r.usage.input_tokens = json_int(*u, "prompt_tokens");
    r.usage.output_tokens = json_int(*u, "completion_tokens");
    if (auto d = u->find("completion_tokens_details"); d != u->end() && d->is_object())
      r.usage.reasoning_tokens = json_int(*d, "reasoning_tokens");
    if (auto d = u->find("prompt_tokens_details"); d != u->end() && d->is_object())
      r.usage.cached_input_tokens = json_int(*d, "cached_tokens");
    // DeepSeek reports its context cache separately.
    if (r.usage.cached_input_tokens == 0)
      r.usage.cached_input_tokens = json_int(*u, "prompt_cache_hit_tokens");
  }
  if (auto it = j.find("id"); it != j.end() && it->is_string()) r.request_id = it->get<std::string>();
  return r;
}

}  // namespace kevo::llm
