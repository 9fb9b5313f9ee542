#include "archive/source_diff.h"

#include <vector>

#include <fmt/format.h>

#include "report/html.h"

namespace kevo::archive {

std::string source_diff(std::string_view parent, std::string_view child, int context) {
  using report::DiffOp;
  const std::vector<report::DiffLine> lines = report::line_diff(parent, child);
  std::vector<bool> keep(lines.size(), false);
  bool any = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].op == DiffOp::kSame) continue;
    any = true;
    const size_t lo = i >= size_t(context) ? i - context : 0;
    for (size_t k = lo; k < lines.size() && k <= i + context; ++k) keep[k] = true;
  }
  if (!any) return {};
  std::string out;
  bool gap = true;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!keep[i]) {
      gap = true;
      continue;
    }
    const auto& l = lines[i];
    if (gap) out += fmt::format("@@ line {} @@\n", l.right ? l.right : l.left);
    gap = false;
    out += (l.op == DiffOp::kSame ? " " : l.op == DiffOp::kRemoved ? "-" : "+") + l.text + "\n";
  }
  return out;
}

}  // namespace kevo::archive
