// The Streamable HTTP transport with cpp-httplib's client: sessions by header, the status codes
// the specification gives, the token and the Host/Origin rules, and sessions that end.
#include "mcp/http.h"

#include <httplib.h>

#include <gtest/gtest.h>

#include <thread>

#include "mcp/stub_provider.h"

using namespace kevo::mcp;
using namespace kevo::mcp::testing;
using nlohmann::json;

namespace {

struct HttpFixture {
  StubState state;
  std::unique_ptr<HttpServer> server;
  std::thread thread;
  explicit HttpFixture(HttpOptions o = {}) {
    auto s = HttpServer::open(o, {"kevo", "test", ""}, [this]() -> kevo::Result<std::unique_ptr<ToolProvider>> {
      return std::unique_ptr<ToolProvider>(std::make_unique<StubProvider>(state));
    });
    if (!s) throw std::runtime_error(s.error().message);
    server = std::move(*s);
    thread = std::thread([this] { server->run(); });
  }
  ~HttpFixture() {
    server->stop();
    thread.join();
  }
  httplib::Client client() const { return httplib::Client("127.0.0.1", server->port()); }
  httplib::Result post(const json& body, httplib::Headers h = {}) {
    auto c = client();
    h.emplace("Accept", "application/json, text/event-stream");
    return c.Post("/mcp", h, body.dump(), "application/json");
  }
  std::string open_session() {
    auto r = post(initialize_msg(1));
    if (!r || r->status != 200) return "";
    return r->get_header_value("Mcp-Session-Id");
  }
};

TEST(McpHttp, InitializeOpensASessionThatLaterRequestsName) {
  HttpFixture f;
  auto r = f.post(initialize_msg(1));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  const std::string id = r->get_header_value("Mcp-Session-Id");
  ASSERT_EQ(id.size(), 32u);
  EXPECT_EQ(json::parse(r->body)["result"]["serverInfo"]["name"], "kevo");
  auto n = f.post({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}, {{"Mcp-Session-Id", id}});
  EXPECT_EQ(n->status, 202);
  auto c = f.post(call_msg(2, "echo", {{"text", "over http"}}), {{"Mcp-Session-Id", id}, {"MCP-Protocol-Version", "2025-11-25"}});
  ASSERT_EQ(c->status, 200);
  EXPECT_EQ(json::parse(c->body)["result"]["content"][0]["text"], "over http");
  EXPECT_EQ(f.server->sessions(), 1);
}

TEST(McpHttp, RequestsWithoutAKnownSessionAreRefused) {
  HttpFixture f;
  EXPECT_EQ(f.post(call_msg(2, "echo", {{"text", "x"}}))->status, 400);
  EXPECT_EQ(f.post(call_msg(2, "echo", {{"text", "x"}}), {{"Mcp-Session-Id", "nope"}})->status, 404);
  auto c = f.client();
  EXPECT_EQ(c.Post("/mcp", "{oops", "application/json")->status, 400);
  EXPECT_EQ(c.Get("/mcp")->status, 405);
  std::string id = f.open_session();
  EXPECT_EQ(f.post(call_msg(3, "echo", {{"text", "x"}}), {{"Mcp-Session-Id", id}, {"MCP-Protocol-Version", "1999-01-01"}})->status, 400);
  EXPECT_EQ(f.state.calls, 0);
}

TEST(McpHttp, DeleteEndsTheSessionAndTheProviderIsClosed) {
  HttpFixture f;
  std::string id = f.open_session();
  auto c = f.client();
  auto d = c.Delete("/mcp", httplib::Headers{{"Mcp-Session-Id", id}});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->status, 200);
  EXPECT_EQ(f.state.closes, 1);
  EXPECT_EQ(f.state.why, CloseReason::kClientGone);
  EXPECT_EQ(f.post(call_msg(2, "echo", {{"text", "x"}}), {{"Mcp-Session-Id", id}})->status, 404);
}

TEST(McpHttp, ACallInFlightIsFinishedBeforeItsSessionCloses) {
  HttpFixture f;
  std::string id = f.open_session();
  std::thread slow([&] { (void)f.post(call_msg(2, "echo", {{"text", "x"}, {"delay_ms", 400}}), {{"Mcp-Session-Id", id}}); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto c = f.client();
  (void)c.Delete("/mcp", httplib::Headers{{"Mcp-Session-Id", id}});
  slow.join();
  EXPECT_EQ(f.state.closes, 1);
  EXPECT_EQ(f.state.calls, 1);
}

TEST(McpHttp, ForeignHostsAndOriginsAreRefusedWithoutAToken) {
  HttpFixture f;
  EXPECT_EQ(f.post(initialize_msg(1), {{"Origin", "https://evil.example"}})->status, 403);
  EXPECT_EQ(f.post(initialize_msg(1), {{"Origin", "http://localhost:3000"}})->status, 200);
  auto c = f.client();
  httplib::Headers h{{"Host", "evil.example"}};
  EXPECT_EQ(c.Post("/mcp", h, initialize_msg(1).dump(), "application/json")->status, 403);
}

TEST(McpHttp, ATokenIsRequiredOnEveryRequestWhenSet) {
  HttpFixture f({{"127.0.0.1", 0}, "s3cret-token"});
  EXPECT_EQ(f.post(initialize_msg(1))->status, 401);
  EXPECT_EQ(f.post(initialize_msg(1), {{"Authorization", "Bearer wrong-token"}})->status, 401);
  auto r = f.post(initialize_msg(1), {{"Authorization", "Bearer s3cret-token"}});
  EXPECT_EQ(r->status, 200);
  EXPECT_FALSE(HttpServer::open({{"0.0.0.0", 0}, ""}, {}, {})) << "beyond loopback without a token";
}

TEST(McpHttp, SessionsBeyondTheLimitAndIdleOnesAreRefusedAndEnded) {
  HttpFixture f({{"127.0.0.1", 0}, "", 64u << 20, 2, 0.5});
  EXPECT_FALSE(f.open_session().empty());
  EXPECT_FALSE(f.open_session().empty());
  EXPECT_EQ(f.post(initialize_msg(1))->status, 503);
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  EXPECT_EQ(f.server->sessions(), 0) << "idle sessions end";
  EXPECT_EQ(f.state.closes, 2);
  EXPECT_FALSE(f.open_session().empty());
}

TEST(McpHttp, ASessionWhoseProviderHasExpiredIsEnded) {
  HttpFixture f;
  std::string id = f.open_session();
  f.state.expired = true;
  for (int i = 0; i < 50 && f.server->sessions() > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(f.server->sessions(), 0);
  EXPECT_EQ(f.state.closes, 1);
  EXPECT_EQ(f.post(call_msg(2, "echo", {{"text", "x"}}), {{"Mcp-Session-Id", id}})->status, 404);
}

TEST(McpHttp, ABodyOverTheLimitIs413) {
  HttpFixture f({{"127.0.0.1", 0}, "", 1024});
  auto r = f.post(call_msg(1, "echo", {{"text", std::string(5000, 'x')}}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
}

}  // namespace
