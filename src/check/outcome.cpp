#include "check/outcome.h"

namespace kevo {

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::Pass: return "pass";
    case Outcome::CompileError: return "compile_error";
    case Outcome::Incorrect: return "incorrect";
    case Outcome::Unsafe: return "unsafe";
    case Outcome::Timeout: return "timeout";
    case Outcome::Crash: return "crash";
    case Outcome::InfraError: return "infra_error";
  }
  return "?";
}

std::optional<Outcome> outcome_from_name(const std::string& name) {
  for (Outcome o : {Outcome::Pass, Outcome::CompileError, Outcome::Incorrect, Outcome::Unsafe, Outcome::Timeout,
                    Outcome::Crash, Outcome::InfraError})
    if (name == outcome_name(o)) return o;
  return std::nullopt;
}

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
