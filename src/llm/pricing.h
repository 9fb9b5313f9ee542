// Dollars per million tokens for known models, turned into the cost of one answer.
// The built-in table is a snapshot of public list prices; the config overrides any entry.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "llm/types.h"

namespace kevo::llm {

struct Price {
  double input_per_mtok = 0;
  double output_per_mtok = 0;
  std::optional<double> cached_input_per_mtok;  // unset: cached input costs the full rate
};

class PriceTable {
 public:
  static PriceTable builtin();
  // `key` is a model name ("gpt-4.1") or a full spec ("openrouter:qwen/qwen3-coder").
  void set(const std::string& key, Price p) { prices_[key] = p; }
  // Full spec first, then the model name, then the longest built-in name the model starts with
  // (so dated snapshots like "claude-sonnet-4-5-20250929" find "claude-sonnet-4-5"). OpenRouter
  // names ("anthropic/claude-sonnet-4.5") are also tried without the vendor and with '-' for '.'.
  std::optional<Price> find(const std::string& spec_text, const std::string& model) const;
  const std::map<std::string, Price>& entries() const { return prices_; }

 private:
  std::map<std::string, Price> prices_;
};

double cost_usd(const Price& p, const Usage& u);

}  // namespace kevo::llm
