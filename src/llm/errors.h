// How an LLM call failed, so the engine can react: stop the run (budget, cancelled, fatal
// configuration), skip one proposal (transient, refusal), or fail an offline replay (miss).
// The kind travels as the Error's code (util/error_code.h); the message also starts with a
// bracketed tag ("[fatal] ...") for people, which nothing reads back.
#pragma once

#include <string>
#include <string_view>

#include "util/result.h"

namespace kevo::llm {

enum class ErrorKind {
  kTransient,   // retries exhausted on network errors, 429, 5xx, malformed answers
  kFatal,       // retrying cannot help: bad key, bad request, unknown model, bad config
  kRefusal,     // the model declined to answer
  kBudget,      // a call, token or money budget is spent; no new calls start
  kCancelled,   // the caller's CancelToken fired
  kReplayMiss,  // replay mode and the cache has no answer for this request
  kOther,       // not an LLM-module error
};

const char* to_string(ErrorKind k);
Error make_error(ErrorKind kind, std::string_view message);
ErrorKind error_kind(const Error& e);  // from its code; kOther for any other code

// Replaces every occurrence of `secret` in `text` so a key echoed by a server never leaves
// this module. Short secrets are left alone: masking "a" would garble every message.
std::string redact(std::string text, std::string_view secret);

}  // namespace kevo::llm
