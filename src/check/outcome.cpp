#include "check/outcome.h"

#include "util/enum_text.h"

namespace kevo {

namespace {

constexpr EnumText<Outcome> kOutcomeTexts[] = {
    {Outcome::Pass, "pass"},
    {Outcome::CompileError, "compile_error"},
    {Outcome::Incorrect, "incorrect"},
    {Outcome::Unsafe, "unsafe"},
    {Outcome::Timeout, "timeout"},
    {Outcome::Crash, "crash"},
    {Outcome::InfraError, "infra_error"},
};

}  // namespace

const char* outcome_name(Outcome o) { return enum_text(kOutcomeTexts, o); }

std::optional<Outcome> parse_outcome(std::string_view text) { return enum_parse(kOutcomeTexts, text); }

int exit_code(Outcome o) {
  switch (o) {
    case Outcome::Pass: return 0;
    case Outcome::CompileError: return 10;
    case Outcome::Incorrect: return 11;
    case Outcome::Unsafe: return 12;
    case Outcome::Timeout: return 13;
    case Outcome::Crash: return 14;
    case Outcome::InfraError: return 20;
  }
  return 20;
}

}  // namespace kevo
