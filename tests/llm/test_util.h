// Shared pieces of the LLM tests: a fake clock, canned answers, a context aimed at a test server.
#pragma once

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <functional>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "llm/client.h"

namespace kevo::llm::testing {

inline constexpr const char* kKeyEnv = "KEVO_TEST_LLM_KEY";
inline constexpr const char* kKey = "sk-test-7f3a9c1e5b2d4f6a8c0e";

// Records the backoff it is asked for and returns at once.
class FakeClock final : public Clock {
 public:
  double now() override {
    return Seconds(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  double wall_now() override { return 1'700'000'000.0; }
  bool sleep_for(Seconds d, const CancelToken& cancel) override {
    std::lock_guard lock(mu_);
    sleeps.push_back(d.count());
    if (on_sleep) on_sleep();
    return !cancel.cancelled();
  }
  std::vector<double> slept() {
    std::lock_guard lock(mu_);
    return sleeps;
  }
  std::function<void()> on_sleep;

 private:
  std::mutex mu_;
  std::vector<double> sleeps;
};

inline std::string openai_ok(const std::string& text, int in = 100, int out = 50,
                             const std::string& finish = "stop") {
  return nlohmann::json{{"id", "chatcmpl-1"},
                        {"object", "chat.completion"},
                        {"choices",
                         {{{"index", 0},
                           {"message", {{"role", "assistant"}, {"content", text}, {"refusal", nullptr}}},
                           {"finish_reason", finish}}}},
                        {"usage",
                         {{"prompt_tokens", in},
                          {"completion_tokens", out},
                          {"total_tokens", in + out},
                          {"completion_tokens_details", {{"reasoning_tokens", 10}}},
                          {"prompt_tokens_details", {{"cached_tokens", 0}}}}}}
      .dump();
}

inline std::string anthropic_ok(const std::string& text, int in = 100, int out = 50,
                                const std::string& stop = "end_turn") {
  return nlohmann::json{{"id", "msg_1"},
                        {"type", "message"},
                        {"role", "assistant"},
                        {"model", "claude-test"},
                        {"content",
                         {{{"type", "thinking"}, {"thinking", "let me think"}, {"signature", "sig"}},
                          {{"type", "text"}, {"text", text}}}},
                        {"stop_reason", stop},
                        {"stop_sequence", nullptr},
                        {"usage", {{"input_tokens", in}, {"output_tokens", out}}}}
      .dump();
}

inline std::string error_body(const std::string& type, const std::string& message,
                              const std::string& code = "") {
  nlohmann::json e = {{"type", type}, {"message", message}};
  if (!code.empty()) e["code"] = code;
  return nlohmann::json{{"type", "error"}, {"error", e}}.dump();
}

// A config with one provider "fake" (protocol `p`) at `base_url`, fast retries, known prices.
inline LlmConfig test_config(const std::string& base_url, Protocol p = Protocol::kOpenAI) {
  ::setenv(kKeyEnv, kKey, 1);
  LlmConfig cfg = default_config();
  cfg.providers["fake"] = ProviderConfig{.name = "fake", .protocol = p, .base_url = base_url,
                                         .api_key_env = kKeyEnv, .max_concurrency = 4};
  cfg.retry.max_attempts = 4;
  cfg.connect_timeout_s = 2;
  cfg.timeout_s = 5;
  cfg.prices["fake:m1"] = Price{1.0, 2.0, std::nullopt};  // $1 / $2 per 1M tokens
  cfg.cache = CacheMode::kLive;
  return cfg;
}

// Captures every log line of the default logger while alive.
class LogCapture {
 public:
  LogCapture() {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    logger_ = std::make_shared<spdlog::logger>("capture", sink);
    logger_->set_level(spdlog::level::trace);
    previous_ = spdlog::default_logger();
    spdlog::set_default_logger(logger_);
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  std::string text() const { return out_.str(); }

 private:
  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> logger_, previous_;
};

}  // namespace kevo::llm::testing
