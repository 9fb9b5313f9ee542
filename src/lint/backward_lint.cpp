#include "lint/backward_lint.h"

#include <fmt/format.h>

#include "task/backward.h"

namespace kevo {

namespace {

LintFinding pair_finding(const Task& task) {
  LintFinding f{"backward_pair", Severity::Pass, ""};
  auto fwd = load_task(forward_dir(task));
  Status s = fwd ? check_backward_pair(task, *fwd)
                 : Status(fail("the forward task '{}' does not load: {}", task.backward->of,
                               fwd.error().message));
  if (!s) {
    f.severity = Severity::Fail;
    f.message = s.error().message;
  } else {
    f.message = fmt::format("matches the forward task '{}' on every config", task.backward->of);
  }
  return f;
}

// The checker compares every output with the tolerance of the task's precision (its first
// output's dtype), so that is the tolerance each gradient gets.
LintFinding tolerance_finding(const Task& task) {
  LintFinding f{"reduction_tolerance", Severity::Pass, ""};
  const double atol = task.tolerance_for(task.precision()).atol;
  std::vector<std::string> short_of, covered;
  for (const auto& g : task.backward->gradients) {
    double most = 0, need = 0;
    std::string worst;
    for (const auto& c : task.configs) {
      auto terms = eval_expr(g.sums_over, c.dims);
      if (!terms) {
        short_of.push_back(fmt::format("'{}': {}", g.output, terms.error().message));
        continue;
      }
      if (*terms > most) most = *terms, worst = c.name, need = reduction_atol(*terms);
    }
    if (need > atol)
      short_of.push_back(fmt::format("'{}' sums {} terms on config '{}' and needs atol >= {:.3g}",
                                     g.output, most, worst, need));
    else
      covered.push_back(fmt::format("'{}' (at most {} terms)", g.output, most));
  }
  if (!short_of.empty()) {
    f.severity = Severity::Fail;
    f.message = fmt::format("the task's atol {:.3g} is below what f32 rounding reaches: {}", atol,
                            fmt::join(short_of, "; "));
  } else {
    f.message = fmt::format("atol {:.3g} covers {}", atol, fmt::join(covered, ", "));
  }
  return f;
}

}  // namespace

std::vector<LintFinding> lint_backward(const Task& task) {
  if (!task.backward) return {};
  return {pair_finding(task), tolerance_finding(task)};
}

}  // namespace kevo
