// Every enum's text, as run databases, JSON and logs hold it: each value's text is exactly the one
// listed here (written out by hand from the texts stored runs hold, so a change breaks this test,
// not a stored run), no two values share one, and where the enum has a parse the text reads back
// as the value. The helper itself (util/enum_text.h) is tested first. (DType keeps a table of its own
// with every name a dtype goes by: task/dtype.h, tested in tests/task.)
#include "util/enum_text.h"

#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <cstdlib>

#include "bench/suite_runner.h"
#include "check/intake.h"
#include "check/kernel_profile.h"
#include "check/oracle_check.h"
#include "check/outcome.h"
#include "check/outside_clock.h"
#include "check/reason.h"
#include "check/verdict.h"
#include "compile/include_rules.h"
#include "compile/sandbox.h"
#include "evolve/population.h"
#include "evolve/strategy.h"
#include "interop/backward_skip.h"
#include "interop/import_backward.h"
#include "lint/lint.h"
#include "llm/config.h"
#include "llm/ensemble.h"
#include "llm/errors.h"
#include "llm/types.h"
#include "results/verdict_view.h"
#include "run/runner_pool.h"
#include "store/records.h"
#include "store/stop_reason.h"
#include "util/error_code.h"
#include "util/gpu_util_sampler.h"

