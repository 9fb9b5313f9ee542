#include "interop/solution_verdict.h"

#include "util/enum_text.h"

namespace kevo::interop {
namespace {

// Stored in recheck results files: a value's text never changes.
constexpr EnumText<SolutionOutcome> kOutcomeTexts[] = {
    {SolutionOutcome::kPass, "pass"},
    {SolutionOutcome::kWrongOutput, "wrong_output"},
    {SolutionOutcome::kFormat, "format"},
    {SolutionOutcome::kCompileError, "compile_error"},
    {SolutionOutcome::kCrash, "crash"},
    {SolutionOutcome::kTimeout, "timeout"},
    {SolutionOutcome::kNeedsGpu, "needs_gpu"},
    {SolutionOutcome::kBadSolution, "bad_solution"},
    {SolutionOutcome::kProblemError, "problem_error"},
    {SolutionOutcome::kInfraError, "infra_error"},
};

constexpr EnumText<LooseCheck> kLooseTexts[] = {
    {LooseCheck::kUnknown, "-"},
    {LooseCheck::kPass, "pass"},
    {LooseCheck::kFail, "fail"},
};

}  // namespace

const char* to_string(SolutionOutcome o) { return enum_text(kOutcomeTexts, o); }
std::optional<SolutionOutcome> parse_solution_outcome(std::string_view s) { return enum_parse(kOutcomeTexts, s); }
const char* to_string(LooseCheck c) { return enum_text(kLooseTexts, c); }
std::optional<LooseCheck> parse_loose_check(std::string_view s) { return enum_parse(kLooseTexts, s); }

}  // namespace kevo::interop
