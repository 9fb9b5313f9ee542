// The providers against real loopback servers: request shapes, faults, limits, cancellation,
// accounting, the cache, and that the key never leaks.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/resource.h>

#include <filesystem>
#include <future>
#include <nlohmann/json.hpp>

#include "fake_servers.h"
#include "llm/errors.h"
#include "llm/protocol.h"
#include "support/temp_dir.h"
#include "test_util.h"

namespace kevo::llm {
namespace {

using testing::anthropic_ok;
using testing::error_body;
using testing::FakeClock;
using testing::kKey;
using testing::openai_ok;
using testing::RawServer;
using testing::Scripted;
using testing::ScriptServer;
using testing::test_config;
using nlohmann::json;

std::string header(const testing::Seen& s, const std::string& name) {
  for (const auto& [k, v] : s.headers)
    if (strcasecmp(k.c_str(), name.c_str()) == 0) return v;
  return {};
}

struct Fixture {
  explicit Fixture(const std::string& url, Protocol p = Protocol::kOpenAI,
                   std::shared_ptr<ResponseCache> cache = nullptr)
      : Fixture(test_config(url, p), std::move(cache)) {}
  Fixture(LlmConfig cfg, std::shared_ptr<ResponseCache> cache = nullptr) {
    ctx = make_context(std::move(cfg), {.cache = std::move(cache), .clock = &clock, .seed = 42});
    auto c = make_client("fake:m1", ctx);
    EXPECT_TRUE(c) << (c ? "" : c.error().message);
    if (c) client = std::move(*c);
  }
  Result<ChatResponse> ask(const std::string& prompt = "write a kernel") {
    return client->chat(ChatRequest::user(prompt, "you are a CUDA expert"), cancel);
  }
  FakeClock clock;
  CancelToken cancel;
  std::shared_ptr<LlmContext> ctx;
  std::unique_ptr<LlmClient> client;
};

// ---- request and response shapes --------------------------------------------------------------

TEST(OpenAiProtocol, SendsChatCompletionsAndReadsUsage) {
  ScriptServer srv;
  srv.push({200, openai_ok("```cuda\n__global__ void k() {}\n```", 1000, 500)});
  LlmConfig cfg = test_config(srv.base_url());
  cfg.providers["fake"].max_tokens_field = "max_completion_tokens";
  cfg.defaults.temperature = 0.7;
  cfg.defaults.reasoning_effort = "high";
  Fixture f(cfg);
  auto r = f.ask();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->text, "```cuda\n__global__ void k() {}\n```");
  EXPECT_EQ(r->finish, FinishReason::kStop);
  EXPECT_EQ(r->usage.input_tokens, 1000);
  EXPECT_EQ(r->usage.output_tokens, 500);
  EXPECT_EQ(r->usage.reasoning_tokens, 10);
  EXPECT_DOUBLE_EQ(r->cost_usd, (1000 * 1.0 + 500 * 2.0) / 1e6);
  EXPECT_EQ(r->attempts, 1);
  EXPECT_EQ(r->model, "fake:m1");

  auto seen = srv.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].path, "/v1/chat/completions");
  EXPECT_EQ(header(seen[0], "Authorization"), std::string("Bearer ") + kKey);
  json body = json::parse(seen[0].body);
  EXPECT_EQ(body["model"], "m1");
  ASSERT_EQ(body["messages"].size(), 2u);
  EXPECT_EQ(body["messages"][0]["role"], "system");
  EXPECT_EQ(body["messages"][0]["content"], "you are a CUDA expert");
  EXPECT_EQ(body["messages"][1]["role"], "user");
  EXPECT_EQ(body["max_completion_tokens"], 16384);
  EXPECT_FALSE(body.contains("max_tokens"));
  EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 0.7);
  EXPECT_EQ(body["reasoning_effort"], "high");
}

