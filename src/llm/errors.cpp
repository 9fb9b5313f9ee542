#include "llm/errors.h"

#include "util/enum_text.h"

namespace kevo::llm {

namespace {
struct Tag {
  ErrorKind kind;
  ErrorCode code;
  std::string_view tag;
};
constexpr Tag kTags[] = {
    {ErrorKind::kTransient, ErrorCode::kLlmTransient, "[transient] "},
    {ErrorKind::kFatal, ErrorCode::kLlmFatal, "[fatal] "},
    {ErrorKind::kRefusal, ErrorCode::kLlmRefusal, "[refusal] "},
    {ErrorKind::kBudget, ErrorCode::kBudget, "[budget] "},
    {ErrorKind::kCancelled, ErrorCode::kCancelled, "[cancelled] "},
    {ErrorKind::kReplayMiss, ErrorCode::kReplayMiss, "[replay-miss] "},
};
}  // namespace

namespace {

constexpr EnumText<ErrorKind> kErrorKindTexts[] = {
    {ErrorKind::kTransient, "transient"},
    {ErrorKind::kFatal, "fatal"},
    {ErrorKind::kRefusal, "refusal"},
    {ErrorKind::kBudget, "budget"},
    {ErrorKind::kCancelled, "cancelled"},
    {ErrorKind::kReplayMiss, "replay-miss"},
    {ErrorKind::kOther, "other"},
};

}  // namespace

const char* to_string(ErrorKind k) { return enum_text(kErrorKindTexts, k, "other"); }

Error make_error(ErrorKind kind, std::string_view message) {
  for (const auto& t : kTags)
    if (t.kind == kind) return Error{std::string(t.tag) + std::string(message), t.code};
  return Error{std::string(message)};
}

ErrorKind error_kind(const Error& e) {
  for (const auto& t : kTags)
    if (t.code == e.code) return t.kind;
  return ErrorKind::kOther;
}

std::string redact(std::string text, std::string_view secret) {
  if (secret.size() < 8) return text;
  for (size_t pos = text.find(secret); pos != std::string::npos; pos = text.find(secret, pos))
    text.replace(pos, secret.size(), "[redacted]");
  return text;
}

}  // namespace kevo::llm
