// Several models behind one LlmClient. Each call picks one member:
//   weighted  - at random in proportion to the configured weights;
//   thompson  - Thompson sampling: a Beta posterior per model over its reward, sampled each call;
//   ucb       - UCB1: mean reward plus an exploration bonus, untried models first.
// The engine reports each candidate's reward in [0, 1] (1: it improved on its parent, as in
// ShinkaEvolve's model bandit) with reward(); a failed call counts as reward 0. A weight of 0
// excludes a model; a model that fails with a fatal error (bad key, unknown model) is disabled.
#pragma once

#include <memory>
#include <mutex>
#include <random>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llm/client.h"

namespace kevo::llm {

enum class Selection { kWeighted, kThompson, kUcb };
const char* to_string(Selection s);                        // "weighted", "thompson", "ucb"
std::optional<Selection> parse_selection(std::string_view s);  // nullopt for other text

struct ArmStats {
  std::string model;
  double weight = 1;
  int64_t picks = 0;    // calls sent to this model
  int64_t rewards = 0;  // rewards reported (failures included)
  double reward_sum = 0;
  double share = 0;        // picks / all picks
  double probability = 0;  // the chance it is picked next (estimated for thompson)
  bool disabled = false;
  std::string disabled_reason;
  double mean_reward() const { return rewards ? reward_sum / static_cast<double>(rewards) : 0; }
};

class Ensemble final : public LlmClient {
 public:
  Ensemble(std::vector<std::unique_ptr<LlmClient>> members, std::vector<double> weights,
           Selection selection, uint64_t seed);

  Result<ChatResponse> chat(const ChatRequest& req, const CancelToken& cancel) override;
  const std::string& name() const override { return name_; }

  // Which member the next call would use (advances the random state); -1 if none is usable.
  int choose();
  Result<ChatResponse> chat_with(int member, const ChatRequest& req, const CancelToken& cancel);
  // The reward of a candidate produced by `model` (the ChatResponse's model field).
  void reward(const std::string& model, double r);

  std::vector<ArmStats> stats() const;
  std::string summary() const;  // a small table for logs and reports
  size_t size() const { return members_.size(); }

 private:
  int choose_locked();
  std::vector<double> probabilities_locked();
  std::vector<std::unique_ptr<LlmClient>> members_;
  std::string name_;
  Selection selection_;
  mutable std::mutex mu_;
  std::vector<ArmStats> arms_;
  std::mt19937_64 rng_;
};

// The run's model or ensemble from ctx->config.models, weights and selection.
Result<std::unique_ptr<Ensemble>> make_ensemble(std::shared_ptr<LlmContext> ctx);

}  // namespace kevo::llm