TEST(AnthropicProtocol, SendsMessagesWithThinkingAndReadsBlocks) {
  ScriptServer srv;
  srv.push({200, anthropic_ok("the answer", 300, 200)});
  LlmConfig cfg = test_config(srv.base_url(), Protocol::kAnthropic);
  cfg.defaults.temperature = 0.5;
  cfg.defaults.thinking_budget = 4096;
  Fixture f(cfg);
  auto r = f.ask();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->text, "the answer");
  EXPECT_EQ(r->thinking, "let me think");
  EXPECT_EQ(r->raw_finish, "end_turn");
  EXPECT_EQ(r->usage.input_tokens, 300);
  EXPECT_EQ(r->usage.output_tokens, 200);

  auto seen = srv.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].path, "/v1/messages");
  EXPECT_EQ(header(seen[0], "x-api-key"), kKey);
  EXPECT_EQ(header(seen[0], "anthropic-version"), "2023-06-01");
  EXPECT_EQ(header(seen[0], "Authorization"), "");
  json body = json::parse(seen[0].body);
  EXPECT_EQ(body["system"], "you are a CUDA expert");
  ASSERT_EQ(body["messages"].size(), 1u);
  EXPECT_EQ(body["messages"][0]["role"], "user");
  EXPECT_EQ(body["max_tokens"], 16384);
  EXPECT_EQ(body["thinking"]["type"], "enabled");
  EXPECT_EQ(body["thinking"]["budget_tokens"], 4096);
  EXPECT_FALSE(body.contains("temperature")) << "thinking forbids a modified temperature";
}

TEST(AnthropicProtocol, ThinkingBudgetAboveMaxTokensIsAConfigErrorBeforeAnyCall) {
  ScriptServer srv;
  LlmConfig cfg = test_config(srv.base_url(), Protocol::kAnthropic);
  cfg.defaults.max_tokens = 2000;
  cfg.defaults.thinking_budget = 4096;
  Fixture f(cfg);
  auto r = f.ask();
  ASSERT_FALSE(r);
  EXPECT_EQ(error_kind(r.error()), ErrorKind::kFatal);
  EXPECT_NE(r.error().message.find("must be less than max_tokens"), std::string::npos);
  EXPECT_EQ(srv.count(), 0u);
}

TEST(AnthropicProtocol, CacheTokensCountAsInput) {
  json body = json::parse(anthropic_ok("x", 10, 5));
  body["usage"]["cache_read_input_tokens"] = 1000;
  body["usage"]["cache_creation_input_tokens"] = nullptr;  // null must not throw
  auto r = anthropic_parse(body.dump());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->usage.input_tokens, 1010);
  EXPECT_EQ(r->usage.cached_input_tokens, 1000);
}

// ---- faults ------------------------------------------------------------------------------------

TEST(Faults, RateLimitHonoursRetryAfter) {
  ScriptServer srv;
  srv.push({429, error_body("rate_limit_error", "slow down"), {{"Retry-After", "7"}}});
  srv.push({200, openai_ok("ok")});
  Fixture f(srv.base_url());
  auto r = f.ask();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->attempts, 2);
  EXPECT_EQ(srv.count(), 2u);
  auto sleeps = f.clock.slept();
  ASSERT_EQ(sleeps.size(), 1u);
  EXPECT_GE(sleeps[0], 7.0) << "Retry-After is a floor";
  EXPECT_LE(sleeps[0], 7.0 + 1e-9) << "jitter (at most 1 s here) must not exceed it";
  EXPECT_EQ(f.ctx->budget->totals().retries, 1);
}

TEST(Faults, RetryAfterMsAndHttpDate) {
  ScriptServer srv;
  srv.push({429, error_body("rate_limit_error", "x"), {{"retry-after-ms", "2500"}}});
  // FakeClock's wall time is 1700000000 = Tue, 14 Nov 2023 22:13:20 GMT; 30 s later:
  srv.push({503, error_body("api_error", "x"), {{"Retry-After", "Tue, 14 Nov 2023 22:13:50 GMT"}}});
  srv.push({200, openai_ok("ok")});
  Fixture f(srv.base_url());
  ASSERT_TRUE(f.ask());
  auto sleeps = f.clock.slept();
  ASSERT_EQ(sleeps.size(), 2u);
  EXPECT_NEAR(sleeps[0], 2.5, 1e-9);
  EXPECT_NEAR(sleeps[1], 30.0, 1e-9);
}

TEST(Faults, ServerErrorIsRetriedWithJitteredBackoff) {
  ScriptServer srv;
  srv.push({500, error_body("api_error", "internal")});
  srv.push({502, "<html>bad gateway</html>"});
  srv.push({200, openai_ok("ok")});
  Fixture f(srv.base_url());
  auto r = f.ask();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->attempts, 3);
  auto sleeps = f.clock.slept();
  ASSERT_EQ(sleeps.size(), 2u);
  EXPECT_LE(sleeps[0], 1.0);  // base 1 s
  EXPECT_LE(sleeps[1], 2.0);  // doubled
  EXPECT_GE(sleeps[0], 0.0);
}

