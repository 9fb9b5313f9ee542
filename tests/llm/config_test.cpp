// Model specs, the TOML config and its overrides, key files, prices, retry arithmetic.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/temp_dir.h"
#include "llm/errors.h"
#include "llm/keys.h"
#include "llm/model_spec.h"
#include "llm/pricing.h"
#include "llm/retry.h"

namespace kevo::llm {
namespace {

TEST(ModelSpec, ProviderAndUrlForms) {
  LlmConfig cfg = default_config();
  auto a = parse_model_spec("anthropic:claude-sonnet-4-5", cfg);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->model, "claude-sonnet-4-5");
  EXPECT_EQ(a->provider.protocol, Protocol::kAnthropic);
  EXPECT_EQ(a->provider.api_key_env, "ANTHROPIC_API_KEY");

  auto o = parse_model_spec("openai:gpt-4.1", cfg);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->provider.base_url, "https://api.openai.com/v1");
  EXPECT_EQ(o->provider.max_tokens_field, "max_completion_tokens");

  auto r = parse_model_spec("openrouter:qwen/qwen3-coder", cfg);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->model, "qwen/qwen3-coder");

  auto ol = parse_model_spec("ollama:qwen2.5-coder:32b", cfg);  // the model name has a colon
  ASSERT_TRUE(ol);
  EXPECT_EQ(ol->model, "qwen2.5-coder:32b");
  EXPECT_FALSE(ol->provider.key_required);

  auto u = parse_model_spec("http://localhost:8000/v1/#qwen2.5-coder-32b", cfg);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->model, "qwen2.5-coder-32b");
  EXPECT_EQ(u->provider.base_url, "http://localhost:8000/v1");
  EXPECT_EQ(u->text, "http://localhost:8000/v1#qwen2.5-coder-32b");
  EXPECT_EQ(u->provider.api_key_env, "KEVO_LLM_API_KEY") << "never OPENAI_API_KEY to a random host";
  EXPECT_TRUE(u->provider.local);
}

TEST(ModelSpec, BadSpecsSayWhatIsExpected) {
  LlmConfig cfg = default_config();
  auto a = parse_model_spec("gpt-4.1", cfg);
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message.find("PROVIDER:MODEL"), std::string::npos);
  auto b = parse_model_spec("nosuch:model", cfg);
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("known: anthropic"), std::string::npos) << b.error().message;
  auto c = parse_model_spec("http://localhost:8000/v1", cfg);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("BASE_URL#MODEL"), std::string::npos);
}

TEST(Config, TomlFileWithProvidersPricesBudgetAndOptions) {
  auto cfg = parse_config(R"(
[llm]
models = ["anthropic:claude-sonnet-4-5", "local:qwen"]
weights = [2, 1]
selection = "ucb"
temperature = 0.8
max_tokens = 8000
max_attempts = 3
cache = "replay"

[llm.budget]
max_calls = 100
max_cost_usd = 12.5

[llm.providers.local]
base_url = "http://gpu-box:8000/v1/"
max_concurrency = 2

[llm.prices."local:qwen"]
input = 0.1
output = 0.2

[llm.options."anthropic:claude-sonnet-4-5"]
thinking_budget = 4000
)");
  ASSERT_TRUE(cfg) << cfg.error().message;
  EXPECT_EQ(cfg->models.size(), 2u);
  EXPECT_EQ(cfg->weights, (std::vector<double>{2, 1}));
  EXPECT_EQ(cfg->selection, "ucb");
  EXPECT_EQ(cfg->retry.max_attempts, 3);
  EXPECT_EQ(cfg->cache, CacheMode::kReplay);
  EXPECT_EQ(*cfg->budget.max_calls, 100);
  EXPECT_DOUBLE_EQ(*cfg->budget.max_cost_usd, 12.5);
  EXPECT_FALSE(cfg->budget.max_tokens);
  const auto& local = cfg->providers.at("local");
  EXPECT_EQ(local.base_url, "http://gpu-box:8000/v1");
  EXPECT_EQ(local.max_concurrency, 2);
  EXPECT_FALSE(local.key_required);
  EXPECT_DOUBLE_EQ(cfg->prices.at("local:qwen").output_per_mtok, 0.2);
  auto o = cfg->options_for("anthropic:claude-sonnet-4-5");
  EXPECT_EQ(*o.thinking_budget, 4000);
  EXPECT_EQ(*o.max_tokens, 8000);  // from the defaults
  EXPECT_DOUBLE_EQ(*o.temperature, 0.8);
  EXPECT_FALSE(cfg->options_for("local:qwen").thinking_budget);
  // The built-in providers are still there.
  EXPECT_TRUE(cfg->providers.count("openai"));
}

