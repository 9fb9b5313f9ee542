#include "store/stop_reason.h"

#include <array>
#include <utility>

namespace kevo::store {
namespace {

constexpr std::array<std::pair<StopKind, const char*>, 22> kNames{{
    {StopKind::kInterrupted, "interrupted"},
    {StopKind::kBudgetCandidates, "budget_candidates"},
    {StopKind::kBudgetCalls, "budget_calls"},
    {StopKind::kBudgetTokens, "budget_tokens"},
    {StopKind::kBudgetUsd, "budget_usd"},
    {StopKind::kBudgetMinutes, "budget_minutes"},
    {StopKind::kStagnation, "stagnation"},
    {StopKind::kBudgetLlm, "budget_llm"},
    {StopKind::kReplayExhausted, "replay_exhausted"},
    {StopKind::kLlmFatal, "llm_fatal"},
    {StopKind::kLlmFailures, "llm_failures"},
    {StopKind::kInfraError, "infra_error"},
    {StopKind::kNothingToTune, "nothing_to_tune"},
    {StopKind::kTuningDone, "tuning_done"},
    {StopKind::kBaselineFailed, "baseline_failed"},
    {StopKind::kTranslated, "translated"},
    {StopKind::kTranslateRounds, "translate_rounds_exhausted"},
    {StopKind::kLlmFailed, "llm_failed"},
    {StopKind::kAgentClientGone, "agent_client_gone"},
    {StopKind::kAgentShutdown, "agent_shutdown"},
    {StopKind::kAgentWallTime, "agent_wall_time"},
    {StopKind::kOther, "other"},
}};

}  // namespace

const char* to_string(StopKind k) {
  for (const auto& [kind, name] : kNames)
    if (kind == k) return name;
  return "";
}

bool StopReason::failed() const {
  return kind == StopKind::kLlmFatal || kind == StopKind::kInfraError || kind == StopKind::kBaselineFailed ||
         kind == StopKind::kTranslateRounds || kind == StopKind::kLlmFailed;
}

std::string StopReason::text() const {
  if (kind == StopKind::kNone) return {};
  if (kind == StopKind::kOther) return detail;
  std::string s = to_string(kind);
  return detail.empty() ? s : s + ": " + detail;
}

StopReason parse_stop_reason(std::string_view text) {
  if (text.empty()) return {};
  const size_t colon = text.find(':');
  const std::string_view head = text.substr(0, colon);
  for (const auto& [kind, name] : kNames) {
    if (kind == StopKind::kOther || head != name) continue;
    std::string_view rest = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
    if (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    return {kind, std::string(rest)};
  }
  return {StopKind::kOther, std::string(text)};
}

}  // namespace kevo::store
