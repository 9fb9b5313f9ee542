// Limits on calls, tokens and money for a run, and the running totals per model.
// A spent budget refuses new calls; calls already in flight finish and are counted, so the
// token and money totals can pass a limit by at most the calls that were in flight.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "llm/types.h"
#include "util/result.h"

namespace kevo::llm {

struct BudgetLimits {
  std::optional<int64_t> max_calls;
  std::optional<int64_t> max_tokens;
  std::optional<double> max_cost_usd;
};

struct ModelTotals {
  int64_t calls = 0;       // billed answers
  int64_t failures = 0;    // calls that ended in an error
  int64_t retries = 0;     // extra attempts
  int64_t cache_hits = 0;  // answers served from the cache (free)
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  int64_t reasoning_tokens = 0;
  double cost_usd = 0;
  bool cost_unknown = false;  // some answer had no price
  double latency_s = 0;       // summed over billed answers
};

class Budget {
 public:
  explicit Budget(BudgetLimits limits = {}) : limits_(limits) {}
  // Before a call: fails with a [budget] error when a limit is reached; otherwise the call is
  // in flight and counts against max_calls until commit() or release().
  Status reserve();
  // The reserved call produced no billed answer (failed, cancelled).
  void release();
  // The reserved call's answer arrived.
  void commit(const std::string& model, const Usage& u, double cost, bool cost_known, double latency_s);
  void note_failure(const std::string& model);
  void note_retry(const std::string& model);
  void note_cache_hit(const std::string& model);

  ModelTotals totals() const;
  std::map<std::string, ModelTotals> per_model() const;
  const BudgetLimits& limits() const { return limits_; }

 private:
  std::optional<std::string> exhausted_locked() const;
  BudgetLimits limits_;
  mutable std::mutex mu_;
  int64_t in_flight_ = 0;
  ModelTotals total_;
  std::map<std::string, ModelTotals> per_model_;
};

}  // namespace kevo::llm