TEST(Faults, OverloadedIsRetriedThenGivesUpWithTheReason) {
  ScriptServer srv;
  srv.set_fallback({529, error_body("overloaded_error", "Overloaded")});
  Fixture f(srv.base_url(), Protocol::kAnthropic);
  auto r = f.ask();
  ASSERT_FALSE(r);
  EXPECT_EQ(error_kind(r.error()), ErrorKind::kTransient);
  EXPECT_NE(r.error().message.find("overloaded_error"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("4 attempt"), std::string::npos) << r.error().message;
  EXPECT_EQ(srv.count(), 4u);
  EXPECT_EQ(f.clock.slept().size(), 3u);
  EXPECT_EQ(f.ctx->budget->totals().calls, 0);
  EXPECT_EQ(f.ctx->budget->totals().failures, 1);
}

TEST(Faults, OverloadedThenSuccess) {
  ScriptServer srv;
  srv.push({529, error_body("overloaded_error", "Overloaded")});
  srv.push({200, anthropic_ok("fine")});
  Fixture f(srv.base_url(), Protocol::kAnthropic);
  auto r = f.ask();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->attempts, 2);
}

struct FatalCase {
  int status;
  std::string type;
  std::string must_mention;
};

TEST(Faults, AuthAndBadRequestAreNotRetriedAndSayWhatToFix) {
  for (const FatalCase& c :
       {FatalCase{401, "authentication_error", testing::kKeyEnv},
        FatalCase{403, "permission_error", "may not use model 'm1'"},
        FatalCase{400, "invalid_request_error", "adjust this model's options"},
        FatalCase{404, "not_found_error", "check the model name 'm1'"}}) {
    ScriptServer srv;
    srv.set_fallback({c.status, error_body(c.type, "server says no")});
    Fixture f(srv.base_url(), Protocol::kAnthropic);
    auto r = f.ask();
    ASSERT_FALSE(r) << c.status;
    EXPECT_EQ(error_kind(r.error()), ErrorKind::kFatal) << c.status;
    EXPECT_EQ(srv.count(), 1u) << c.status;
    EXPECT_TRUE(f.clock.slept().empty());
    const std::string& m = r.error().message;
    EXPECT_NE(m.find("fake"), std::string::npos) << m;  // names the provider
    EXPECT_NE(m.find(std::to_string(c.status)), std::string::npos) << m;
    EXPECT_NE(m.find("server says no"), std::string::npos) << m;
    EXPECT_NE(m.find(c.must_mention), std::string::npos) << m;
  }
}

TEST(Faults, QuotaExhaustedRateLimitIsNotRetried) {
  ScriptServer srv;
  srv.set_fallback({429, error_body("insufficient_quota", "You exceeded your current quota",
                                    "insufficient_quota")});
  Fixture f(srv.base_url());
  auto r = f.ask();
  ASSERT_FALSE(r);
  EXPECT_EQ(error_kind(r.error()), ErrorKind::kFatal);
  EXPECT_NE(r.error().message.find("out of credit"), std::string::npos);
  EXPECT_EQ(srv.count(), 1u);
}

TEST(Faults, ConnectionResetIsRetried) {
  RawServer raw;
  raw.push({RawServer::Action::kReset, ""});
  raw.push({RawServer::Action::kRespond, RawServer::http_ok(openai_ok("after reset"))});
  Fixture f(raw.base_url());
  auto r = f.ask();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->text, "after reset");
  EXPECT_EQ(r->attempts, 2);
  EXPECT_EQ(raw.connections(), 2);
}

TEST(Faults, TruncatedBodyIsRetried) {
  RawServer raw;
  std::string full = openai_ok("whole");
  raw.push({RawServer::Action::kTruncate,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                std::to_string(full.size()) + "\r\n\r\n" + full.substr(0, full.size() / 2)});
  raw.push({RawServer::Action::kRespond, RawServer::http_ok(full)});
  Fixture f(raw.base_url());
  auto r = f.ask();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->text, "whole");
  EXPECT_EQ(r->attempts, 2);
}

TEST(Faults, ConnectionRefusedGivesUpAsTransient) {
  int port;
  {
    RawServer raw;  // learn a free port, then close it
    port = std::stoi(raw.base_url().substr(17));
  }
  LlmConfig cfg = test_config("http://127.0.0.1:" + std::to_string(port) + "/v1");
  cfg.retry.max_attempts = 2;
  Fixture f(cfg);
  auto r = f.ask();
  ASSERT_FALSE(r);
  EXPECT_EQ(error_kind(r.error()), ErrorKind::kTransient);
  EXPECT_NE(r.error().message.find("network error"), std::string::npos) << r.error().message;
}

