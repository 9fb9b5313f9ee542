#include "check/reason.h"

#include <iterator>

#include "util/enum_text.h"

namespace kevo {

namespace {

constexpr std::string_view kStaticPrefix = "static:";

// A verdict's reason as verdicts, the run database and JSON store it: a value's text never changes.
constexpr EnumText<Reason> kReasonTexts[] = {
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
    {Reason::kIo, "io"},
};
static_assert(std::size(kReasonTexts) == kReasonCount, "every reason has a text");

}  // namespace

std::string_view to_string(Reason r) { return enum_text(kReasonTexts, r); }

std::optional<Reason> parse_reason(std::string_view text) {
  if (text.starts_with(kStaticPrefix)) return Reason::kStatic;
  return enum_parse(kReasonTexts, text);
}

std::string static_rule_of(std::string_view text) {
  return text.starts_with(kStaticPrefix) ? std::string(text.substr(kStaticPrefix.size())) : std::string();
}

std::string reason_text(Reason r, std::string_view static_rule) {
  if (r == Reason::kStatic && !static_rule.empty()) return std::string(kStaticPrefix) + std::string(static_rule);
  return std::string(to_string(r));
}

Reason intake_reason(IntakeCode c) {
  switch (c) {
    case IntakeCode::TooLarge: return Reason::kIntakeTooLarge;
    case IntakeCode::NotUtf8: return Reason::kIntakeNotUtf8;
    case IntakeCode::Empty: return Reason::kIntakeEmpty;
    case IntakeCode::NoForward: return Reason::kIntakeNoForward;
    case IntakeCode::SeveralForwards: return Reason::kIntakeSeveralForwards;
    case IntakeCode::NotExported: return Reason::kIntakeNotExported;
  }
  return Reason::kIntakeEmpty;
}

}  // namespace kevo
