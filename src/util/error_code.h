// What kind of failure an Error is, for callers that act on it (retry, skip, stop, report apart).
// A message is for people; code never branches on its text. Most errors are kUnspecified: only a
// failure some caller or user tells apart gets a code where it is produced.
#pragma once

#include <string_view>

namespace kevo {

enum class ErrorCode {
  kUnspecified,   // the default: nothing acts on the kind
  kTimeout,       // a deadline passed (a runner's or the PyTorch bridge's reply, a request)
  kClosed,        // the other end of a pipe or channel closed it (EOF)
  kProcessDied,   // a child process (runner, bridge) died or was killed
  kNotFound,      // a file, folder or program is not there
  kParse,         // an input file is malformed
  kIo,            // reading or writing failed (permissions, a full disk, a broken pipe)
  kNoTorch,       // no Python with torch and numpy on this machine
  kNoCuda,        // torch (or the machine) has no CUDA device for what was asked
  kUnavailable,   // a server or database cannot be reached (or the connection was lost)
  kLlmTransient,  // LLM: retries exhausted on network errors, 429, 5xx, malformed answers
  kLlmFatal,      // LLM: retrying cannot help (bad key, bad request, unknown model, bad config)
  kLlmRefusal,    // LLM: the model declined to answer
  kBudget,        // a call, token or money budget is spent
  kCancelled,     // the caller's cancel token fired
  kReplayMiss,    // replay mode and no stored answer for this request
};

// "unspecified", "timeout", ... (for logs and tests; messages do not repeat it).
std::string_view to_string(ErrorCode c);

}  // namespace kevo
