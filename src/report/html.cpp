#include "report/html.h"

#include <cstdint>

namespace kevo::report {

std::string escape(std::string_view s) {
  std::string o;
  o.reserve(s.size() + s.size() / 8);
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      case '\0': o += "&#65533;"; break;
      default: o += c;
    }
  }
  return o;
}

namespace {
std::vector<std::string> split_lines(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < s.size()) {
    size_t nl = s.find('\n', start);
    if (nl == std::string_view::npos) nl = s.size();
    std::string line(s.substr(start, nl - start));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(std::move(line));
    start = nl + 1;
  }
  return out;
}
}  // namespace

std::vector<DiffLine> line_diff(std::string_view a_text, std::string_view b_text, size_t max_cells) {
  auto a = split_lines(a_text), b = split_lines(b_text);
  size_t n = a.size(), m = b.size();
  std::vector<DiffLine> out;
  if ((n + 1) * (m + 1) > max_cells) {
    for (size_t i = 0; i < n; ++i) out.push_back({DiffOp::kRemoved, int(i + 1), 0, a[i]});
    for (size_t j = 0; j < m; ++j) out.push_back({DiffOp::kAdded, 0, int(j + 1), b[j]});
    return out;
  }
  // lcs[i][j]: the LCS length of a[i..] and b[j..].
  std::vector<uint32_t> lcs((n + 1) * (m + 1), 0);
  auto at = [&](size_t i, size_t j) -> uint32_t& { return lcs[i * (m + 1) + j]; };
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      at(i, j) = a[i] == b[j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      out.push_back({DiffOp::kSame, int(i + 1), int(j + 1), a[i]});
      ++i, ++j;
    } else if (i < n && (j == m || at(i + 1, j) >= at(i, j + 1))) {
      out.push_back({DiffOp::kRemoved, int(i + 1), 0, a[i]});
      ++i;
    } else {
      out.push_back({DiffOp::kAdded, 0, int(j + 1), b[j]});
      ++j;
    }
  }
  return out;
}

}  // namespace kevo::report
