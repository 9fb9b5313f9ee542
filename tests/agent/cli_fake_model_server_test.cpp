// The loopback model server the agent CLIs are tested against: its script, both wire formats event
// by event, which turn a request gets, and what it logs (secrets redacted, problems named).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>
#include <sstream>

#include "support/fake_model_server.h"
#include "support/fake_model_server_wire.h"
#include "support/temp_dir.h"

using namespace kevo::test;
using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

ModelScript two_turns() {
  auto s = parse_model_script(json::parse(R"({"server": "kevo", "turns": [
      {"tool_calls": [{"tool": "evaluate", "arguments": {"source": "// fake: pass time_ms=1.25\n", "name": "good"}}]},
      {"text": "done"}]})"));
  EXPECT_TRUE(s) << s.error().message;
  return *s;
}

struct Event {
  std::string name;
  json data;
};

std::vector<Event> sse_events(const std::string& body) {
  std::vector<Event> out;
  std::istringstream in(body);
  std::string line, name;
  while (std::getline(in, line)) {
    if (line.rfind("event: ", 0) == 0) name = line.substr(7);
    if (line.rfind("data: ", 0) == 0) out.push_back({name, json::parse(line.substr(6))});
  }
  return out;
}

std::vector<std::string> names(const std::vector<Event>& ev) {
  std::vector<std::string> n;
  for (const auto& e : ev) n.push_back(e.name);
  return n;
}

json anthropic_request(json messages) {
  return {{"model", "kevo-test-model"},
          {"stream", true},
          {"max_tokens", 1000},
          {"tools", json::array({{{"name", "Bash"}}, {{"name", "mcp__kevo__evaluate"}}})},
          {"messages", std::move(messages)}};
}

json first_user_message() { return json::array({{{"role", "user"}, {"content", "optimize"}}}); }

httplib::Result post(httplib::Client& c, const std::string& path, const json& body) {
  return c.Post(path.c_str(), {{"x-api-key", "sk-secret-42"}}, body.dump(), "application/json");
}

}  // namespace

TEST(FakeModelScript, ErrorsNameTheField) {
  auto bad_args = parse_model_script(json::parse(R"({"turns": [{"tool_calls": [{"tool": "x", "arguments": 3}]}]})"));
  ASSERT_FALSE(bad_args);
  EXPECT_EQ(bad_args.error().message, "turns[0].tool_calls[0].arguments: not an object");
  auto text_first = parse_model_script(json::parse(R"({"turns": [{"text": "hi"}, {"text": "again"}]})"));
  ASSERT_FALSE(text_first);
  EXPECT_EQ(text_first.error().message, "turns[0]: a text turn must be the last");
  EXPECT_FALSE(parse_model_script(json::parse(R"({"turns": []})")));
}

TEST(FakeModelScript, ATurnFollowsFromTheResultsARequestCarries) {
  const ModelScript s = two_turns();
  EXPECT_EQ(turn_for(s, "toolu_", {}), 0u);
  EXPECT_EQ(turn_for(s, "toolu_", {"toolu_other"}), 0u);
  EXPECT_EQ(turn_for(s, "toolu_", {tool_call_id("toolu_", 0, 0)}), 1u);
  ModelScript calls_only = s;
  calls_only.turns.pop_back();
  EXPECT_EQ(turn_for(calls_only, "toolu_", {tool_call_id("toolu_", 0, 0)}), std::nullopt);  // past the end
}

TEST(FakeModelServer, AnthropicStreamsAToolUseThenTheFinalText) {
  TempDir t;
  auto server = FakeModelServer::start(two_turns(), t.path / "log.jsonl");
  ASSERT_TRUE(server) << server.error().message;
  httplib::Client c("127.0.0.1", (*server)->port());
  auto r = post(c, "/v1/messages", anthropic_request(first_user_message()));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/event-stream");
  auto ev = sse_events(r->body);
  EXPECT_THAT(names(ev), ElementsAre("message_start", "ping", "content_block_start", "content_block_delta",
                                     "content_block_stop", "message_delta", "message_stop"));
  for (const auto& e : ev) EXPECT_EQ(e.data["type"], e.name);
  EXPECT_EQ(ev[2].data["content_block"]["type"], "tool_use");
  EXPECT_EQ(ev[2].data["content_block"]["name"], "mcp__kevo__evaluate");
  EXPECT_EQ(ev[2].data["content_block"]["input"], json::object());
  EXPECT_EQ(ev[3].data["delta"]["type"], "input_json_delta");
  EXPECT_EQ(json::parse(ev[3].data["delta"]["partial_json"].get<std::string>())["name"], "good");
  EXPECT_EQ(ev[5].data["delta"]["stop_reason"], "tool_use");
  const std::string id = ev[2].data["content_block"]["id"];

  json messages = first_user_message();
  messages.push_back({{"role", "assistant"}, {"content", json::array({ev[2].data["content_block"]})}});
  messages.push_back({{"role", "user"},
                      {"content", json::array({{{"type", "tool_result"}, {"tool_use_id", id}, {"content", "ok"}}})}});
  auto r2 = post(c, "/v1/messages", anthropic_request(messages));
  ASSERT_TRUE(r2);
  auto ev2 = sse_events(r2->body);
  ASSERT_EQ(ev2.size(), 7u);
  EXPECT_EQ(ev2[2].data["content_block"]["type"], "text");
  EXPECT_EQ(ev2[3].data["delta"]["text"], "done");
  EXPECT_EQ(ev2[5].data["delta"]["stop_reason"], "end_turn");
  EXPECT_EQ((*server)->turns_reached(), 2u);
  EXPECT_TRUE((*server)->problems().empty());
}