TEST(Faults, ReadTimeoutIsRetriedThenReported) {
  ScriptServer srv;
  srv.set_fallback({200, openai_ok("too late"), {}, 3000});
  LlmConfig cfg = test_config(srv.base_url());
  cfg.timeout_s = 0.3;
  cfg.retry.max_attempts = 2;
  Fixture f(cfg);
  auto t0 = std::chrono::steady_clock::now();
  auto r = f.ask();
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(r);
  EXPECT_EQ(error_kind(r.error()), ErrorKind::kTransient);
  EXPECT_NE(r.error().message.find("no answer within"), std::string::npos) << r.error().message;
  EXPECT_EQ(srv.count(), 2u);
  EXPECT_LT(took, 2.0);
}

TEST(Faults, MalformedJsonIsRetried) {
  ScriptServer srv;
  srv.push({200, "{\"choices\": [ {\"message\": "});
  srv.push({200, "not json at all"});
  srv.push({200, openai_ok("good")});
  Fixture f(srv.base_url());
  auto r = f.ask();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->attempts, 3);
}

TEST(Faults, EmptyChoicesIsRetriedThenReported) {
  ScriptServer srv;
  srv.set_fallback({200, R"({"id":"x","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":0}})"});
  Fixture f(srv.base_url());
  auto r = f.ask();
  ASSERT_FALSE(r);
  EXPECT_EQ(error_kind(r.error()), ErrorKind::kTransient);
  EXPECT_NE(r.error().message.find("no choices"), std::string::npos) << r.error().message;
  EXPECT_EQ(srv.count(), 4u);
}

TEST(Faults, OpenAiRefusalIsClassifiedNotRetried) {
  ScriptServer srv;
  json body = json::parse(openai_ok("", 40, 12));
  body["choices"][0]["message"]["content"] = nullptr;
  body["choices"][0]["message"]["refusal"] = "I can't help with that.";
  srv.set_fallback({200, body.dump()});
  Fixture f(srv.base_url());
  auto r = f.ask();
  ASSERT_FALSE(r);
  EXPECT_EQ(error_kind(r.error()), ErrorKind::kRefusal);
  EXPECT_NE(r.error().message.find("I can't help with that."), std::string::npos);
  EXPECT_EQ(srv.count(), 1u);
  EXPECT_EQ(f.ctx->budget->totals().calls, 1) << "a refusal still costs its tokens";
  EXPECT_EQ(f.ctx->budget->totals().output_tokens, 12);
}

TEST(Faults, AnthropicRefusalStopReason) {
  ScriptServer srv;
  srv.set_fallback({200, anthropic_ok("I won't do this.", 10, 5, "refusal")});
  Fixture f(srv.base_url(), Protocol::kAnthropic);
  auto r = f.ask();
  ASSERT_FALSE(r);
  EXPECT_EQ(error_kind(r.error()), ErrorKind::kRefusal);
  EXPECT_EQ(srv.count(), 1u);
}

TEST(Faults, ProviderAsksForTooLongAWait) {
  ScriptServer srv;
  srv.set_fallback({429, error_body("rate_limit_error", "x"), {{"Retry-After", "3600"}}});
  Fixture f(srv.base_url());
  auto r = f.ask();
  ASSERT_FALSE(r);
  EXPECT_EQ(error_kind(r.error()), ErrorKind::kTransient);
  EXPECT_NE(r.error().message.find("3600"), std::string::npos);
  EXPECT_EQ(srv.count(), 1u);
}

// ---- concurrency and cancellation -----------------------------------------------------------

TEST(Concurrency, NeverMoreThanTheLimitInFlight) {
  for (int limit : {1, 3}) {
    ScriptServer srv;
    srv.set_fallback({200, openai_ok("ok"), {}, 60});
    LlmConfig cfg = test_config(srv.base_url());
    cfg.providers["fake"].max_concurrency = limit;
    Fixture f(cfg);
    // A second client of the same provider shares the limit.
    auto other = make_client("fake:m2", f.ctx);
    ASSERT_TRUE(other);
    std::vector<std::future<bool>> calls;
    for (int i = 0; i < 10; ++i)
      calls.push_back(std::async(std::launch::async, [&, i] {
        LlmClient& c = i % 2 ? **other : *f.client;
        return static_cast<bool>(c.chat(ChatRequest::user("p" + std::to_string(i)), f.cancel));
      }));
    for (auto& c : calls) EXPECT_TRUE(c.get());
    EXPECT_EQ(srv.count(), 10u);
    EXPECT_LE(srv.max_in_flight(), limit);
    EXPECT_EQ(srv.max_in_flight(), limit) << "the calls should overlap up to the limit";
  }
}

