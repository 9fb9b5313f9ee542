#include "util/error_code.h"

namespace kevo {

std::string_view to_string(ErrorCode c) {
  switch (c) {
    case ErrorCode::kUnspecified: return "unspecified";
    case ErrorCode::kTimeout: return "timeout";
    case ErrorCode::kClosed: return "closed";
    case ErrorCode::kProcessDied: return "process_died";
    case ErrorCode::kNotFound: return "not_found";
    case ErrorCode::kParse: return "parse";
    case ErrorCode::kIo: return "io";
    case ErrorCode::kNoTorch: return "no_torch";
    case ErrorCode::kNoCuda: return "no_cuda";
    case ErrorCode::kUnavailable: return "unavailable";
    case ErrorCode::kLlmTransient: return "llm_transient";
    case ErrorCode::kLlmFatal: return "llm_fatal";
    case ErrorCode::kLlmRefusal: return "llm_refusal";
    case ErrorCode::kBudget: return "budget";
    case ErrorCode::kCancelled: return "cancelled";
    case ErrorCode::kReplayMiss: return "replay_miss";
  }
  return "unspecified";
}

}  // namespace kevo
