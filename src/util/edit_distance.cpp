#include "util/edit_distance.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace kevo {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string closest_name(std::string_view word, const std::vector<std::string>& names) {
  const std::string* best = nullptr;
  size_t best_d = SIZE_MAX;
  for (const std::string& n : names)
    if (size_t d = edit_distance(word, n); d < best_d) best_d = d, best = &n;
  return best && best_d <= std::max<size_t>(2, word.size() / 3) ? *best : std::string();
}

}  // namespace kevo
