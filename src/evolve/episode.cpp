#include "evolve/episode.h"

namespace kevo::evolve {

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

void EpisodeBroker::close(const std::string& why) {
  std::lock_guard lock(mu_);
  if (!closed_) closed_ = why;
  for (auto& w : waiting_) w.reply.set_value(fail("{}", why));
  waiting_.clear();
}

}  // namespace kevo::evolve
