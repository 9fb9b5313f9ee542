// The stdio transport over pipes: replies in order, slow tool calls beside quick requests, a
// message over the limit, a flood of calls, and a client that leaves while a call runs.
#include "mcp/stdio.h"

#include <poll.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <thread>

#include "mcp/stub_provider.h"

using namespace kevo::mcp;
using namespace kevo::mcp::testing;
using nlohmann::json;

namespace {

// A server on a thread, the test holding the client's ends of its stdin and stdout.
struct Served {
  StubState state;
  Session session{{"kevo", "test", ""}, std::make_unique<StubProvider>(state)};
  int to_server = -1, from_server = -1;
  std::thread thread;
  CloseReason why = CloseReason::kShutdown;
  std::string pending;

  explicit Served(StdioLimits limits = {}, std::function<bool()> stop = {}) {
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) throw std::runtime_error("pipe");
    to_server = in[1];
    from_server = out[0];
    thread = std::thread([this, in0 = in[0], out1 = out[1], limits, stop] {
      why = serve_stdio(session, in0, out1, limits, stop);
      ::close(in0);
      ::close(out1);
    });
  }
  ~Served() {
    close_input();
    if (thread.joinable()) thread.join();
    ::close(from_server);
  }
  void send(const std::string& line) { ASSERT_EQ(::write(to_server, line.data(), line.size()), (ssize_t)line.size()); }
  void send(const json& m) { send(m.dump() + "\n"); }
  void close_input() {
    if (to_server >= 0) ::close(to_server);
    to_server = -1;
  }
  // The next reply line, or null after 10 s.
  json reply() {
    for (;;) {
      if (auto nl = pending.find('\n'); nl != std::string::npos) {
        json j = json::parse(pending.substr(0, nl));
        pending.erase(0, nl + 1);
        return j;
      }
      pollfd p{from_server, POLLIN, 0};
      if (::poll(&p, 1, 10000) <= 0) return json();
      char buf[65536];
      ssize_t n = ::read(from_server, buf, sizeof buf);
      if (n <= 0) return json();
      pending.append(buf, static_cast<size_t>(n));
    }
  }
};

TEST(McpStdio, AQuickRequestIsAnsweredWhileAToolCallRuns) {
  Served s;
  s.send(initialize_msg(1));
  EXPECT_EQ(s.reply()["id"], 1);
  s.send(call_msg(2, "echo", {{"text", "slow"}, {"delay_ms", 500}}));
  s.send(json{{"jsonrpc", "2.0"}, {"id", 3}, {"method", "ping"}});
  EXPECT_EQ(s.reply()["id"], 3) << "the ping overtakes the slow call";
  json slow = s.reply();
  EXPECT_EQ(slow["id"], 2);
  EXPECT_EQ(slow["result"]["content"][0]["text"], "slow");
}

TEST(McpStdio, AMessageOverTheLimitIsRefusedAndTheNextOneServed) {
  Served s({.max_message_bytes = 4096});
  s.send(initialize_msg(1));
  (void)s.reply();
  s.send(call_msg(2, "echo", {{"text", std::string(100000, 'x')}}));
  json r = s.reply();
  EXPECT_EQ(r["error"]["code"], -32600);
  EXPECT_NE(r["error"]["message"].get<std::string>().find("refused unread"), std::string::npos);
  s.send(call_msg(3, "echo", {{"text", "after"}}));
  EXPECT_EQ(s.reply()["result"]["content"][0]["text"], "after");
  EXPECT_EQ(s.state.calls, 1);
}

TEST(McpStdio, AFloodOfCallsBeyondTheLimitIsRefused) {
  Served s({.max_in_flight = 2});
  s.send(initialize_msg(1));
  (void)s.reply();
  for (int i = 0; i < 3; ++i) s.send(call_msg(10 + i, "echo", {{"text", "x"}, {"delay_ms", 400}}));
  json busy = s.reply();
  EXPECT_EQ(busy["id"], 12);
  EXPECT_EQ(busy["error"]["code"], -32000);
  EXPECT_EQ(s.reply()["id"].get<int>() / 10, 1);
  EXPECT_EQ(s.reply()["id"].get<int>() / 10, 1);
  EXPECT_LE(s.state.max_running, 2);
}

TEST(McpStdio, AClientThatLeavesMidCallGetsItFinishedBeforeTheSessionCloses) {
  Served s;
  s.send(initialize_msg(1));
  (void)s.reply();
  s.send(call_msg(2, "echo", {{"text", "finished"}, {"delay_ms", 300}}));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  s.close_input();
  EXPECT_EQ(s.reply()["result"]["content"][0]["text"], "finished");
  s.thread.join();
  EXPECT_EQ(s.why, CloseReason::kClientGone);
  EXPECT_EQ(s.state.closes, 1);
  EXPECT_FALSE(s.state.closed_while_running) << "the provider is closed only after its last call";
}

TEST(McpStdio, GarbageLinesAreAnsweredAndCounted) {
  Served s;
  s.send(std::string("\n   \nnot json at all\n"));
  EXPECT_EQ(s.reply()["error"]["code"], -32700);
  s.send(initialize_msg(1));
  EXPECT_EQ(s.reply()["id"], 1);
  s.close_input();
  s.thread.join();
  EXPECT_EQ(s.state.protocol_errors, 1);
}

TEST(McpStdio, TheStopConditionEndsTheSession) {
  std::atomic<bool> stop{false};
  Served s({}, [&] { return stop.load(); });
  s.send(initialize_msg(1));
  (void)s.reply();
  stop = true;
  s.thread.join();
  EXPECT_EQ(s.why, CloseReason::kShutdown);
  EXPECT_EQ(s.state.closes, 1);
}

}  // namespace
