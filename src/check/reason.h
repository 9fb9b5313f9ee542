// Why a verdict came out as it did (and why the engine stored a candidate it did not evaluate): one
// code per kind of failure, and the flags' codes. The strings are the stable format of the verdict
// JSON, the text verdict, the run database's candidates.reason column and the web view: to_string
// gives exactly what kevo has always written, parse_reason reads it back. A static-check finding is
// kStatic with the checker's rule beside it, written "static:<rule>" (reason_text).
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "check/intake.h"

namespace kevo {

enum class Reason {
  kNone,  // "": a pass
  // compile_error
  kCompile,
  kLoad,
  kIntakeTooLarge,  // "intake:too_large" ... : check/intake.h's codes
  kIntakeNotUtf8,
  kIntakeEmpty,
  kIntakeNoForward,
  kIntakeSeveralForwards,
  kIntakeNotExported,
  // incorrect
  kMismatch,
  kNan,
  kUnwritten,
  kNondeterministic,
  kInputModified,
  kTimedOutput,
  kSanitizerMemcheck,  // "sanitizer:memcheck" ...
  kSanitizerRacecheck,
  kSanitizerInitcheck,
  // unsafe (the runner's guards: foreign_stream, stream_created, alloc_limit, hidden_work, guard)
  kStatic,  // "static", written "static:<rule>" with its rule
  kForeignStream,
  kStreamCreated,
  kAllocLimit,
  kGuard,  // a guard violation of a kind this build does not know
  kHiddenWork,
  kHostThread,
  kDeviceState,
  kTimingForged,
  kBelowSol,
  // timeout, crash
  kTimeout,
  kCompileTimeout,
  kSignal,
  kAbort,
  kExit,
  kIllegalAddress,
  kCudaError,
  kLaunchError,
  kReturnedError,
  // infra_error
  kRunner,
  kNoGpu,
  kTask,
  kInput,
  kCompiler,
  kBaseline,
  kTorch,
  kReference,
  kOracle,
  kCompare,
  kMemory,
  kGpuBusy,
  kTimingNoisy,
  kJobLost,    // the queue: a job given up after its attempts
  kJobResult,  // the queue: a result that does not read as a verdict
  kJobPayload,  // a worker's refusals (evolve/worker.cpp)
  kJobTask,
  kJobSource,
  kWorkerKind,
  kWorkerDisk,
  kEvaluator,  // held-out re-verification: the evaluation itself failed
  // flags only (never a verdict's reason)
  kTimedOutputUnchecked,
  kTimingFloored,
  kTimingRetimed,
  kTimingRaced,
  kTimingUnconfirmed,
  kBaselineSlowed,
  kSandboxUnavailable,
  kSolUnavailable,
  // candidates the engine stores without evaluating them
  kDuplicate,
  kNoCode,
  kEditFailed,
  kIo,
};
// Keep equal to the last enumerator + 1: the tests read every code through it.
inline constexpr int kReasonCount = static_cast<int>(Reason::kIo) + 1;

// The stored text of a reason without a rule: "", "mismatch", "static", "intake:too_large", ...
std::string_view to_string(Reason r);
// Stored text back to the code ("static:<rule>" is kStatic); nullopt for text this build does not
// know (an older or newer kevo wrote it).
std::optional<Reason> parse_reason(std::string_view text);
// The rule of a stored "static:<rule>" ("" for any other text).
std::string static_rule_of(std::string_view text);
// What is stored: "static:<rule>" for kStatic with a rule, to_string(r) otherwise.
std::string reason_text(Reason r, std::string_view static_rule = {});

// The verdict reason of an intake finding (check/intake.h): "intake:" + to_string(code).
Reason intake_reason(IntakeCode c);

}  // namespace kevo
