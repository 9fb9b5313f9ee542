// LLM settings: built-in defaults, a TOML file, then command-line overrides, in that order.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llm/budget.h"
#include "llm/pricing.h"
#include "llm/retry.h"
#include "util/enum_text.h"
#include "util/result.h"

namespace kevo::llm {

enum class Protocol { kOpenAI, kAnthropic };

// Where a family of models is served and how to authenticate. Keys are named, never stored.
struct ProviderConfig {
  std::string name;
  Protocol protocol = Protocol::kOpenAI;
  std::string base_url;
  std::string api_key_env;  // environment variable (or key-file entry) holding the key
  bool key_required = true;
  int max_concurrency = 4;  // requests in flight at once, across all clients of the run
  // OpenAI itself wants "max_completion_tokens"; most compatible servers only know "max_tokens".
  std::string max_tokens_field = "max_tokens";
  bool local = false;  // served on this machine: free, and no price needed
};

// Sampling and reasoning options; unset fields defer to the next level.
struct ModelOptions {
  std::optional<double> temperature;
  std::optional<int> max_tokens;
  std::optional<std::string> reasoning_effort;
  std::optional<int> thinking_budget;
  std::optional<std::string> system_prompt;
};

// live: always ask the model (answers are still stored); cache: answer from the cache when it
// has one; replay: only from the cache, a miss is an error (offline, costs nothing).
enum class CacheMode { kLive, kCache, kReplay };
// Named by --llm and [llm] cache, stored with a run's launch: a value's text never changes.
inline constexpr EnumText<CacheMode> kCacheModeTexts[] = {
    {CacheMode::kLive, "live"}, {CacheMode::kCache, "cache"}, {CacheMode::kReplay, "replay"}};
const char* to_string(CacheMode m);
std::optional<CacheMode> parse_cache_mode(std::string_view s);  // nullopt for other text

struct LlmConfig {
  std::vector<std::string> models;  // specs; more than one makes an ensemble
  std::vector<double> weights;      // per model; empty means equal
  std::string selection = "thompson";  // "weighted", "thompson" or "ucb" (see ensemble.h)
  ModelOptions defaults{.max_tokens = 16384};
  std::map<std::string, ModelOptions> per_model;  // keyed by model spec text
  std::map<std::string, ProviderConfig> providers;
  RetryPolicy retry;
  double connect_timeout_s = 10;
  double timeout_s = 600;
  // The largest answer body accepted (after decompression); a larger one is a [fatal] error and
  // is never parsed, cached or put into a prompt. Answers are bounded by max_tokens (16384 tokens
  // is ~64 KiB of text), so 4 MiB leaves room for any real answer and its JSON.
  int64_t max_response_bytes = int64_t{4} << 20;
  CacheMode cache = CacheMode::kCache;
  BudgetLimits budget;
  std::map<std::string, Price> prices;  // overrides of the built-in table
  std::string key_file;  // dotenv-style NAME=value lines; empty: none

  // The options for one model: per-model values over the defaults.
  ModelOptions options_for(const std::string& spec) const;
};

LlmConfig default_config();
// Reads the [llm] table of a TOML file (or its top level when there is no [llm] table) over `base`.
Result<LlmConfig> load_config(const std::filesystem::path& path, LlmConfig base = default_config());
Result<LlmConfig> parse_config(std::string_view toml_text, LlmConfig base = default_config());
// One command-line override "key=value" with the file's keys, dotted: "budget.max_cost_usd=5",
// "providers.local.base_url=http://host:8000/v1", "reasoning_effort=high". Strings need no quotes.
Status apply_override(LlmConfig& cfg, std::string_view assignment);

}  // namespace kevo::llm