namespace kevo {
namespace {

enum class Color { kRed, kGreen, kBlue, kUnlisted };
constexpr EnumText<Color> kColorTexts[] = {
    {Color::kRed, "red"}, {Color::kGreen, "green"}, {Color::kBlue, "blue"}, {Color::kRed, "rouge"}};

TEST(EnumText, AValuesFirstRowIsItsTextAndEveryRowParses) {
  static_assert(enum_text(kColorTexts, Color::kGreen)[0] == 'g');  // usable in constant expressions
  EXPECT_STREQ(enum_text(kColorTexts, Color::kRed), "red");
  EXPECT_STREQ(enum_text(kColorTexts, Color::kUnlisted), "?");
  EXPECT_STREQ(enum_text(kColorTexts, Color::kUnlisted, "none"), "none");
  EXPECT_EQ(enum_parse(kColorTexts, "blue"), Color::kBlue);
  EXPECT_EQ(enum_parse(kColorTexts, "rouge"), Color::kRed);
  for (const char* other : {"", "Red", "red ", "?", "purple"}) EXPECT_EQ(enum_parse(kColorTexts, other), std::nullopt);
}

TEST(EnumText, ChoicesNameEachValueOnce) {
  EXPECT_EQ(enum_choices(kColorTexts), "red, green, blue");
  constexpr EnumText<Color> one[] = {{Color::kRed, "red"}};
  EXPECT_EQ(enum_choices(one), "red");
  EXPECT_EQ(enum_unknown(kColorTexts, "color", "purple"), "unknown color 'purple' (red, green, blue)");
}

template <typename E>
using Rows = std::vector<std::pair<E, std::string>>;

template <typename E, typename ToText>
void expect_texts(const Rows<E>& rows, ToText to_text) {
  std::set<std::string> seen;
  for (const auto& [value, text] : rows) {
    EXPECT_EQ(std::string(to_text(value)), text) << "value " << static_cast<int>(value);
    EXPECT_TRUE(seen.insert(text).second) << "'" << text << "' is the text of two values";
  }
}

template <typename E, typename ToText, typename Parse>
void expect_round_trip(const Rows<E>& rows, ToText to_text, Parse parse) {
  expect_texts(rows, to_text);
  for (const auto& [value, text] : rows) EXPECT_EQ(parse(text), std::optional<E>(value)) << text;
}

// ---- store ---------------------------------------------------------------------------------------

TEST(EnumTexts, RunStatus) {
  using store::RunStatus;
  const Rows<RunStatus> rows = {{RunStatus::kRunning, "running"},
                                {RunStatus::kFinished, "finished"},
                                {RunStatus::kInterrupted, "interrupted"},
                                {RunStatus::kFailed, "failed"}};
  expect_round_trip(rows, [](RunStatus s) { return store::to_string(s); }, store::parse_run_status);
  EXPECT_EQ(store::parse_run_status("paused"), std::nullopt);
}

TEST(EnumTexts, CandidateOutcome) {
  using store::CandidateOutcome;
  const Rows<CandidateOutcome> rows = {{CandidateOutcome::kPass, "pass"},
                                       {CandidateOutcome::kCompileError, "compile_error"},
                                       {CandidateOutcome::kIncorrect, "incorrect"},
                                       {CandidateOutcome::kUnsafe, "unsafe"},
                                       {CandidateOutcome::kTimeout, "timeout"},
                                       {CandidateOutcome::kCrash, "crash"},
                                       {CandidateOutcome::kInfraError, "infra_error"},
                                       {CandidateOutcome::kInvalidAnswer, "invalid_answer"},
                                       {CandidateOutcome::kDuplicate, "duplicate"}};
  EXPECT_EQ(rows.size(), size_t(CandidateOutcome::kDuplicate));  // every value but kUnknown
  expect_round_trip(rows, [](CandidateOutcome o) { return store::to_string(o); }, store::parse_candidate_outcome);
  EXPECT_STREQ(store::to_string(CandidateOutcome::kUnknown), "unknown");
  EXPECT_EQ(store::parse_candidate_outcome("unknown"), std::nullopt);  // text this build does not know
}

TEST(EnumTexts, JobState) {
  using store::JobState;
  const Rows<JobState> rows = {
      {JobState::kQueued, "queued"}, {JobState::kClaimed, "claimed"}, {JobState::kDone, "done"}, {JobState::kFailed, "failed"}};
  expect_round_trip(rows, [](JobState s) { return store::to_string(s); }, store::parse_job_state);
}

TEST(EnumTexts, StopKind) {
  using store::StopKind;
  const Rows<StopKind> rows = {{StopKind::kInterrupted, "interrupted"},
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
                               {StopKind::kOther, "other"}};
  expect_texts(rows, [](StopKind k) { return store::to_string(k); });
  EXPECT_STREQ(store::to_string(StopKind::kNone), "");
  for (const auto& [kind, text] : rows) {
    if (kind == StopKind::kOther) continue;  // "other" is text kept as it was read
    EXPECT_EQ(store::parse_stop_reason(text).kind, kind) << text;
    EXPECT_EQ(store::parse_stop_reason(text + ": why").text(), text + ": why");
  }
  EXPECT_EQ(store::parse_stop_reason("other").kind, StopKind::kOther);
  EXPECT_EQ(store::parse_stop_reason("from a newer kevo").text(), "from a newer kevo");
}

// ---- the other folders ------------------------------------------------------------------------

TEST(EnumTexts, Reason) {
  const Rows<Reason> rows = {
      {Reason::kNone, ""},
      {Reason::kCompile, "compile"},
      {Reason::kLoad, "load"},
      {Reason::kIntakeTooLarge, "intake:too_large"},
      {Reason::kIntakeNotUtf8, "intake:not_utf8"},
      {Reason::kIntakeEmpty, "intake:empty"},
      {Reason::kIntakeNoForward, "intake:no_kevo_forward"},
      {Reason::kIntakeSeveralForwards, "intake:several_kevo_forward"},
      {Reason::kIntakeNotExported, "intake:kevo_forward_not_exported"},
      {Reason::kMismatch, "mismatch"},
      {Reason::kNan, "nan"},
      {Reason::kUnwritten, "unwritten"},
      {Reason::kNondeterministic, "nondeterministic"},
      {Reason::kInputModified, "input_modified"},
      {Reason::kTimedOutput, "timed_output"},
      {Reason::kSanitizerMemcheck, "sanitizer:memcheck"},
      {Reason::kSanitizerRacecheck, "sanitizer:racecheck"},
      {Reason::kSanitizerInitcheck, "sanitizer:initcheck"},
      {Reason::kStatic, "static"},
      {Reason::kForeignStream, "foreign_stream"},
      {Reason::kStreamCreated, "stream_created"},
      {Reason::kAllocLimit, "alloc_limit"},
      {Reason::kGuard, "guard"},
      {Reason::kHiddenWork, "hidden_work"},
      {Reason::kHostThread, "host_thread"},
      {Reason::kDeviceState, "device_state"},
      {Reason::kTimingForged, "timing_forged"},
      {Reason::kBelowSol, "below_sol"},
      {Reason::kTimeout, "timeout"},
      {Reason::kCompileTimeout, "compile_timeout"},
      {Reason::kSignal, "signal"},
      {Reason::kAbort, "abort"},
      {Reason::kExit, "exit"},
      {Reason::kIllegalAddress, "illegal_address"},
      {Reason::kCudaError, "cuda_error"},
      {Reason::kLaunchError, "launch_error"},
      {Reason::kReturnedError, "returned_error"},
      {Reason::kRunner, "runner"},
      {Reason::kNoGpu, "no_gpu"},
      {Reason::kTask, "task"},
      {Reason::kInput, "input"},
      {Reason::kCompiler, "compiler"},
      {Reason::kBaseline, "baseline"},
      {Reason::kTorch, "torch"},
      {Reason::kReference, "reference"},
      {Reason::kOracle, "oracle"},
      {Reason::kCompare, "compare"},
      {Reason::kMemory, "memory"},
      {Reason::kGpuBusy, "gpu_busy"},
      {Reason::kTimingNoisy, "timing_noisy"},
      {Reason::kJobLost, "job_lost"},
      {Reason::kJobResult, "job_result"},
      {Reason::kJobPayload, "job_payload"},
      {Reason::kJobTask, "job_task"},
      {Reason::kJobSource, "job_source"},
      {Reason::kWorkerKind, "worker_kind"},
      {Reason::kWorkerDisk, "worker_disk"},
      {Reason::kEvaluator, "evaluator"},
      {Reason::kTimedOutputUnchecked, "timed_output_unchecked"},
      {Reason::kTimingFloored, "timing_floored"},
      {Reason::kTimingRetimed, "timing_retimed"},
      {Reason::kTimingRaced, "timing_raced"},
      {Reason::kTimingUnconfirmed, "timing_unconfirmed"},
      {Reason::kBaselineSlowed, "baseline_slowed"},
      {Reason::kSandboxUnavailable, "sandbox_unavailable"},
      {Reason::kSolUnavailable, "sol_unavailable"},
      {Reason::kDuplicate, "duplicate"},
      {Reason::kNoCode, "no_code"},
      {Reason::kEditFailed, "edit_failed"},
      {Reason::kIo, "io"}};
  EXPECT_EQ(rows.size(), size_t(kReasonCount));
  expect_round_trip(rows, [](Reason r) { return to_string(r); }, parse_reason);
  EXPECT_EQ(parse_reason("static:streams"), Reason::kStatic);
  EXPECT_EQ(parse_reason("from_a_newer_kevo"), std::nullopt);
}

TEST(EnumTexts, Outcome) {
  const Rows<Outcome> rows = {
      {Outcome::Pass, "pass"},
      {Outcome::CompileError, "compile_error"},
      {Outcome::Incorrect, "incorrect"},
      {Outcome::Unsafe, "unsafe"},
      {Outcome::Timeout, "timeout"},
      {Outcome::Crash, "crash"},
      {Outcome::InfraError, "infra_error"}};
  EXPECT_EQ(rows.size(), size_t(Outcome::InfraError) + 1);
  expect_round_trip(rows, outcome_name, parse_outcome);
}

TEST(EnumTexts, ProfileStatus) {
  const Rows<ProfileStatus> rows = {
      {ProfileStatus::kProfiled, "profiled"},
      {ProfileStatus::kNoNcu, "no_ncu"},
      {ProfileStatus::kNoPermission, "no_permission"},
      {ProfileStatus::kFailed, "failed"}};
  expect_round_trip(rows, [](ProfileStatus s) { return to_string(s); }, parse_profile_status);
}

TEST(EnumTexts, EvalPhase) {
  const Rows<EvalPhase> rows = {
      {EvalPhase::kSetup, "setup"},
      {EvalPhase::kCorrectness, "correctness"},
      {EvalPhase::kTiming, "timing"},
      {EvalPhase::kSanitize, "sanitize"},
      {EvalPhase::kProfile, "profile"},
      {EvalPhase::kPytorch, "pytorch"}};
  EXPECT_EQ(rows.size(), size_t(EvalPhase::kPytorch) + 1);
  expect_texts(rows, [](EvalPhase p) { return to_string(p); });
}

TEST(EnumTexts, CheckedAgainst) {
  const Rows<CheckedAgainst> rows = {
      {CheckedAgainst::kOracle, "oracle"},
      {CheckedAgainst::kConsistency, "consistency"}};
  expect_texts(rows, [](CheckedAgainst a) { return to_string(a); });
}

TEST(EnumTexts, IntakeCode) {
  const Rows<IntakeCode> rows = {
      {IntakeCode::TooLarge, "too_large"},
      {IntakeCode::NotUtf8, "not_utf8"},
      {IntakeCode::Empty, "empty"},
      {IntakeCode::NoForward, "no_kevo_forward"},
      {IntakeCode::SeveralForwards, "several_kevo_forward"},
      {IntakeCode::NotExported, "kevo_forward_not_exported"}};
  EXPECT_EQ(rows.size(), size_t(IntakeCode::NotExported) + 1);
  expect_texts(rows, [](IntakeCode c) { return to_string(c); });
}

TEST(EnumTexts, OutsideVerdict) {
  const Rows<OutsideVerdict> rows = {
      {OutsideVerdict::Agree, "agree"},
      {OutsideVerdict::Forged, "forged"},
      {OutsideVerdict::Inconclusive, "inconclusive"},
      {OutsideVerdict::Unmeasured, "unmeasured"}};
  expect_round_trip(rows, [](OutsideVerdict v) { return to_string(v); }, parse_outside_verdict);
}

TEST(EnumTexts, OracleCheckReason) {
  const Rows<OracleCheckReason> rows = {
      {OracleCheckReason::kOk, "ok"},
      {OracleCheckReason::kOracleFailed, "oracle_failed"},
      {OracleCheckReason::kInfraError, "infra_error"},
      {OracleCheckReason::kShapeMismatch, "shape_mismatch"},
      {OracleCheckReason::kNonFinite, "nonfinite"},
      {OracleCheckReason::kAllZero, "all_zero"},
      {OracleCheckReason::kUnwritten, "unwritten"},
      {OracleCheckReason::kNondeterministic, "nondeterministic"}};
  EXPECT_EQ(rows.size(), size_t(OracleCheckReason::kNondeterministic) + 1);
  expect_texts(rows, [](OracleCheckReason r) { return to_string(r); });
}

TEST(EnumTexts, Against) {
  const Rows<results::Against> rows = {
      {results::Against::kOracle, "oracle"},
      {results::Against::kConsistency, "consistency"}};
  expect_round_trip(rows, [](results::Against a) { return results::to_string(a); }, results::parse_against);
}

TEST(EnumTexts, Op) {
  const Rows<evolve::Op> rows = {
      {evolve::Op::kInit, "init"},
      {evolve::Op::kMutate, "mutate"},
      {evolve::Op::kCrossover, "crossover"},
      {evolve::Op::kRewrite, "rewrite"},
      {evolve::Op::kDiffEdit, "diff_edit"},
      {evolve::Op::kRepair, "repair"},
      {evolve::Op::kTune, "tune"},
      {evolve::Op::kAgent, "agent"}};
  EXPECT_EQ(rows.size(), size_t(evolve::Op::kAgent) + 1);
  expect_round_trip(rows, [](evolve::Op o) { return evolve::to_string(o); }, evolve::parse_op);
}

TEST(EnumTexts, PolicyKind) {
  const Rows<evolve::PolicyKind> rows = {
      {evolve::PolicyKind::kSingleBest, "single-best"},
      {evolve::PolicyKind::kElite, "elite"},
      {evolve::PolicyKind::kIslands, "islands"},
      {evolve::PolicyKind::kMapElites, "map-elites"}};
  expect_round_trip(rows, [](evolve::PolicyKind k) { return evolve::to_string(k); }, evolve::parse_policy);
}

TEST(EnumTexts, CacheMode) {
  const Rows<llm::CacheMode> rows = {
      {llm::CacheMode::kLive, "live"},
      {llm::CacheMode::kCache, "cache"},
      {llm::CacheMode::kReplay, "replay"}};
  expect_round_trip(rows, [](llm::CacheMode m) { return llm::to_string(m); }, llm::parse_cache_mode);
}

TEST(EnumTexts, Selection) {
  const Rows<llm::Selection> rows = {
      {llm::Selection::kWeighted, "weighted"},
      {llm::Selection::kThompson, "thompson"},
      {llm::Selection::kUcb, "ucb"}};
  expect_round_trip(rows, [](llm::Selection s) { return llm::to_string(s); }, llm::parse_selection);
}

TEST(EnumTexts, ErrorKind) {
  const Rows<llm::ErrorKind> rows = {
      {llm::ErrorKind::kTransient, "transient"},
      {llm::ErrorKind::kFatal, "fatal"},
      {llm::ErrorKind::kRefusal, "refusal"},
      {llm::ErrorKind::kBudget, "budget"},
      {llm::ErrorKind::kCancelled, "cancelled"},
      {llm::ErrorKind::kReplayMiss, "replay-miss"},
      {llm::ErrorKind::kOther, "other"}};
  EXPECT_EQ(rows.size(), size_t(llm::ErrorKind::kOther) + 1);
  expect_texts(rows, [](llm::ErrorKind k) { return llm::to_string(k); });
}

TEST(EnumTexts, FinishReason) {
  const Rows<llm::FinishReason> rows = {
      {llm::FinishReason::kStop, "stop"},
      {llm::FinishReason::kLength, "length"},
      {llm::FinishReason::kRefusal, "refusal"},
      {llm::FinishReason::kContentFilter, "content_filter"},
      {llm::FinishReason::kToolUse, "tool_use"},
      {llm::FinishReason::kOther, "other"}};
  EXPECT_EQ(rows.size(), size_t(llm::FinishReason::kOther) + 1);
  expect_texts(rows, [](llm::FinishReason f) { return llm::to_string(f); });
}

TEST(EnumTexts, Severity) {
  const Rows<Severity> rows = {
      {Severity::Skip, "SKIP"},
      {Severity::Pass, "PASS"},
      {Severity::Warn, "WARN"},
      {Severity::Fail, "FAIL"}};
  expect_texts(rows, [](Severity s) { return to_string(s); });
}

TEST(EnumTexts, IncludeRule) {
  const Rows<IncludeRule> rows = {
      {IncludeRule::HostInclude, "host_include"},
      {IncludeRule::EmbedFile, "embed_file"},
      {IncludeRule::LineDirective, "line_directive"},
      {IncludeRule::PragmaFile, "pragma_file"},
      {IncludeRule::HasInclude, "has_include"}};
  EXPECT_EQ(rows.size(), size_t(IncludeRule::HasInclude) + 1);
  expect_texts(rows, [](IncludeRule r) { return to_string(r); });
}

TEST(EnumTexts, SandboxKind) {
  const Rows<SandboxKind> rows = {
      {SandboxKind::Bubblewrap, "bubblewrap"},
      {SandboxKind::Landlock, "landlock"},
      {SandboxKind::None, "none"}};
  expect_texts(rows, [](SandboxKind k) { return to_string(k); });
}

TEST(EnumTexts, Action) {
  const Rows<bench::Action> rows = {
      {bench::Action::kStart, "start"},
      {bench::Action::kResume, "resume"},
      {bench::Action::kSkip, "skip"}};
  expect_texts(rows, [](bench::Action a) { return bench::to_string(a); });
}

TEST(EnumTexts, GpuUtilCode) {
  const Rows<GpuUtilCode> rows = {
      {GpuUtilCode::kOk, "ok"},
      {GpuUtilCode::kLibraryMissing, "library_missing"},
      {GpuUtilCode::kSymbolMissing, "symbol_missing"},
      {GpuUtilCode::kInitFailed, "init_failed"},
      {GpuUtilCode::kDeviceNotFound, "device_not_found"},
      {GpuUtilCode::kNoGpus, "no_gpus"},
      {GpuUtilCode::kQueryFailed, "query_failed"}};
  EXPECT_EQ(rows.size(), size_t(GpuUtilCode::kQueryFailed) + 1);
  expect_texts(rows, [](GpuUtilCode c) { return to_string(c); });
}

TEST(EnumTexts, ErrorCode) {
  const Rows<ErrorCode> rows = {
      {ErrorCode::kUnspecified, "unspecified"},
      {ErrorCode::kTimeout, "timeout"},
      {ErrorCode::kClosed, "closed"},
      {ErrorCode::kProcessDied, "process_died"},
      {ErrorCode::kNotFound, "not_found"},
      {ErrorCode::kParse, "parse"},
      {ErrorCode::kIo, "io"},
      {ErrorCode::kNoTorch, "no_torch"},
      {ErrorCode::kNoCuda, "no_cuda"},
      {ErrorCode::kUnavailable, "unavailable"},
      {ErrorCode::kLlmTransient, "llm_transient"},
      {ErrorCode::kLlmFatal, "llm_fatal"},
      {ErrorCode::kLlmRefusal, "llm_refusal"},
      {ErrorCode::kBudget, "budget"},
      {ErrorCode::kCancelled, "cancelled"},
      {ErrorCode::kReplayMiss, "replay_miss"}};
  EXPECT_EQ(rows.size(), size_t(ErrorCode::kReplayMiss) + 1);
  expect_texts(rows, [](ErrorCode c) { return to_string(c); });
}

TEST(EnumTexts, BackwardSkip) {
  const Rows<interop::BackwardSkip> rows = {
      {interop::BackwardSkip::kNonFloatOutput, "non_float_output"},
      {interop::BackwardSkip::kNoGradTarget, "no_grad_target"},
      {interop::BackwardSkip::kDisconnected, "disconnected"},
      {interop::BackwardSkip::kInplace, "inplace"},
      {interop::BackwardSkip::kNotModule, "not_module"}};
  EXPECT_EQ(rows.size(), size_t(interop::BackwardSkip::kNotModule) + 1);
  expect_texts(rows, [](interop::BackwardSkip s) { return interop::to_string(s); });
}

// Enums read from text without a public to_string: the environment's and the bridge's words.
TEST(EnumTexts, RunnerPoolModeTakesItsAliases) {
  const char* before = std::getenv("KEVO_RUNNER_POOL");
  const std::string saved = before ? before : "";
  for (const auto& [text, mode] : std::vector<std::pair<const char*, PoolMode>>{
           {"off", PoolMode::kOff}, {"0", PoolMode::kOff}, {"no", PoolMode::kOff}, {"use", PoolMode::kUse},
           {"auto", PoolMode::kAuto}, {"", PoolMode::kAuto}, {"sometimes", PoolMode::kAuto}}) {
    ::setenv("KEVO_RUNNER_POOL", text, 1);
    EXPECT_EQ(pool_mode(), mode) << text;
  }
  if (before) ::setenv("KEVO_RUNNER_POOL", saved.c_str(), 1);
  else ::unsetenv("KEVO_RUNNER_POOL");
}

TEST(EnumTexts, GradProbeVerdicts) {
  using V = interop::GradProbe::Verdict;
  for (const auto& [text, v] : std::vector<std::pair<const char*, V>>{
           {"ok", V::kOk}, {"disconnected", V::kDisconnected}, {"inplace", V::kInplace}, {"unknown", V::kUnknown}}) {
    auto p = interop::parse_grad_probe(torch::ojson{{"verdict", text}});
    ASSERT_TRUE(p) << text << ": " << p.error().message;
    EXPECT_EQ(p->verdict, v) << text;
  }
  EXPECT_FALSE(interop::parse_grad_probe(torch::ojson{{"verdict", "maybe"}}));
}

}  // namespace
}  // namespace kevo
