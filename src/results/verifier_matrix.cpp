#include "results/verifier_matrix.h"

#include <map>
#include <set>

#include <fmt/format.h>

#include "results/stored_json.h"

namespace kevo::results {
namespace {

std::string ratio(std::optional<double> v) { return v ? fmt::format("{:.2f}", *v) : "n/a"; }

}  // namespace

CheckerTruth checker_truth(store::CandidateOutcome outcome) {
  using store::CandidateOutcome;
  switch (outcome) {
    case CandidateOutcome::kPass: return CheckerTruth::kPass;
    case CandidateOutcome::kCompileError:
    case CandidateOutcome::kIncorrect:
    case CandidateOutcome::kUnsafe:
    case CandidateOutcome::kTimeout:
    case CandidateOutcome::kCrash: return CheckerTruth::kFail;
    case CandidateOutcome::kInfraError:  // the checker reached no verdict
    case CandidateOutcome::kInvalidAnswer:
    case CandidateOutcome::kDuplicate:
    case CandidateOutcome::kUnknown: return CheckerTruth::kNone;
  }
  return CheckerTruth::kNone;
}

std::optional<double> VerifierMatrix::precision() const {
  if (tp + fp == 0) return std::nullopt;
  return static_cast<double>(tp) / static_cast<double>(tp + fp);
}

std::optional<double> VerifierMatrix::recall() const {
  if (tp + fn == 0) return std::nullopt;
  return static_cast<double>(tp) / static_cast<double>(tp + fn);
}

nlohmann::json VerifierMatrix::to_json() const {
  nlohmann::json j{{"models", models}, {"tp", tp}, {"fp", fp}, {"tn", tn}, {"fn", fn},
                   {"unanswered", unanswered}, {"no_verdict", no_verdict}, {"calls", calls},
                   {"input_tokens", input_tokens}, {"output_tokens", output_tokens}, {"cost_usd", cost_usd}};
  j["precision"] = precision() ? nlohmann::json(*precision()) : nlohmann::json();
  j["recall"] = recall() ? nlohmann::json(*recall()) : nlohmann::json();
  return j;
}

std::string VerifierMatrix::to_text() const {
  if (calls == 0) return {};
  std::string s = fmt::format("LLM verifier ({}) against the checker, {} candidates judged by both:\n", models, judged());
  s += fmt::format("  {:<16}{:>14}{:>14}\n", "", "checker fail", "checker pass");
  s += fmt::format("  {:<16}{:>14}{:>14}\n", "verifier FAIL", fmt::format("TP {}", tp), fmt::format("FP {}", fp));
  s += fmt::format("  {:<16}{:>14}{:>14}\n", "verifier PASS", fmt::format("FN {}", fn), fmt::format("TN {}", tn));
  s += fmt::format("  precision {} (its FAILs the checker confirmed), recall {} (checker failures it caught)\n",
                   ratio(precision()), ratio(recall()));
  s += fmt::format("  {} calls, {} + {} tokens, ${:.4f}", calls, input_tokens, output_tokens, cost_usd);
  if (unanswered) s += fmt::format("; {} without a verdict line or failed", unanswered);
  if (no_verdict) s += fmt::format("; {} the checker did not judge", no_verdict);
  return s + "\n";
}

VerifierMatrix verifier_matrix(const std::vector<store::EventRow>& events,
                               const std::vector<store::CandidateRow>& candidates) {
  std::map<int64_t, const store::CandidateRow*> by_id;
  for (const auto& c : candidates) by_id[c.id] = &c;
  VerifierMatrix m;
  std::set<std::string> models;
  for (const auto& e : events) {
    if (e.kind != kVerifierEvent) continue;
    const nlohmann::json j = nlohmann::json::parse(e.data_json, nullptr, false);
    if (!j.is_object()) continue;
    ++m.calls;
    m.input_tokens += integer(j, "input_tokens");
    m.output_tokens += integer(j, "output_tokens");
    m.cost_usd += number(j, "cost_usd");
    if (const std::string model = text(j, "model"); !model.empty()) models.insert(model);
    bool parsed = flag(j, "parsed") && flag(j, "answered");
    auto it = by_id.find(integer(j, "candidate"));
    CheckerTruth truth = it == by_id.end() ? CheckerTruth::kNone : checker_truth(it->second->outcome);
    if (truth == CheckerTruth::kNone) {
      ++m.no_verdict;
    } else if (!parsed) {
      ++m.unanswered;
    } else {
      bool said_fail = !flag(j, "pass");
      bool bad = truth == CheckerTruth::kFail;
      (said_fail ? (bad ? m.tp : m.fp) : (bad ? m.fn : m.tn)) += 1;
    }
  }
  for (const auto& x : models) m.models += (m.models.empty() ? "" : ", ") + x;
  return m;
}

}  // namespace kevo::results
