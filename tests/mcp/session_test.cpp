// The MCP session over a stub provider: the lifecycle, the methods, and every malformed message
// answered with the error code the specification gives, counted, and never reaching the provider.
#include "mcp/session.h"

#include <gtest/gtest.h>

#include "mcp/stub_provider.h"

using namespace kevo::mcp;
using namespace kevo::mcp::testing;
using nlohmann::json;

namespace {

struct SessionTest : ::testing::Test {
  StubState state;
  Session s{{"kevo", "test", "how to use it"}, std::make_unique<StubProvider>(state)};
  json ask(const json& m) {
    auto r = s.handle(m);
    EXPECT_TRUE(r.has_value()) << m.dump();
    return r.value_or(json());
  }
  int error_code(const json& reply) { return reply.contains("error") ? reply["error"]["code"].get<int>() : 0; }
  void init() { ask(initialize_msg()); }
};

TEST_F(SessionTest, InitializeNegotiatesTheVersionAndNamesTheClient) {
  json r = ask(initialize_msg(7, "2025-06-18"));
  EXPECT_EQ(r["id"], 7);
  EXPECT_EQ(r["result"]["protocolVersion"], "2025-06-18");
  EXPECT_EQ(r["result"]["serverInfo"]["name"], "kevo");
  EXPECT_EQ(r["result"]["instructions"], "how to use it");
  EXPECT_TRUE(r["result"]["capabilities"].contains("tools"));
  EXPECT_EQ(state.client.name, "stub-client");
  Session other{{"kevo", "test", ""}, std::make_unique<StubProvider>(state)};
  auto r2 = other.handle(initialize_msg(1, "1999-01-01"));
  EXPECT_EQ((*r2)["result"]["protocolVersion"], kLatestProtocol) << "an unknown version gets the newest";
}

TEST_F(SessionTest, RequestsBeforeInitializeAreRefusedButPingIsAnswered) {
  EXPECT_EQ(error_code(ask({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/list"}})), -32002);
  EXPECT_TRUE(ask({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "ping"}}).contains("result"));
  EXPECT_EQ(state.calls, 0);
}

TEST_F(SessionTest, ToolsAreListedAndCalledWithTextAndStructuredResults) {
  init();
  json list = ask({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}});
  ASSERT_EQ(list["result"]["tools"].size(), 1u);
  EXPECT_EQ(list["result"]["tools"][0]["name"], "echo");
  EXPECT_EQ(list["result"]["tools"][0]["inputSchema"]["type"], "object");
  json r = ask(call_msg(3, "echo", {{"text", "hi"}}));
  EXPECT_EQ(r["result"]["content"][0]["text"], "hi");
  EXPECT_EQ(r["result"]["structuredContent"]["echo"], "hi");
  EXPECT_FALSE(r["result"]["isError"].get<bool>());
  EXPECT_EQ(state.calls, 1);
}

TEST_F(SessionTest, WrongArgumentsAreAToolErrorTheModelCanRead) {
  init();
  for (const json& args : {json{{"text", 5}}, json::object(), json{{"text", "a"}, {"extra", 1}},
                           json{{"text", "a"}, {"delay_ms", -1}}, json("not an object")}) {
    json r = ask(call_msg(4, "echo", args));
    ASSERT_TRUE(r.contains("result")) << args.dump();
    EXPECT_TRUE(r["result"]["isError"].get<bool>()) << args.dump();
  }
  json r = ask(call_msg(5, "echo", {{"text", 5}}));
  EXPECT_NE(r["result"]["content"][0]["text"].get<std::string>().find("argument 'text' must be a string, not integer"),
            std::string::npos)
      << r.dump();
  EXPECT_EQ(state.calls, 0) << "a call with wrong arguments never reaches the provider";
  EXPECT_EQ(s.refused(), 6);
}

TEST_F(SessionTest, MalformedMessagesGetTheirJsonRpcErrors) {
  init();
  EXPECT_EQ(error_code(*s.handle_text("{not json")), -32700);
  EXPECT_EQ(error_code(ask({{"id", 1}, {"method", "ping"}})), -32600) << "no jsonrpc member";
  EXPECT_EQ(error_code(ask({{"jsonrpc", 2}, {"id", 1}, {"method", "ping"}})), -32600) << "jsonrpc of the wrong type";
  EXPECT_EQ(error_code(ask({{"jsonrpc", "2.0"}, {"id", 1}})), -32600);
  EXPECT_EQ(error_code(ask({{"jsonrpc", "2.0"}, {"id", 1}, {"method", 3}})), -32600);
  EXPECT_EQ(error_code(ask({{"jsonrpc", "2.0"}, {"id", {{"a", 1}}}, {"method", "ping"}})), -32600);
  EXPECT_EQ(error_code(ask({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}, {"params", 3}})), -32602);
  EXPECT_EQ(error_code(ask({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "prompts/list"}})), -32601);
  EXPECT_EQ(error_code(ask(call_msg(1, "no_such_tool", json::object()))), -32602);
  EXPECT_EQ(error_code(ask({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/call"}, {"params", {{"name", 1}}}})), -32602);
  EXPECT_EQ(error_code(ask({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "resources/read"}, {"params", {{"uri", "x://"}}}})), -32602);
  EXPECT_EQ(error_code(ask(json::array())), -32600);
  EXPECT_EQ(error_code(ask(json(42))), -32600);
  EXPECT_EQ(state.calls, 0);
  EXPECT_EQ(s.refused(), 13);
}

TEST_F(SessionTest, NotificationsAndResponsesAreNotAnswered) {
  init();
  EXPECT_FALSE(s.handle({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}));
  EXPECT_TRUE(s.initialized());
  EXPECT_FALSE(s.handle({{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", 3}}}}));
  EXPECT_FALSE(s.handle({{"jsonrpc", "2.0"}, {"id", 9}, {"result", json::object()}}));
}

TEST_F(SessionTest, ABatchIsAnsweredAsABatch) {
  init();
  json batch = json::array({call_msg(1, "echo", {{"text", "a"}}), {{"jsonrpc", "2.0"}, {"method", "notifications/x"}},
                            {{"jsonrpc", "2.0"}, {"id", 2}, {"method", "ping"}}});
  json r = ask(batch);
  ASSERT_TRUE(r.is_array());
  EXPECT_EQ(r.size(), 2u);
}

TEST_F(SessionTest, ResourcesAreListedAndRead) {
  init();
  json l = ask({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "resources/list"}});
  EXPECT_EQ(l["result"]["resources"][0]["uri"], "stub://a");
  json r = ask({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "resources/read"}, {"params", {{"uri", "stub://a"}}}});
  EXPECT_EQ(r["result"]["contents"][0]["text"], "contents of a");
}

TEST_F(SessionTest, CloseTellsTheProviderOnceWithTheCountOfRefusals) {
  init();
  (void)s.handle_text("garbage");
  s.close(CloseReason::kClientGone);
  s.close(CloseReason::kShutdown);
  EXPECT_EQ(state.closes, 1);
  EXPECT_EQ(state.why, CloseReason::kClientGone);
  EXPECT_EQ(state.protocol_errors, 1);
}

TEST_F(SessionTest, TextThatIsNotUtf8IsRepliedWithoutThrowing) {
  init();
  json r = ask(call_msg(1, "echo", {{"text", std::string("bad \xff\xfe bytes")}}));
  EXPECT_NO_THROW((void)dump_message(r));
}

}  // namespace
