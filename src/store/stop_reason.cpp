#include "store/stop_reason.h"

#include "util/enum_text.h"

namespace kevo::store {
namespace {

// kNone has no row: a run not stopped stores no text.
constexpr EnumText<StopKind> kStopKindTexts[] = {
    {StopKind::kInterrupted, "interrupted"},
    {StopKind::kBudgetCandidates, "budget_candidates"},
    {StopKind::kBudgetCalls, "budget_calls"},
    {StopKind::kBudgetTokens, "budget_tokens"},
    {StopKind::kBudgetUsd, "budget_usd"},
    {StopKind::kBudgetMinutes, "budget_minutes"},
    {StopKind::kStagnation, "stagnation"},
    {StopKind::kNearSol, "near_sol"},
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
};

}  // namespace

const char* to_string(StopKind k) { return enum_text(kStopKindTexts, k, ""); }

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
  const auto kind = enum_parse(kStopKindTexts, head);
  if (!kind || *kind == StopKind::kOther) return {StopKind::kOther, std::string(text)};  // kept as it was read
  std::string_view rest = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  if (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  return {*kind, std::string(rest)};
}

}  // namespace kevo::store
