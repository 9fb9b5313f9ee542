#include "util/error_code.h"

#include "util/enum_text.h"

namespace kevo {

namespace {

constexpr EnumText<ErrorCode> kErrorCodeTexts[] = {
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
    {ErrorCode::kReplayMiss, "replay_miss"},
};

}  // namespace

std::string_view to_string(ErrorCode c) { return enum_text(kErrorCodeTexts, c, "unspecified"); }

}  // namespace kevo
