#include "llm/types.h"

#include <nlohmann/json.hpp>

#include "util/enum_text.h"

namespace kevo::llm {

using nlohmann::json;

ChatRequest ChatRequest::user(std::string text, std::string system) {
  ChatRequest r;
  r.system = std::move(system);
  r.messages.push_back({Role::kUser, std::move(text)});
  return r;
}

namespace {

constexpr EnumText<FinishReason> kFinishReasonTexts[] = {
    {FinishReason::kStop, "stop"},
    {FinishReason::kLength, "length"},
    {FinishReason::kRefusal, "refusal"},
    {FinishReason::kContentFilter, "content_filter"},
    {FinishReason::kToolUse, "tool_use"},
    {FinishReason::kOther, "other"},
};

}  // namespace

const char* to_string(FinishReason f) { return enum_text(kFinishReasonTexts, f, "other"); }

std::string response_to_json(const ChatResponse& r) {
  json j = {{"model", r.model},
            {"text", r.text},
            {"thinking", r.thinking},
            {"finish", static_cast<int>(r.finish)},
            {"raw_finish", r.raw_finish},
            {"usage",
             {{"input", r.usage.input_tokens},
              {"output", r.usage.output_tokens},
              {"reasoning", r.usage.reasoning_tokens},
              {"cached_input", r.usage.cached_input_tokens}}},
            {"usage_estimated", r.usage_estimated},
            {"latency_s", r.latency_s},
            {"request_id", r.request_id}};
  if (!r.tool_calls.empty()) {
    json calls = json::array();
    for (const auto& c : r.tool_calls)
      calls.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}, {"valid", c.arguments_valid}});
    j["tool_calls"] = calls;
  }
  return j.dump();
}

bool response_from_json(const std::string& text, ChatResponse& out) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return false;
  try {
    out.model = j.at("model").get<std::string>();
    out.text = j.at("text").get<std::string>();
    out.thinking = j.at("thinking").get<std::string>();
    out.finish = static_cast<FinishReason>(j.at("finish").get<int>());
    out.raw_finish = j.at("raw_finish").get<std::string>();
    const json& u = j.at("usage");
    out.usage.input_tokens = u.at("input").get<int64_t>();
    out.usage.output_tokens = u.at("output").get<int64_t>();
    out.usage.reasoning_tokens = u.at("reasoning").get<int64_t>();
    out.usage.cached_input_tokens = u.at("cached_input").get<int64_t>();
    out.usage_estimated = j.value("usage_estimated", false);
    out.latency_s = j.at("latency_s").get<double>();
    out.request_id = j.at("request_id").get<std::string>();
    for (const auto& c : j.value("tool_calls", json::array()))
      out.tool_calls.push_back({c.at("id").get<std::string>(), c.at("name").get<std::string>(),
                                c.at("arguments").get<std::string>(), c.value("valid", true)});
  } catch (const json::exception&) {
    return false;  // a row from an incompatible version: treated as a miss
  }
  return true;
}

}  // namespace kevo::llm
