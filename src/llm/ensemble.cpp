#include "llm/ensemble.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "llm/errors.h"
#include "util/enum_text.h"

namespace kevo::llm {

namespace {

// Named by [llm] selection: a value's text never changes.
constexpr EnumText<Selection> kSelectionTexts[] = {
    {Selection::kWeighted, "weighted"}, {Selection::kThompson, "thompson"}, {Selection::kUcb, "ucb"}};

}  // namespace

const char* to_string(Selection s) { return enum_text(kSelectionTexts, s); }

std::optional<Selection> parse_selection(std::string_view s) { return enum_parse(kSelectionTexts, s); }

namespace {

double sample_beta(double a, double b, std::mt19937_64& rng) {
  double x = std::gamma_distribution<double>(a, 1.0)(rng);
  double y = std::gamma_distribution<double>(b, 1.0)(rng);
  return x + y > 0 ? x / (x + y) : 0.5;
}

bool usable(const ArmStats& a) { return !a.disabled && a.weight > 0; }

}  // namespace

Ensemble::Ensemble(std::vector<std::unique_ptr<LlmClient>> members, std::vector<double> weights,
                   Selection selection, uint64_t seed)
    : members_(std::move(members)), selection_(selection), rng_(seed) {
  for (size_t i = 0; i < members_.size(); ++i) {
    ArmStats a;
    a.model = members_[i]->name();
    a.weight = i < weights.size() ? weights[i] : 1.0;
    arms_.push_back(a);
    name_ += (i ? "+" : "") + a.model;
  }
}

std::vector<double> Ensemble::probabilities_locked() {
  std::vector<double> p(arms_.size(), 0.0);
  double total = 0;
  for (size_t i = 0; i < arms_.size(); ++i)
    if (usable(arms_[i])) total += arms_[i].weight;
  if (total <= 0) return p;
  if (selection_ == Selection::kWeighted) {
    for (size_t i = 0; i < arms_.size(); ++i)
      if (usable(arms_[i])) p[i] = arms_[i].weight / total;
    return p;
  }
  // For the bandits, estimate by simulating the choice on a private generator, so showing the
  // numbers does not change the run's own random sequence.
  std::mt19937_64 sim(12345);
  std::swap(sim, rng_);
  const int n = 2000;
  for (int k = 0; k < n; ++k) {
    int c = choose_locked();
    if (c >= 0) p[c] += 1.0 / n;
  }
  std::swap(sim, rng_);
  return p;
}

int Ensemble::choose_locked() {
  std::vector<size_t> live;
  for (size_t i = 0; i < arms_.size(); ++i)
    if (usable(arms_[i])) live.push_back(i);
  if (live.empty()) return -1;
  if (selection_ == Selection::kWeighted) {
    std::vector<double> w;
    for (size_t i : live) w.push_back(arms_[i].weight);
    return static_cast<int>(live[std::discrete_distribution<size_t>(w.begin(), w.end())(rng_)]);
  }
  if (selection_ == Selection::kThompson) {
    size_t best = live.front();
    double best_v = -1;
    for (size_t i : live) {
      const ArmStats& a = arms_[i];
      // Beta(1 + successes, 1 + failures) with fractional rewards.
      double v = sample_beta(1 + a.reward_sum, 1 + static_cast<double>(a.rewards) - a.reward_sum, rng_);
      if (v > best_v) {
        best_v = v;
        best = i;
      }
    }
    return static_cast<int>(best);
  }
  // UCB1 over reported rewards; untried models first, heaviest weight first.
  int64_t total = 0;
  for (size_t i : live) total += arms_[i].rewards;
  size_t best = live.front();
  double best_v = -1;
  for (size_t i : live) {
    const ArmStats& a = arms_[i];
    double v = a.rewards == 0 ? 1e9 + a.weight
                              : a.mean_reward() + std::sqrt(2.0 * std::log(static_cast<double>(total)) /
                                                            static_cast<double>(a.rewards));
    if (v > best_v) {
      best_v = v;
      best = i;
    }
  }
  return static_cast<int>(best);
}

int Ensemble::choose() {
  std::lock_guard lock(mu_);
  return choose_locked();
}

Result<ChatResponse> Ensemble::chat(const ChatRequest& req, const CancelToken& cancel) {
  return chat_with(choose(), req, cancel);
}

Result<ChatResponse> Ensemble::chat_with(int member, const ChatRequest& req, const CancelToken& cancel) {
  if (member < 0 || static_cast<size_t>(member) >= members_.size())
    return make_error(ErrorKind::kFatal, "no usable model left in the ensemble " + name_);
  {
    std::lock_guard lock(mu_);
    arms_[member].picks++;
  }
  auto r = members_[member]->chat(req, cancel);
  if (r) return r;
  const ErrorKind kind = error_kind(r.error());
  std::lock_guard lock(mu_);
  ArmStats& a = arms_[member];
  if (kind == ErrorKind::kFatal && members_.size() > 1) {
    a.disabled = true;
    a.disabled_reason = r.error().message;
    spdlog::error("ensemble: disabling {}: {}", a.model, r.error().message);
  } else if (kind == ErrorKind::kTransient || kind == ErrorKind::kRefusal) {
    a.rewards++;  // a failed call produced no improvement
  }
  return r;
}

void Ensemble::reward(const std::string& model, double r) {
  r = std::clamp(r, 0.0, 1.0);
  std::lock_guard lock(mu_);
  for (auto& a : arms_)
    if (a.model == model) {
      a.rewards++;
      a.reward_sum += r;
      return;
    }
  spdlog::warn("ensemble: reward for unknown model {}", model);
}

std::vector<ArmStats> Ensemble::stats() const {
  std::lock_guard lock(mu_);
  auto* self = const_cast<Ensemble*>(this);  // the estimate restores the generator it borrows
  std::vector<double> p = self->probabilities_locked();
  std::vector<ArmStats> out = arms_;
  int64_t picks = 0;
  for (const auto& a : arms_) picks += a.picks;
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].share = picks ? static_cast<double>(out[i].picks) / static_cast<double>(picks) : 0;
    out[i].probability = p[i];
  }
  return out;
}

