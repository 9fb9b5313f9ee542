// A candidate's outcome: the first word of every verdict, and its names and exit codes. Its own file
// so that code needing only the outcome and its names need not include the whole verdict.
#pragma once

#include <optional>
#include <string_view>

namespace kevo {

enum class Outcome { Pass, CompileError, Incorrect, Unsafe, Timeout, Crash, InfraError };

const char* outcome_name(Outcome o);  // "pass", "compile_error", ...
// "pass", "compile_error", ... back to the enum; nullopt for anything else.
std::optional<Outcome> parse_outcome(std::string_view text);
// Distinct process exit codes (documented in `kevo eval --help` and docs/ARCHITECTURE.md).
int exit_code(Outcome o);

}  // namespace kevo
