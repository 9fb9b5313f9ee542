#include "llm/budget.h"

#include "llm/errors.h"

namespace kevo::llm {

std::optional<std::string> Budget::exhausted_locked() const {
  if (limits_.max_calls && total_.calls + in_flight_ >= *limits_.max_calls)
    return fmt::format("the call budget is spent: {} of {} calls used{}; raise "
                       "llm.budget.max_calls to continue",
                       total_.calls, *limits_.max_calls,
                       in_flight_ ? fmt::format(" ({} in flight)", in_flight_) : "");
  const int64_t tokens = total_.input_tokens + total_.output_tokens;
  if (limits_.max_tokens && tokens >= *limits_.max_tokens)
    return fmt::format("the token budget is spent: {} of {} tokens used; raise "
                       "llm.budget.max_tokens to continue",
                       tokens, *limits_.max_tokens);
  if (limits_.max_cost_usd && total_.cost_usd >= *limits_.max_cost_usd)
    return fmt::format("the money budget is spent: ${:.4f} of ${:.2f} used; raise "
                       "llm.budget.max_cost_usd to continue",
                       total_.cost_usd, *limits_.max_cost_usd);
  return std::nullopt;
}

Status Budget::reserve() {
  std::lock_guard lock(mu_);
  if (auto why = exhausted_locked()) return make_error(ErrorKind::kBudget, *why);
  ++in_flight_;
  return {};
}

void Budget::release() {
  std::lock_guard lock(mu_);
  if (in_flight_ > 0) --in_flight_;
}

void Budget::commit(const std::string& model, const Usage& u, double cost, bool cost_known,
                    double latency_s) {
  std::lock_guard lock(mu_);
  if (in_flight_ > 0) --in_flight_;
  for (ModelTotals* t : {&total_, &per_model_[model]}) {
    t->calls += 1;
    t->input_tokens += u.input_tokens;
    t->output_tokens += u.output_tokens;
    t->reasoning_tokens += u.reasoning_tokens;
    t->cost_usd += cost;
    t->cost_unknown = t->cost_unknown || !cost_known;
    t->latency_s += latency_s;
  }
}

void Budget::note_failure(const std::string& model) {
  std::lock_guard lock(mu_);
  total_.failures++;
  per_model_[model].failures++;
}

void Budget::note_retry(const std::string& model) {
  std::lock_guard lock(mu_);
  total_.retries++;
  per_model_[model].retries++;
}

void Budget::note_cache_hit(const std::string& model) {
  std::lock_guard lock(mu_);
  total_.cache_hits++;
  per_model_[model].cache_hits++;
}

ModelTotals Budget::totals() const {
  std::lock_guard lock(mu_);
  return total_;
}

std::map<std::string, ModelTotals> Budget::per_model() const {
  std::lock_guard lock(mu_);
  return per_model_;
}

}  // namespace kevo::llm
