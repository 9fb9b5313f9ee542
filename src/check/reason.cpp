#include "check/reason.h"

namespace kevo {

namespace {
constexpr std::string_view kStaticPrefix = "static:";
}  // namespace

std::string_view to_string(Reason r) {
  switch (r) {
    case Reason::kNone: return "";
    case Reason::kCompile: return "compile";
    case Reason::kLoad: return "load";
    case Reason::kIntakeTooLarge: return "intake:too_large";
    case Reason::kIntakeNotUtf8: return "intake:not_utf8";
    case Reason::kIntakeEmpty: return "intake:empty";
    case Reason::kIntakeNoForward: return "intake:no_kevo_forward";
    case Reason::kIntakeSeveralForwards: return "intake:several_kevo_forward";
    case Reason::kIntakeNotExported: return "intake:kevo_forward_not_exported";
    case Reason::kMismatch: return "mismatch";
    case Reason::kNan: return "nan";
    case Reason::kUnwritten: return "unwritten";
    case Reason::kNondeterministic: return "nondeterministic";
    case Reason::kInputModified: return "input_modified";
    case Reason::kTimedOutput: return "timed_output";
    case Reason::kSanitizerMemcheck: return "sanitizer:memcheck";
    case Reason::kSanitizerRacecheck: return "sanitizer:racecheck";
    case Reason::kSanitizerInitcheck: return "sanitizer:initcheck";
    case Reason::kStatic: return "static";
    case Reason::kForeignStream: return "foreign_stream";
    case Reason::kStreamCreated: return "stream_created";
    case Reason::kAllocLimit: return "alloc_limit";
    case Reason::kGuard: return "guard";
    case Reason::kHiddenWork: return "hidden_work";
    case Reason::kHostThread: return "host_thread";
    case Reason::kDeviceState: return "device_state";
    case Reason::kTimingForged: return "timing_forged";
    case Reason::kBelowSol: return "below_sol";
    case Reason::kTimeout: return "timeout";
    case Reason::kCompileTimeout: return "compile_timeout";
    case Reason::kSignal: return "signal";
    case Reason::kAbort: return "abort";
    case Reason::kExit: return "exit";
    case Reason::kIllegalAddress: return "illegal_address";
    case Reason::kCudaError: return "cuda_error";
    case Reason::kLaunchError: return "launch_error";
    case Reason::kReturnedError: return "returned_error";
    case Reason::kRunner: return "runner";
    case Reason::kNoGpu: return "no_gpu";
    case Reason::kTask: return "task";
    case Reason::kInput: return "input";
    case Reason::kCompiler: return "compiler";
    case Reason::kBaseline: return "baseline";
    case Reason::kTorch: return "torch";
    case Reason::kReference: return "reference";
    case Reason::kOracle: return "oracle";
    case Reason::kCompare: return "compare";
    case Reason::kMemory: return "memory";
    case Reason::kGpuBusy: return "gpu_busy";
    case Reason::kTimingNoisy: return "timing_noisy";
    case Reason::kJobLost: return "job_lost";
    case Reason::kJobResult: return "job_result";
    case Reason::kJobPayload: return "job_payload";
    case Reason::kJobTask: return "job_task";
    case Reason::kJobSource: return "job_source";
    case Reason::kWorkerKind: return "worker_kind";
    case Reason::kWorkerDisk: return "worker_disk";
    case Reason::kEvaluator: return "evaluator";
    case Reason::kTimedOutputUnchecked: return "timed_output_unchecked";
    case Reason::kTimingFloored: return "timing_floored";
    case Reason::kTimingRetimed: return "timing_retimed";
    case Reason::kTimingRaced: return "timing_raced";
    case Reason::kTimingUnconfirmed: return "timing_unconfirmed";
    case Reason::kBaselineSlowed: return "baseline_slowed";
    case Reason::kSandboxUnavailable: return "sandbox_unavailable";
    case Reason::kSolUnavailable: return "sol_unavailable";
    case Reason::kDuplicate: return "duplicate";
    case Reason::kNoCode: return "no_code";
    case Reason::kEditFailed: return "edit_failed";
    case Reason::kIo: return "io";
  }
  return "?";
}

std::optional<Reason> parse_reason(std::string_view text) {
  if (text.starts_with(kStaticPrefix)) return Reason::kStatic;
  for (int i = 0; i < kReasonCount; ++i)
    if (to_string(static_cast<Reason>(i)) == text) return static_cast<Reason>(i);
  return std::nullopt;
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
