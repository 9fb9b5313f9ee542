#include <fmt/format.h>

#include "interop/recheck.h"

namespace kevo::interop {
namespace {

std::string speedup_text(const std::optional<Speedup>& s) {
  if (!s) return "-";
  return fmt::format("{:.2f}x ({:.2f}-{:.2f})", s->median, s->low, s->high);
}

// A table cell: no pipes or newlines, at most 160 characters.
std::string cell(std::string s) {
  for (char& c : s)
    if (c == '|' || c == '\n' || c == '\t') c = ' ';
  if (s.size() > 160) s = s.substr(0, 157) + "...";
  return s;
}

std::string holds_text(const RecheckRow& r) {
  if (!r.claimed) return "-";
  if (r.verdict.outcome == SolutionOutcome::kNeedsGpu) return "not checked";
  return claim_holds(r) ? "yes" : "no";
}

}  // namespace

std::string recheck_table(const std::vector<RecheckRow>& rows) {
  std::string s =
      "| file | problem | verdict | reason | vs eager | vs compile | claimed | claim holds | KernelBench 1e-2 |\n"
      "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const auto& r : rows)
    s += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", cell(r.file), cell(r.problem),
                     to_string(r.verdict.outcome), cell(r.verdict.reason), speedup_text(r.verdict.vs_eager),
                     speedup_text(r.verdict.vs_compile), r.claimed ? fmt::format("{:.3g}x", *r.claimed) : "-",
                     holds_text(r), to_string(r.verdict.kernelbench_allclose));
  const RecheckTotals t = recheck_totals(rows);
  s += fmt::format("\n{} solutions, {} with a claim: {} claims hold within 10%, {} pass below their claim, {} rejected "
                   "by kevo that KernelBench's check passes.\n",
                   t.files, t.claims, t.holds, t.passed_below_claim, t.loose_only);
  std::string by;
  for (const auto& [o, n] : t.by_outcome) by += fmt::format("{}{} {}", by.empty() ? "" : ", ", to_string(o), n);
  s += "By verdict: " + by + ".\n";
  return s;
}

}  // namespace kevo::interop
