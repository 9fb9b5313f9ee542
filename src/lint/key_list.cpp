#include "lint/key_list.h"

#include <fmt/format.h>

#include <utility>

namespace kevo {

std::string key_list(const std::vector<std::string>& keys, size_t shown_per_kind) {
  // (kind, names) in first-appearance order; "input 'w'" is kind "input", name "'w'".
  std::vector<std::pair<std::string, std::vector<std::string>>> kinds;
  for (const auto& k : keys) {
    const size_t sp = k.find(" '");
    std::string kind = sp == std::string::npos ? k : k.substr(0, sp);
    std::string name = sp == std::string::npos ? "" : k.substr(sp + 1);
    auto it = kinds.begin();
    while (it != kinds.end() && (it->first != kind || name.empty())) ++it;
    if (it == kinds.end()) {
      kinds.push_back({kind, {}});
      it = kinds.end() - 1;
    }
    if (!name.empty()) it->second.push_back(name);
  }
  std::string out;
  for (const auto& [kind, names] : kinds) {
    if (!out.empty()) out += "; ";
    if (names.empty()) {
      out += kind;
      continue;
    }
    out += names.size() == 1 ? kind : kind + "s";
    for (size_t i = 0; i < names.size() && i < shown_per_kind; ++i) out += (i ? ", " : " ") + names[i];
    if (names.size() > shown_per_kind) out += fmt::format(" and {} more", names.size() - shown_per_kind);
  }
  return out;
}

}  // namespace kevo
