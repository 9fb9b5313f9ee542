#include "llm/pricing.h"

#include <algorithm>

namespace kevo::llm {

PriceTable PriceTable::builtin() {
  // USD per 1M tokens (input, output, cached input), list prices as published in 2025.
  // Prices change: override them under [llm.prices] rather than trusting this list.
  PriceTable t;
  auto add = [&](const char* k, double in, double out, std::optional<double> cached) {
    t.set(k, Price{in, out, cached});
  };
  add("gpt-5", 1.25, 10.0, 0.125);
  add("gpt-5-mini", 0.25, 2.0, 0.025);
  add("gpt-5-nano", 0.05, 0.40, 0.005);
  add("gpt-4.1", 2.0, 8.0, 0.50);
  add("gpt-4.1-mini", 0.40, 1.60, 0.10);
  add("gpt-4.1-nano", 0.10, 0.40, 0.025);
  add("gpt-4o", 2.50, 10.0, 1.25);
  add("gpt-4o-mini", 0.15, 0.60, 0.075);
  add("o3", 2.0, 8.0, 0.50);
  add("o3-mini", 1.10, 4.40, 0.55);
  add("o4-mini", 1.10, 4.40, 0.275);
  add("o1", 15.0, 60.0, 7.50);
  add("claude-opus-4-5", 5.0, 25.0, 0.50);
  add("claude-opus-4-1", 15.0, 75.0, 1.50);
  add("claude-opus-4", 15.0, 75.0, 1.50);
  add("claude-sonnet-4-5", 3.0, 15.0, 0.30);
  add("claude-sonnet-4", 3.0, 15.0, 0.30);
  add("claude-3-7-sonnet", 3.0, 15.0, 0.30);
  add("claude-haiku-4-5", 1.0, 5.0, 0.10);
  add("claude-3-5-haiku", 0.80, 4.0, 0.08);
  add("deepseek-chat", 0.27, 1.10, 0.07);
  add("deepseek-reasoner", 0.55, 2.19, 0.14);
  return t;
}

std::optional<Price> PriceTable::find(const std::string& spec_text, const std::string& model) const {
  if (auto it = prices_.find(spec_text); it != prices_.end()) return it->second;
  std::vector<std::string> names{model};
  if (auto slash = model.rfind('/'); slash != std::string::npos) {
    std::string bare = model.substr(slash + 1);
    names.push_back(bare);
    std::replace(bare.begin(), bare.end(), '.', '-');
    names.push_back(bare);
  }
  for (const auto& n : names)
    if (auto it = prices_.find(n); it != prices_.end()) return it->second;
  // Longest prefix followed by '-': "gpt-4.1-2025-04-14" is gpt-4.1, but "gpt-4.1-mini" has an
  // entry of its own that wins by length.
  const Price* best = nullptr;
  size_t best_len = 0;
  for (const auto& n : names)
    for (const auto& [k, p] : prices_)
      if (k.size() > best_len && n.size() > k.size() && n.starts_with(k) && n[k.size()] == '-') {
        best = &p;
        best_len = k.size();
      }
  if (best) return *best;
  return std::nullopt;
}

double cost_usd(const Price& p, const Usage& u) {
  const double cached = static_cast<double>(std::min(u.cached_input_tokens, u.input_tokens));
  const double fresh = static_cast<double>(u.input_tokens) - cached;
  const double cached_rate = p.cached_input_per_mtok.value_or(p.input_per_mtok);
  return (fresh * p.input_per_mtok + cached * cached_rate +
          static_cast<double>(u.output_tokens) * p.output_per_mtok) /
         1e6;
}

}  // namespace kevo::llm