TEST(Config, RejectsTyposWrongTypesAndKeys) {
  auto a = parse_config("[llm]\ntemprature = 0.5\n");
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message.find("temprature"), std::string::npos);
  auto b = parse_config("[llm]\nmax_tokens = \"lots\"\n");
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("integer"), std::string::npos);
  auto c = parse_config("[llm.providers.openai]\napi_key = \"sk-123\"\n");
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("api_key_env"), std::string::npos);
  auto d = parse_config("[llm\n");
  ASSERT_FALSE(d);
}

TEST(Config, CommandLineOverrides) {
  LlmConfig cfg = default_config();
  ASSERT_TRUE(apply_override(cfg, "budget.max_cost_usd=5"));
  ASSERT_TRUE(apply_override(cfg, "reasoning_effort=high"));  // bare string
  ASSERT_TRUE(apply_override(cfg, "models=[\"openai:gpt-4.1\", \"deepseek:deepseek-chat\"]"));
  ASSERT_TRUE(apply_override(cfg, "options.\"openai:gpt-4.1\".temperature=0.2"));
  ASSERT_TRUE(apply_override(cfg, "providers.openai.max_concurrency=16"));
  ASSERT_TRUE(apply_override(cfg, "cache=live"));
  EXPECT_DOUBLE_EQ(*cfg.budget.max_cost_usd, 5.0);
  EXPECT_EQ(*cfg.defaults.reasoning_effort, "high");
  EXPECT_EQ(cfg.models.size(), 2u);
  EXPECT_DOUBLE_EQ(*cfg.options_for("openai:gpt-4.1").temperature, 0.2);
  EXPECT_EQ(cfg.providers.at("openai").max_concurrency, 16);
  EXPECT_EQ(cfg.cache, CacheMode::kLive);
  EXPECT_FALSE(apply_override(cfg, "nonsense"));
  EXPECT_FALSE(apply_override(cfg, "cache=sometimes"));
}

TEST(Keys, EnvironmentThenKeyFile) {
  kevo::test::TempDir dir("kevo-keys");
  auto file = (dir.path / "keys.env").string();
  {
    std::ofstream out(file);
    out << "# my keys\nexport KEVO_TEST_K1=\"from-file-111\"\nKEVO_TEST_K2 = from-file-222\n";
  }
  std::filesystem::permissions(file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  ProviderConfig p{.name = "x", .api_key_env = "KEVO_TEST_K1"};
  ::unsetenv("KEVO_TEST_K1");
  EXPECT_EQ(*resolve_api_key(p, file), "from-file-111");
  ::setenv("KEVO_TEST_K1", "from-env", 1);
  EXPECT_EQ(*resolve_api_key(p, file), "from-env");
  ::unsetenv("KEVO_TEST_K1");
  p.api_key_env = "KEVO_TEST_K2";
  EXPECT_EQ(*resolve_api_key(p, file), "from-file-222");
  p.api_key_env = "KEVO_TEST_K3";
  auto missing = resolve_api_key(p, file);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("KEVO_TEST_K3"), std::string::npos);
  EXPECT_NE(missing.error().message.find(file), std::string::npos);
  EXPECT_EQ(missing.error().message.find("from-file"), std::string::npos);
  p.key_required = false;
  EXPECT_EQ(*resolve_api_key(p, file), "");
}

