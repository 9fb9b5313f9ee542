// Tool calling in both wire protocols, as pure functions (no network): the request bodies a tool
// conversation becomes, in each provider's documented shape, and the calls read back from answers,
// several per turn, malformed ones marked; the answer cache keeps them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "llm/model_spec.h"
#include "llm/protocol.h"

namespace kevo::llm {
namespace {

using nlohmann::json;

ResolvedRequest conversation() {
  ResolvedRequest r;
  r.system = "you write kernels";
  r.tools = {{"evaluate", "check and time a kernel",
              R"({"type":"object","properties":{"source":{"type":"string"}},"required":["source"]})"}};
  Message ask{Role::kUser, "make softmax faster", {}, {}};
  Message calls{Role::kAssistant, "", {{"call_1", "evaluate", R"({"source":"k1"})", true},
                                       {"call_2", "evaluate", R"({"source":"k2"})", true}}, {}};
  Message results{Role::kUser, "", {}, {{"call_1", "pass 1.2x", false}, {"call_2", "argument 'source' missing", true}}};
  r.messages = {ask, calls, results};
  return r;
}

ModelSpec spec(const char* text) {
  auto s = parse_model_spec(text, default_config());
  EXPECT_TRUE(s) << (s ? "" : s.error().message);
  return *s;
}

TEST(ToolCalls, OpenAiRequestCarriesToolsCallsAndResultsAsTheApiDocumentsThem) {
  auto w = openai_request(spec("openai:gpt-4.1"), conversation());
  ASSERT_TRUE(w);
  const json& b = w->body;
  ASSERT_EQ(b["tools"].size(), 1u);
  EXPECT_EQ(b["tools"][0]["type"], "function");
  EXPECT_EQ(b["tools"][0]["function"]["name"], "evaluate");
  EXPECT_EQ(b["tools"][0]["function"]["parameters"]["required"][0], "source");
  const json& m = b["messages"];
  ASSERT_EQ(m.size(), 5u) << m.dump();  // system, user, assistant with two calls, two tool results
  EXPECT_EQ(m[2]["role"], "assistant");
  EXPECT_TRUE(m[2]["content"].is_null());
  EXPECT_EQ(m[2]["tool_calls"][1]["function"]["arguments"], R"({"source":"k2"})");
  EXPECT_EQ(m[2]["tool_calls"][0]["type"], "function");
  EXPECT_EQ(m[3]["role"], "tool");
  EXPECT_EQ(m[3]["tool_call_id"], "call_1");
  EXPECT_EQ(m[4]["content"], "error: argument 'source' missing");
}

TEST(ToolCalls, AnthropicRequestCarriesToolUseAndToolResultBlocks) {
  auto w = anthropic_request(spec("anthropic:claude-sonnet-4-5"), conversation());
  ASSERT_TRUE(w);
  const json& b = w->body;
  EXPECT_EQ(b["tools"][0]["name"], "evaluate");
  EXPECT_EQ(b["tools"][0]["input_schema"]["type"], "object");
  const json& m = b["messages"];
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[1]["content"][0]["type"], "tool_use");
  EXPECT_EQ(m[1]["content"][1]["input"]["source"], "k2");
  EXPECT_EQ(m[2]["role"], "user");
  EXPECT_EQ(m[2]["content"][0]["type"], "tool_result");
  EXPECT_EQ(m[2]["content"][0]["tool_use_id"], "call_1");
  EXPECT_EQ(m[2]["content"][1]["is_error"], true);
  EXPECT_EQ(m[0]["content"], "make softmax faster") << "a plain turn stays a string";
}

TEST(ToolCalls, OpenAiAnswersWithSeveralCallsOneMalformed) {
  const char* body = R"({"id":"x","choices":[{"finish_reason":"tool_calls","message":{"role":"assistant","content":null,
    "tool_calls":[{"id":"c1","type":"function","function":{"name":"evaluate","arguments":"{\"source\":\"k\"}"}},
                  {"id":"c2","type":"function","function":{"name":"history","arguments":"{not json"}}]}}],
    "usage":{"prompt_tokens":10,"completion_tokens":5}})";
  auto r = openai_parse(body);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->finish, FinishReason::kToolUse);
  ASSERT_EQ(r->tool_calls.size(), 2u);
  EXPECT_EQ(r->tool_calls[0].name, "evaluate");
  EXPECT_TRUE(r->tool_calls[0].arguments_valid);
  EXPECT_FALSE(r->tool_calls[1].arguments_valid) << "the caller answers it with a tool error";
  EXPECT_EQ(r->text, "");
}

TEST(ToolCalls, AnthropicAnswersWithTextAndACall) {
  const char* body = R"({"id":"msg_1","type":"message","stop_reason":"tool_use","content":[
    {"type":"text","text":"Let me check."},{"type":"tool_use","id":"toolu_1","name":"evaluate","input":{"source":"k"}}],
    "usage":{"input_tokens":10,"output_tokens":5}})";
  auto r = anthropic_parse(body);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->finish, FinishReason::kToolUse);
  EXPECT_EQ(r->text, "Let me check.");
  ASSERT_EQ(r->tool_calls.size(), 1u);
  EXPECT_EQ(r->tool_calls[0].id, "toolu_1");
  EXPECT_EQ(json::parse(r->tool_calls[0].arguments)["source"], "k");
  const char* only_call = R"({"type":"message","stop_reason":"tool_use","content":[
    {"type":"tool_use","id":"t","name":"history","input":{}}]})";
  EXPECT_TRUE(anthropic_parse(only_call)) << "a turn of calls alone is an answer";
}

TEST(ToolCalls, TheAnswerCacheKeepsTheCalls) {
  ChatResponse r;
  r.tool_calls = {{"c1", "evaluate", R"({"source":"k"})", true}, {"c2", "x", "{oops", false}};
  ChatResponse back;
  ASSERT_TRUE(response_from_json(response_to_json(r), back));
  ASSERT_EQ(back.tool_calls.size(), 2u);
  EXPECT_EQ(back.tool_calls[0].arguments, R"({"source":"k"})");
  EXPECT_FALSE(back.tool_calls[1].arguments_valid);
  ChatResponse plain;
  ASSERT_TRUE(response_from_json(response_to_json(ChatResponse{}), plain)) << "older rows without calls";
  EXPECT_TRUE(plain.tool_calls.empty());
}

}  // namespace
}  // namespace kevo::llm
