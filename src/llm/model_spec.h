// What a person types to name a model: "provider:model" or "BASE_URL#model".
//   openai:gpt-4.1   anthropic:claude-sonnet-4-5   deepseek:deepseek-chat
//   openrouter:qwen/qwen3-coder   ollama:qwen2.5-coder:32b   http://localhost:8000/v1#qwen2.5-coder
// Providers declared in the config ([llm.providers.NAME]) are usable the same way.
#pragma once

#include <string>
#include <string_view>

#include "llm/config.h"
#include "util/result.h"

namespace kevo::llm {

struct ModelSpec {
  std::string text;  // canonical form, used in logs, the cache key and the price lookup
  std::string model;  // the name sent to the provider
  ProviderConfig provider;
};

Result<ModelSpec> parse_model_spec(std::string_view spec, const LlmConfig& cfg);

}  // namespace kevo::llm
