#include "evolve/episode.h"

#include <algorithm>

#include <fmt/format.h>

namespace kevo::evolve {

void EpisodeBroker::set_spend(SpendLimits limits, int64_t recorded_tokens, double recorded_usd) {
  std::lock_guard lock(mu_);
  limits_ = limits;
  recorded_tokens_ = recorded_tokens;
  recorded_usd_ = recorded_usd;
}

Status EpisodeBroker::over_locked() const {
  const int64_t t = recorded_tokens_ + flying_tokens_;
  const double usd = recorded_usd_ + flying_usd_;
  if (limits_.tokens && t >= *limits_.tokens)
    return fail("the run's token budget is reached ({} of {}, episodes in flight included)", t, *limits_.tokens);
  if (limits_.usd && usd >= *limits_.usd)
    return fail("the run's money budget is reached (${:.4f} of ${:.4f}, episodes in flight included)", usd, *limits_.usd);
  return {};
}

Status EpisodeBroker::charge(int64_t tokens, double usd) {
  std::lock_guard lock(mu_);
  flying_tokens_ += tokens;
  flying_usd_ += usd;
  return over_locked();
}

Status EpisodeBroker::can_spend() const {
  std::lock_guard lock(mu_);
  return over_locked();
}

void EpisodeBroker::settle(int64_t tokens, double usd) {
  std::lock_guard lock(mu_);
  flying_tokens_ -= tokens;
  flying_usd_ -= usd;
}

int64_t EpisodeBroker::tokens_in_flight() const {
  std::lock_guard lock(mu_);
  return flying_tokens_;
}

double EpisodeBroker::usd_in_flight() const {
  std::lock_guard lock(mu_);
  return flying_usd_;
}

Result<EpisodeResult> EpisodeBroker::call(EpisodeRequest r) {
  std::future<Result<EpisodeResult>> answer;
  {
    std::lock_guard lock(mu_);
    if (closed_) return fail("{}", *closed_);
    Waiting w{std::move(r), {}};
    answer = w.reply.get_future();
    waiting_.push_back(std::move(w));
  }
  return answer.get();
}

std::optional<EpisodeBroker::Waiting> EpisodeBroker::take() {
  std::lock_guard lock(mu_);
  if (waiting_.empty()) return std::nullopt;
  Waiting w = std::move(waiting_.front());
  waiting_.pop_front();
  return w;
}

std::optional<EpisodeBroker::Waiting> EpisodeBroker::take_first(
    const std::function<bool(const EpisodeRequest&)>& pick) {
  std::lock_guard lock(mu_);
  auto it = std::find_if(waiting_.begin(), waiting_.end(), [&](const Waiting& w) { return pick(w.request); });
  if (it == waiting_.end()) return std::nullopt;
  Waiting w = std::move(*it);
  waiting_.erase(it);
  return w;
}

bool EpisodeBroker::has_waiting() const {
  std::lock_guard lock(mu_);
  return !waiting_.empty();
}

void EpisodeBroker::close(const std::string& why) {
  std::lock_guard lock(mu_);
  if (!closed_) closed_ = why;
  for (auto& w : waiting_) w.reply.set_value(fail("{}", why));
  waiting_.clear();
}

std::optional<std::string> EpisodeBroker::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

}  // namespace kevo::evolve