TEST(FakeModelServer, AnthropicWithoutStreamingAnswersOneMessage) {
  TempDir t;
  auto server = FakeModelServer::start(two_turns(), t.path / "log.jsonl");
  ASSERT_TRUE(server);
  httplib::Client c("127.0.0.1", (*server)->port());
  json req = anthropic_request(first_user_message());
  req["stream"] = false;
  auto r = post(c, "/v1/messages", req);
  ASSERT_TRUE(r);
  auto m = json::parse(r->body);
  EXPECT_EQ(m["type"], "message");
  EXPECT_EQ(m["stop_reason"], "tool_use");
  EXPECT_EQ(m["content"][0]["input"]["name"], "good");
}

TEST(FakeModelServer, OpenAiResponsesCallsAToolInItsNamespace) {
  TempDir t;
  auto server = FakeModelServer::start(two_turns(), t.path / "log.jsonl");
  ASSERT_TRUE(server);
  httplib::Client c("127.0.0.1", (*server)->port());
  json tools = json::array({{{"type", "function"}, {"name", "shell"}},
                            {{"type", "namespace"}, {"name", "mcp__kevo"},
                             {"tools", json::array({{{"type", "function"}, {"name", "evaluate"}}})}}});
  json req = {{"model", "kevo-test-model"}, {"stream", true}, {"tools", tools},
              {"input", json::array({{{"type", "message"}, {"role", "user"}, {"content", "go"}}})}};
  auto r = post(c, "/v1/responses", req);
  ASSERT_TRUE(r);
  auto ev = sse_events(r->body);
  EXPECT_THAT(names(ev), ElementsAre("response.created", "response.output_item.added",
                                     "response.function_call_arguments.delta", "response.function_call_arguments.done",
                                     "response.output_item.done", "response.completed"));
  for (size_t i = 0; i < ev.size(); ++i) EXPECT_EQ(ev[i].data["sequence_number"], i);
  const json item = ev[4].data["item"];
  EXPECT_EQ(item["type"], "function_call");
  EXPECT_EQ(item["name"], "evaluate");
  EXPECT_EQ(item["namespace"], "mcp__kevo");
  EXPECT_EQ(json::parse(item["arguments"].get<std::string>())["name"], "good");
  EXPECT_EQ(ev[5].data["response"]["status"], "completed");
  EXPECT_EQ(ev[5].data["response"]["output"][0], item);

  req["input"].push_back(item);
  req["input"].push_back({{"type", "function_call_output"}, {"call_id", item["call_id"]}, {"output", "ok"}});
  auto r2 = post(c, "/v1/responses", req);
  ASSERT_TRUE(r2);
  auto ev2 = sse_events(r2->body);
  ASSERT_FALSE(ev2.empty());
  EXPECT_EQ(ev2.back().data["response"]["output"][0]["content"][0]["text"], "done");
}

TEST(FakeModelServer, ARetryGetsTheSameTurnAndAMissingToolIsRetryable) {
  TempDir t;
  auto server = FakeModelServer::start(two_turns(), t.path / "log.jsonl");
  ASSERT_TRUE(server);
  httplib::Client c("127.0.0.1", (*server)->port());
  auto a = post(c, "/v1/messages", anthropic_request(first_user_message()));
  auto b = post(c, "/v1/messages", anthropic_request(first_user_message()));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->body, b->body);
  json no_kevo = anthropic_request(first_user_message());
  no_kevo["tools"] = json::array({{{"name", "Bash"}}});
  auto busy = post(c, "/v1/messages", no_kevo);
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->status, 529);
  EXPECT_EQ(json::parse(busy->body)["error"]["type"], "overloaded_error");
  auto log = (*server)->requests();
  ASSERT_EQ(log.size(), 3u);
  EXPECT_THAT(log[1]["note"].get<std::string>(), HasSubstr("answered before"));
  EXPECT_THAT(log[2]["note"].get<std::string>(), HasSubstr("not offered"));
  EXPECT_TRUE((*server)->problems().empty());
}

TEST(FakeModelServer, WhatACliMustNotDoIsAProblemInTheLogWithSecretsRedacted) {
  TempDir t;
  auto server = FakeModelServer::start(two_turns(), t.path / "log.jsonl");
  ASSERT_TRUE(server);
  httplib::Client c("127.0.0.1", (*server)->port());
  auto unknown = c.Get("/api/hello", {{"Authorization", "Bearer sk-secret-42"}});
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  auto not_json = c.Post("/v1/messages", "{", "application/json");
  ASSERT_TRUE(not_json);
  EXPECT_EQ(not_json->status, 400);
  auto proxied = c.Post("/v1/messages", {{"Host", "api.anthropic.com"}}, anthropic_request(first_user_message()).dump(),
                        "application/json");
  ASSERT_TRUE(proxied);
  EXPECT_EQ(proxied->status, 421);
  auto problems = (*server)->problems();
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_THAT(problems[0]["problem"].get<std::string>(), HasSubstr("GET /api/hello"));
  EXPECT_EQ(problems[0]["headers"]["authorization"], "<redacted>");
  EXPECT_THAT(problems[2]["problem"].get<std::string>(), HasSubstr("not loopback"));

  std::ifstream in(t.path / "log.jsonl");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string file = ss.str();
  EXPECT_THAT(file, Not(HasSubstr("sk-secret-42")));
  EXPECT_EQ(std::count(file.begin(), file.end(), '\n'), 3);
}
