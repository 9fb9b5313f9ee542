// Pieces of the HTML report: escaping and a line diff.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kevo::report {

// Escapes & < > " ' so any text (kernel source, model output, task names) is inert in element
// content and in attribute values, including inside inline SVG.
std::string escape(std::string_view s);

enum class DiffOp { kSame, kRemoved, kAdded };
struct DiffLine {
  DiffOp op;
  int left = 0, right = 0;  // 1-based line numbers; 0 where the side has no line
  std::string text;
};
// A line diff of a -> b (longest common subsequence). Inputs over `max_cells` line pairs are
// shown as all removed then all added.
std::vector<DiffLine> line_diff(std::string_view a, std::string_view b, size_t max_cells = 16'000'000);

}  // namespace kevo::report