TEST(Cancellation, StopsAnInFlightCallAndWritesNothing) {
  ScriptServer srv;
  srv.set_fallback({200, openai_ok("late"), {}, 5000});
  auto cache = ResponseCache::open(":memory:");
  ASSERT_TRUE(cache);
  std::shared_ptr<ResponseCache> shared = std::move(*cache);
  LlmConfig cfg = test_config(srv.base_url());
  cfg.cache = CacheMode::kCache;
  cfg.budget.max_calls = 1;
  Fixture f(cfg, shared);
  auto pending = std::async(std::launch::async, [&] { return f.ask(); });
  while (srv.count() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  auto t0 = std::chrono::steady_clock::now();
  f.cancel.cancel();
  auto r = pending.get();
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(r);
  EXPECT_EQ(error_kind(r.error()), ErrorKind::kCancelled);
  EXPECT_LT(took, 1.0);
  EXPECT_EQ(*shared->size(), 0);
  EXPECT_EQ(f.ctx->budget->totals().calls, 0);
  EXPECT_EQ(f.ctx->budget->totals().failures, 0);
  // The reservation was returned: the one-call budget is still available.
  EXPECT_TRUE(f.ctx->budget->reserve());
}

TEST(Cancellation, DuringBackoff) {
  ScriptServer srv;
  srv.set_fallback({500, error_body("api_error", "x")});
  Fixture f(srv.base_url());
  f.clock.on_sleep = [&] { f.cancel.cancel(); };
  auto r = f.ask();
  ASSERT_FALSE(r);
  EXPECT_EQ(error_kind(r.error()), ErrorKind::kCancelled);
  EXPECT_EQ(srv.count(), 1u);
}

// ---- accounting and budgets ------------------------------------------------------------------

TEST(Budget, CallLimitStopsNewCallsCleanly) {
  ScriptServer srv;
  srv.set_fallback({200, openai_ok("ok", 10, 10)});
  LlmConfig cfg = test_config(srv.base_url());
  cfg.budget.max_calls = 2;
  Fixture f(cfg);
  EXPECT_TRUE(f.ask("a"));
  EXPECT_TRUE(f.ask("b"));
  auto r = f.ask("c");
  ASSERT_FALSE(r);
  EXPECT_EQ(error_kind(r.error()), ErrorKind::kBudget);
  EXPECT_NE(r.error().message.find("max_calls"), std::string::npos);
  EXPECT_EQ(srv.count(), 2u);
}

TEST(Budget, TokenAndMoneyLimits) {
  ScriptServer srv;
  srv.set_fallback({200, openai_ok("ok", 600'000, 200'000)});  // $0.6 + $0.4 = $1.00 a call
  {
    LlmConfig cfg = test_config(srv.base_url());
    cfg.budget.max_cost_usd = 2.5;
    Fixture f(cfg);
    for (int i = 0; i < 3; ++i) {
      auto r = f.ask("p" + std::to_string(i));
      ASSERT_TRUE(r);
      EXPECT_NEAR(r->cost_usd, 1.0, 1e-9);
    }
    auto r = f.ask("p4");
    ASSERT_FALSE(r);
    EXPECT_EQ(error_kind(r.error()), ErrorKind::kBudget);
    EXPECT_NE(r.error().message.find("money"), std::string::npos);
    EXPECT_NEAR(f.ctx->budget->totals().cost_usd, 3.0, 1e-9);
    EXPECT_NEAR(f.ctx->budget->per_model().at("fake:m1").cost_usd, 3.0, 1e-9);
  }
  {
    LlmConfig cfg = test_config(srv.base_url());
    cfg.budget.max_tokens = 700'000;  // checked before a call: the first may overshoot it
    Fixture f(cfg);
    EXPECT_TRUE(f.ask("a"));
    auto r = f.ask("b");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("token budget"), std::string::npos);
    EXPECT_EQ(f.ctx->budget->totals().input_tokens + f.ctx->budget->totals().output_tokens, 800'000);
  }
}

TEST(Budget, ReservationsCoverCallsInFlight) {
  Budget b({.max_calls = 2});
  EXPECT_TRUE(b.reserve());
  EXPECT_TRUE(b.reserve());
  EXPECT_FALSE(b.reserve()) << "two in flight fill a two-call budget";
  b.release();
  EXPECT_TRUE(b.reserve());
  b.commit("m", Usage{.input_tokens = 1, .output_tokens = 2}, 0.5, true, 1.0);
  b.commit("m", Usage{.input_tokens = 1, .output_tokens = 2}, 0.5, true, 1.0);
  EXPECT_FALSE(b.reserve());
  EXPECT_EQ(b.totals().calls, 2);
  EXPECT_EQ(b.totals().output_tokens, 4);
}

TEST(Pricing, UnknownModelCostsZeroAndIsFlagged) {
  ScriptServer srv;
  srv.set_fallback({200, openai_ok("ok", 1000, 1000)});
  LlmConfig cfg = test_config(srv.base_url());
  auto ctx = make_context(cfg, {.seed = 1});
  auto c = make_client("fake:mystery-model", ctx);
  ASSERT_TRUE(c);
  CancelToken cancel;
  auto r = (*c)->chat(ChatRequest::user("x"), cancel);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->cost_known);
  EXPECT_EQ(r->cost_usd, 0);
  EXPECT_TRUE(ctx->budget->totals().cost_unknown);
}

