// Why a run stopped: a kind the engine and the reports act on, and for some kinds a detail for
// people (the model's or the checker's last message). The run database keeps it as text, "kind" or
// "kind: detail" (records.h RunRow::stop_reason); parse_stop_reason reads that text back, so
// nothing branches on a message's wording.
#pragma once

#include <string>
#include <string_view>

namespace kevo::store {

enum class StopKind {
  kNone,              // not stopped (yet)
  kInterrupted,       // the user's SIGINT
  kBudgetCandidates,  // the budgets of EngineOptions, in the order they are checked
  kBudgetCalls,
  kBudgetTokens,
  kBudgetUsd,
  kBudgetMinutes,
  kStagnation,        // no better candidate for `stagnation` proposals
  kNearSol,           // the best reached the fraction of the speed-of-light floor the budgets stop at
  kBudgetLlm,         // the LLM layer's own spending limit
  kReplayExhausted,   // --llm replay ran out of recorded answers
  kLlmFatal,          // an LLM error no retry fixes (bad key, unknown model)
  kLlmFailures,       // too many LLM failures in a row
  kInfraError,        // three infra_error verdicts in a row
  kNothingToTune,     // offline tuning: the baseline marks no constant tunable
  kTuningDone,        // offline tuning: every combination tried
  kBaselineFailed,    // the task's baseline failed its check
  kTranslated,        // translation: a baseline was written (kevo translate)
  kTranslateRounds,   // translation: every round's kernel failed its check
  kLlmFailed,         // translation: the model gave no usable answer
  kAgentClientGone,   // an agent session: the client left (stdin closed, session deleted, idle)
  kAgentShutdown,     // an agent session: the server was stopped
  kAgentWallTime,     // an agent session: its wall-time budget passed
  kOther,             // text this build does not know (an older or newer kevo wrote it)
};

const char* to_string(StopKind k);

struct StopReason {
  StopKind kind = StopKind::kNone;
  std::string detail;

  bool empty() const { return kind == StopKind::kNone; }
  // Stopped by a failure rather than by a budget or the user: the run's status is kFailed.
  bool failed() const;
  std::string text() const;  // as stored: "kind" or "kind: detail" (kOther: the detail as read)
};

StopReason parse_stop_reason(std::string_view text);

}  // namespace kevo::store