TEST(Pricing, LookupAndCost) {
  PriceTable t = PriceTable::builtin();
  auto sonnet = t.find("anthropic:claude-sonnet-4-5-20250929", "claude-sonnet-4-5-20250929");
  ASSERT_TRUE(sonnet);
  EXPECT_DOUBLE_EQ(sonnet->input_per_mtok, 3.0);
  auto mini = t.find("openai:gpt-4.1-mini-2025-04-14", "gpt-4.1-mini-2025-04-14");
  ASSERT_TRUE(mini);
  EXPECT_DOUBLE_EQ(mini->input_per_mtok, 0.40) << "the longer name wins";
  auto routed = t.find("openrouter:anthropic/claude-sonnet-4.5", "anthropic/claude-sonnet-4.5");
  ASSERT_TRUE(routed);
  EXPECT_DOUBLE_EQ(routed->output_per_mtok, 15.0);
  EXPECT_FALSE(t.find("fake:gpt-4.1x", "gpt-4.1x"));
  t.set("openai:gpt-4.1", Price{10, 20, std::nullopt});
  EXPECT_DOUBLE_EQ(t.find("openai:gpt-4.1", "gpt-4.1")->input_per_mtok, 10);  // spec beats name

  Usage u{.input_tokens = 1'000'000, .output_tokens = 500'000, .cached_input_tokens = 400'000};
  // 600k fresh at $2, 400k cached at $0.5, 500k out at $8.
  EXPECT_NEAR(cost_usd(Price{2.0, 8.0, 0.5}, u), 1.2 + 0.2 + 4.0, 1e-12);
  EXPECT_NEAR(cost_usd(Price{2.0, 8.0, std::nullopt}, u), 2.0 + 4.0, 1e-12);
}

TEST(Retry, BackoffGrowsIsCappedAndJittered) {
  RetryPolicy p{.max_attempts = 10, .base_delay_s = 1, .max_delay_s = 8};
  std::mt19937_64 rng(7);
  for (int attempt = 1; attempt <= 8; ++attempt) {
    double cap = std::min(8.0, std::ldexp(1.0, attempt - 1));
    double lo = 1e9, hi = 0;
    for (int k = 0; k < 200; ++k) {
      double d = backoff_delay_s(p, attempt, std::nullopt, rng);
      lo = std::min(lo, d);
      hi = std::max(hi, d);
      ASSERT_GE(d, 0);
      ASSERT_LE(d, cap);
    }
    EXPECT_LT(lo, cap * 0.2) << "full jitter reaches near zero";
    EXPECT_GT(hi, cap * 0.8);
  }
  EXPECT_GE(backoff_delay_s(p, 1, 20.0, rng), 20.0);
}

TEST(Retry, RetryAfterForms) {
  EXPECT_EQ(*parse_retry_after("30", 0), 30);
  EXPECT_EQ(*parse_retry_after(" 1.5 ", 0), 1.5);
  EXPECT_FALSE(parse_retry_after("", 0));
  EXPECT_FALSE(parse_retry_after("-3", 0));
  EXPECT_FALSE(parse_retry_after("soon", 0));
  // Wed, 21 Oct 2015 07:28:00 GMT is 1445412480.
  EXPECT_EQ(*parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", 1445412480 - 12), 12);
  EXPECT_EQ(*parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", 1445412480 + 50), 0);
}

TEST(Retry, StatusClasses) {
  EXPECT_EQ(classify_status(200), StatusClass::kOk);
  for (long s : {408, 409, 429, 500, 502, 503, 504, 529}) EXPECT_EQ(classify_status(s), StatusClass::kRetryable) << s;
  for (long s : {400, 401, 402, 403, 404, 413, 422}) EXPECT_EQ(classify_status(s), StatusClass::kFatal) << s;
}

TEST(Errors, KindsRoundTripAndRedaction) {
  for (ErrorKind k : {ErrorKind::kTransient, ErrorKind::kFatal, ErrorKind::kRefusal, ErrorKind::kBudget,
                      ErrorKind::kCancelled, ErrorKind::kReplayMiss})
    EXPECT_EQ(error_kind(make_error(k, "x")), k);
  EXPECT_EQ(error_kind(Error{"plain"}), ErrorKind::kOther);
  // The kind is the error's code; the tag at the start of the message is for people only.
  EXPECT_EQ(make_error(ErrorKind::kFatal, "bad key").code, ErrorCode::kLlmFatal);
  EXPECT_EQ(make_error(ErrorKind::kFatal, "bad key").message, "[fatal] bad key");
  EXPECT_EQ(error_kind(Error{"[fatal] looks tagged"}), ErrorKind::kOther);
  EXPECT_EQ(redact("key sk-abcdefgh123 and sk-abcdefgh123", "sk-abcdefgh123"), "key [redacted] and [redacted]");
}

}  // namespace
}  // namespace kevo::llm