// ---- cache and replay -----------------------------------------------------------------------

TEST(Cache, RepeatsAreFreeAndReplayWorksOffline) {
  kevo::test::TempDir dir("kevo-llm-cache");
  const std::string db = (dir.path / "run.db").string();
  ScriptServer srv;
  srv.push({200, openai_ok("first sample", 100, 50)});
  srv.push({200, openai_ok("second sample", 100, 50)});
  {
    LlmConfig cfg = test_config(srv.base_url());
    cfg.cache = CacheMode::kCache;
    auto cache = ResponseCache::open(db);
    ASSERT_TRUE(cache);
    Fixture f(cfg, std::move(*cache));
    auto a = f.ask("same prompt");
    auto b = f.ask("same prompt");  // a second sample of the same request: a new call
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->text, "first sample");
    EXPECT_EQ(b->text, "second sample");
    EXPECT_FALSE(a->from_cache);
    EXPECT_EQ(srv.count(), 2u);
  }
  {  // The same experiment again: both answers from the database, in order, for free.
    LlmConfig cfg = test_config(srv.base_url());
    cfg.cache = CacheMode::kCache;
    auto cache = ResponseCache::open(db);
    ASSERT_TRUE(cache);
    Fixture f(cfg, std::move(*cache));
    auto a = f.ask("same prompt");
    auto b = f.ask("same prompt");
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->text, "first sample");
    EXPECT_EQ(b->text, "second sample");
    EXPECT_TRUE(a->from_cache);
    EXPECT_EQ(a->cost_usd, 0);
    EXPECT_EQ(a->usage.input_tokens, 100);
    EXPECT_EQ(srv.count(), 2u);
    EXPECT_EQ(f.ctx->budget->totals().cache_hits, 2);
    EXPECT_EQ(f.ctx->budget->totals().cost_usd, 0);
  }
  {  // Replay: no key needed, no network, and a miss is an error.
    ::unsetenv(testing::kKeyEnv);
    LlmConfig cfg = test_config("http://127.0.0.1:9/v1");  // nothing listens there
    ::unsetenv(testing::kKeyEnv);
    cfg.cache = CacheMode::kReplay;
    auto cache = ResponseCache::open(db);
    ASSERT_TRUE(cache);
    std::shared_ptr<ResponseCache> shared = std::move(*cache);
    auto ctx = make_context(cfg, {.cache = shared, .seed = 3});
    auto c = make_client("fake:m1", ctx);
    ASSERT_TRUE(c) << c.error().message;
    CancelToken cancel;
    auto hit = (*c)->chat(ChatRequest::user("same prompt", "you are a CUDA expert"), cancel);
    ASSERT_TRUE(hit) << hit.error().message;
    EXPECT_EQ(hit->text, "first sample");
    auto miss = (*c)->chat(ChatRequest::user("another prompt", "you are a CUDA expert"), cancel);
    ASSERT_FALSE(miss);
    EXPECT_EQ(error_kind(miss.error()), ErrorKind::kReplayMiss);
    EXPECT_NE(miss.error().message.find("replay"), std::string::npos);
  }
  {  // Settings are part of the key: another temperature is another request.
    LlmConfig cfg = test_config(srv.base_url());
    cfg.cache = CacheMode::kReplay;
    cfg.defaults.temperature = 0.1;
    auto cache = ResponseCache::open(db);
    auto ctx = make_context(cfg, {.cache = std::move(*cache), .seed = 3});
    auto c = make_client("fake:m1", ctx);
    CancelToken cancel;
    auto r = (*c)->chat(ChatRequest::user("same prompt", "you are a CUDA expert"), cancel);
    ASSERT_FALSE(r);
    EXPECT_EQ(error_kind(r.error()), ErrorKind::kReplayMiss);
  }
}

