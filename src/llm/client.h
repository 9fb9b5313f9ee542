// The interface the evolution engine uses to ask a model, and the factory that builds one from a
// model spec. A client is thread-safe: many workers may call chat() at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "llm/budget.h"
#include "llm/cache.h"
#include "llm/cancel.h"
#include "llm/clock.h"
#include "llm/config.h"
#include "llm/pricing.h"
#include "llm/semaphore.h"
#include "llm/types.h"
#include "util/result.h"

namespace kevo::llm {

class LlmClient {
 public:
  virtual ~LlmClient() = default;
  // One answer, or an error whose kind (errors.h: error_kind) says what the caller should do.
  // Retries, backoff, the concurrency limit, the budget and the cache all happen inside.
  virtual Result<ChatResponse> chat(const ChatRequest& req, const CancelToken& cancel) = 0;
  // The model spec, e.g. "openai:gpt-4.1".
  virtual const std::string& name() const = 0;
};

// What every client of a run shares: settings, prices, budget, cache, concurrency limits.
struct LlmContext {
  LlmConfig config;
  PriceTable prices;  // built-in table with the config's overrides applied
  Clock* clock = &real_clock();
  std::shared_ptr<Budget> budget;
  std::shared_ptr<ResponseCache> cache;  // null: nothing is cached or replayed
  ConcurrencyLimits limits;
  uint64_t seed = 0;  // for backoff jitter and ensemble choices
};

struct ContextOptions {
  std::shared_ptr<ResponseCache> cache;
  Clock* clock = nullptr;  // null: the real clock
  uint64_t seed = 0;       // 0: random
};

std::shared_ptr<LlmContext> make_context(LlmConfig config, ContextOptions opts = {});

// A client for one model spec. Fails with a [fatal] error for a bad spec, a missing key, or
// replay mode without a cache.
Result<std::unique_ptr<LlmClient>> make_client(const std::string& spec,
                                               std::shared_ptr<LlmContext> ctx);

}  // namespace kevo::llm