std::string Ensemble::summary() const {
  static const char* kNames[] = {"weighted", "thompson", "ucb"};
  std::string s = fmt::format("models ({}):\n  {:<40} {:>6} {:>6} {:>7} {:>8} {:>8}\n",
                              kNames[static_cast<int>(selection_)], "model", "weight", "picks",
                              "share", "reward", "next-p");
  for (const auto& a : stats())
    s += fmt::format("  {:<40} {:>6.2f} {:>6} {:>6.1f}% {:>8.3f} {:>7.1f}%{}\n", a.model, a.weight,
                     a.picks, 100 * a.share, a.mean_reward(), 100 * a.probability,
                     a.disabled ? "  (disabled)" : "");
  return s;
}

Result<std::unique_ptr<Ensemble>> make_ensemble(std::shared_ptr<LlmContext> ctx) {
  const LlmConfig& cfg = ctx->config;
  if (cfg.models.empty())
    return make_error(ErrorKind::kFatal,
                      "no model configured: set llm.models (e.g. models = [\"openai:gpt-4.1\"]) or "
                      "pass one on the command line");
  if (!cfg.weights.empty() && cfg.weights.size() != cfg.models.size())
    return make_error(ErrorKind::kFatal,
                      fmt::format("llm.weights has {} entries for {} models", cfg.weights.size(),
                                  cfg.models.size()));
  auto sel = parse_selection(cfg.selection);
  if (!sel) return make_error(ErrorKind::kFatal, enum_unknown(kSelectionTexts, "model selection", cfg.selection));
  std::vector<std::unique_ptr<LlmClient>> members;
  for (const auto& spec : cfg.models) {
    auto c = make_client(spec, ctx);
    if (!c) return c.unexpected();
    members.push_back(std::move(*c));
  }
  return std::make_unique<Ensemble>(std::move(members), cfg.weights, *sel, ctx->seed ^ 0x9e3779b97f4a7c15ULL);
}

}  // namespace kevo::llm