TEST(Cache, ReplayWithoutDatabaseIsAClearError) {
  LlmConfig cfg = test_config("http://127.0.0.1:9/v1");
  cfg.cache = CacheMode::kReplay;
  auto ctx = make_context(cfg);
  auto c = make_client("fake:m1", ctx);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("run database"), std::string::npos);
}

TEST(Cache, AttachesToAnOpenRunDatabase) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  {
    auto c = ResponseCache::attach(db);
    ASSERT_TRUE(c);
    ASSERT_TRUE((*c)->put("k", 0, {"m", "{}", "{}", 0.1}));
    auto hit = (*c)->get("k", 0);
    ASSERT_TRUE(hit && *hit);
    EXPECT_EQ((*hit)->model, "m");
    EXPECT_FALSE(*(*c)->get("k", 1));
  }
  sqlite3_close(db);  // still open after the cache is gone: the run owns it
}

// ---- secrets ---------------------------------------------------------------------------------

TEST(Secrets, KeyNeverAppearsInLogsErrorsOrStoredRows) {
  kevo::test::TempDir dir("kevo-llm-secret");
  const std::string path = (dir.path / "run.db").string();
  testing::LogCapture logs;
  ScriptServer srv;
  // A server that echoes the key back, as some do in auth errors.
  srv.push({500, error_body("api_error", std::string("internal error for key ") + kKey)});
  srv.push({200, openai_ok("stored answer", 10, 10)});
  srv.push({401, error_body("authentication_error", std::string("Incorrect API key provided: ") + kKey)});
  Result<ChatResponse> bad = Error{};
  {
    auto cache = ResponseCache::open(path);
    ASSERT_TRUE(cache);
    LlmConfig cfg = test_config(srv.base_url());
    cfg.cache = CacheMode::kCache;
    Fixture f(cfg, std::move(*cache));
    auto ok = f.ask("first");
    ASSERT_TRUE(ok) << ok.error().message;
    bad = f.ask("second");
  }
  ASSERT_FALSE(bad);
  EXPECT_EQ(error_kind(bad.error()), ErrorKind::kFatal);

  // The key did travel to the server (so the checks below could fail)...
  auto seen = srv.seen();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_NE(header(seen[0], "Authorization").find(kKey), std::string::npos);
  // ...but nowhere else: not in the log, the error, or any column of any stored row.
  const std::string log_text = logs.text();
  EXPECT_NE(log_text.find("retrying"), std::string::npos) << "the retry was logged";
  EXPECT_EQ(log_text.find(kKey), std::string::npos) << log_text;
  EXPECT_EQ(bad.error().message.find(kKey), std::string::npos) << bad.error().message;
  EXPECT_NE(bad.error().message.find("[redacted]"), std::string::npos);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  std::string all;
  sqlite3_exec(
      db, "SELECT key, occurrence, model, request, response, cost_usd, created_at FROM llm_cache",
      [](void* out, int n, char** values, char**) {
        for (int i = 0; i < n; ++i) *static_cast<std::string*>(out) += values[i] ? values[i] : "";
        return 0;
      },
      &all, nullptr);
  sqlite3_close(db);
  EXPECT_NE(all.find("stored answer"), std::string::npos) << "the row was written";
  EXPECT_EQ(all.find(kKey), std::string::npos);
}

TEST(Secrets, MissingKeyNamesTheVariableAndTheFix) {
  LlmConfig cfg = default_config();
  ::unsetenv("ANTHROPIC_API_KEY");
  auto ctx = make_context(cfg);
  auto c = make_client("anthropic:claude-sonnet-4-5", ctx);
  ASSERT_FALSE(c);
  EXPECT_EQ(error_kind(c.error()), ErrorKind::kFatal);
  EXPECT_NE(c.error().message.find("ANTHROPIC_API_KEY"), std::string::npos) << c.error().message;
}


// ---- answers bounded in size, usage never free ---------------------------------------

// A server that answers 200 with a body of `total` bytes, written in 64 KiB pieces as fast as the
// client reads, never holding more than one piece: the size of a broken proxy's or a hostile
// server's answer, without the test holding it.
class FloodServer {
 public:
  explicit FloodServer(size_t total) : total_(total) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t n = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &n);
    port_ = ntohs(a.sin_port);
    ::listen(fd_, 4);
    thread_ = std::thread([this] { serve(); });
  }
  ~FloodServer() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  int connections() const { return connections_; }
  size_t sent() const { return sent_; }

 private:
  void serve() {
    for (;;) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      ++connections_;
      char buf[65536];
      (void)::recv(c, buf, sizeof buf, 0);  // the request (small)
      std::string head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                         std::to_string(total_) + "\r\n\r\n{\"choices\":[{\"message\":{\"content\":\"";
      std::string piece(65536, 'a');
      bool ok = ::send(c, head.data(), head.size(), MSG_NOSIGNAL) > 0;
      for (size_t left = total_ - head.size(); ok && left > 0;) {
        size_t n = std::min(left, piece.size());
        ssize_t w = ::send(c, piece.data(), n, MSG_NOSIGNAL);
        if (w <= 0) break;
        left -= static_cast<size_t>(w);
        sent_ += static_cast<size_t>(w);
      }
      ::close(c);
    }
  }
  size_t total_;
  int fd_ = -1, port_ = 0;
  std::atomic<int> connections_{0};
  std::atomic<size_t> sent_{0};
  std::thread thread_;
};

long max_rss_kib() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

TEST(Limits, AHugeAnswerIsCutOffWithBoundedMemoryAndNotRetried) {
  FloodServer srv(size_t{300} << 20);  // 300 MiB
  LlmConfig cfg = test_config(srv.base_url());
  cfg.timeout_s = 60;
  Fixture f(cfg);
  const long before = max_rss_kib();
  auto r = f.ask();
  const long grew_mib = (max_rss_kib() - before) / 1024;
  ASSERT_FALSE(r);
  EXPECT_EQ(error_kind(r.error()), ErrorKind::kFatal) << r.error().message;
  EXPECT_NE(r.error().message.find("max_response_bytes"), std::string::npos) << r.error().message;
  EXPECT_EQ(srv.connections(), 1);       // not retried: each try could be billed
  EXPECT_LT(srv.sent(), size_t{64} << 20);  // the transfer was stopped, not read to the end
  EXPECT_LT(grew_mib, 64);                 // the cap is 4 MiB
  EXPECT_EQ(f.ctx->budget->totals().calls, 0);
}

TEST(Limits, TheSizeCapIsConfigurable) {
  auto cfg = parse_config("max_response_bytes = 2048\n");
  ASSERT_TRUE(cfg) << cfg.error().message;
  EXPECT_EQ(cfg->max_response_bytes, 2048);
  EXPECT_FALSE(parse_config("max_response_bytes = 10\n"));
  ScriptServer srv;
  srv.set_fallback({200, openai_ok(std::string(5000, 'x'))});
  LlmConfig c = test_config(srv.base_url());
  c.max_response_bytes = 2048;
  Fixture f(c);
  auto r = f.ask();
  ASSERT_FALSE(r);
  EXPECT_EQ(error_kind(r.error()), ErrorKind::kFatal);
  EXPECT_EQ(srv.count(), 1u);
}

TEST(Limits, AnAnswerWithoutUsageIsEstimatedAndCountsAgainstTheBudget) {
  ScriptServer srv;
  std::string text(4000, 'k');  // ~1000 tokens at 4 bytes a token
  nlohmann::json no_usage = {{"id", "x"},
                             {"choices", {{{"index", 0},
                                           {"message", {{"role", "assistant"}, {"content", text}}},
                                           {"finish_reason", "stop"}}}}};
  srv.set_fallback({200, no_usage.dump()});
  LlmConfig cfg = test_config(srv.base_url());
  cfg.budget.max_tokens = 1000;  // the answer alone is ~1000 tokens
  testing::LogCapture log;
  Fixture f(cfg);
  auto r = f.ask();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->usage_estimated);
  EXPECT_EQ(r->usage.output_tokens, 1000);
  EXPECT_GT(r->usage.input_tokens, 0);
  EXPECT_GT(r->cost_usd, 0);
  EXPECT_NE(log.text().find("reported no token usage"), std::string::npos) << log.text();
  auto second = f.ask();  // the estimate spent the token budget: no free calls
  ASSERT_FALSE(second);
  EXPECT_EQ(error_kind(second.error()), ErrorKind::kBudget) << second.error().message;
  EXPECT_EQ(srv.count(), 1u);
}

}  // namespace
}  // namespace kevo::llm
