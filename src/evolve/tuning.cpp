#include "evolve/tuning.h"

#include <regex>
#include <sstream>

#include <fmt/format.h>

namespace kevo::evolve {

namespace {

std::vector<std::string> split_lines(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == '\n') {
      out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(std::move(cur));
  return out;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) out += (i ? "\n" : "") + lines[i];
  return out;
}

std::string trim(std::string s) {
  auto b = s.find_first_not_of(" \t");
  auto e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// The definition of `name` on a line: a #define or an initialized constant.
std::regex define_re(const std::string& name) {
  return std::regex(R"((#\s*define\s+)" + name + R"(\s+)([^\s/]+))");
}
std::regex constant_re(const std::string& name) {
  return std::regex(R"((\b)" + name + R"(\s*=\s*)([^;,/\s]+))");
}

bool value_on(const std::string& line, const std::string& name, std::string* value) {
  std::smatch m;
  if (std::regex_search(line, m, define_re(name)) || std::regex_search(line, m, constant_re(name))) {
    if (value) *value = m[2].str();
    return true;
  }
  return false;
}

}  // namespace

std::string Variant::label() const {
  std::string s;
  for (const auto& [k, v] : assignment) s += (s.empty() ? "" : " ") + k + "=" + v;
  return s;
}

Result<std::vector<Tunable>> find_tunables(std::string_view source) {
  static const std::regex ann(R"(//\s*kevo:\s*tune\s+([A-Za-z_]\w*)\s+in\s*\{([^}]*)\})");
  auto lines = split_lines(source);
  std::vector<Tunable> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    auto p = lines[i].find("kevo: tune");
    if (p == std::string::npos) continue;
    std::smatch m;
    if (!std::regex_search(lines[i], m, ann))
      return fail("line {}: malformed annotation; write // kevo: tune NAME in {{v1, v2, ...}}", i + 1);
    Tunable t;
    t.name = m[1].str();
    std::stringstream vs(m[2].str());
    std::string v;
    while (std::getline(vs, v, ',')) {
      v = trim(v);
      if (!v.empty()) t.values.push_back(v);
    }
    if (t.values.empty()) return fail("line {}: tune {} lists no values", i + 1, t.name);
    // The definition is on the annotated line or the one below it (annotation above).
    for (size_t j : {i, i + 1}) {
      if (j >= lines.size()) continue;
      std::string code = lines[j].substr(0, j == i ? lines[j].find("//") : std::string::npos);
      if (value_on(code, t.name, &t.current)) {
        t.line = static_cast<int>(j + 1);
        break;
      }
    }
    if (t.line == 0)
      return fail("line {}: tune {}: no '#define {} VALUE' or '{} = VALUE' on this line or the next", i + 1,
                  t.name, t.name, t.name);
    out.push_back(std::move(t));
  }
  return out;
}

Result<std::vector<Variant>> enumerate_variants(std::string_view source, size_t limit) {
  auto tunables = find_tunables(source);
  if (!tunables) return tunables.unexpected();
  // The source's own value first, so variant 0 is the source as written.
  for (auto& t : *tunables) {
    std::vector<std::string> vals{t.current};
    for (const auto& v : t.values)
      if (v != t.current) vals.push_back(v);
    t.values = vals;
  }
  auto lines = split_lines(source);
  std::vector<Variant> out;
  std::vector<size_t> idx(tunables->size(), 0);
  while (out.size() < limit) {
    Variant var;
    auto ls = lines;
    for (size_t k = 0; k < tunables->size(); ++k) {
      const Tunable& t = (*tunables)[k];
      const std::string& v = t.values[idx[k]];
      std::string& line = ls[static_cast<size_t>(t.line - 1)];
      // Only the code before a trailing comment changes, so the annotation stays intact.
      size_t cut = line.find("//");
      std::string code = line.substr(0, cut), rest = cut == std::string::npos ? "" : line.substr(cut);
      // Spliced by position: a "$1" + "256" format string would read as group 12.
      std::smatch m;
      if (std::regex_search(code, m, define_re(t.name)) || std::regex_search(code, m, constant_re(t.name))) {
        auto at = static_cast<size_t>(m.position(2));
        code = code.substr(0, at) + v + code.substr(at + static_cast<size_t>(m.length(2)));
      }
      line = code + rest;
      var.assignment.emplace_back(t.name, v);
    }
    var.source = join_lines(ls);
    out.push_back(std::move(var));
    // Next combination (odometer, last tunable fastest).
    size_t k = tunables->size();
    while (k > 0) {
      --k;
      if (++idx[k] < (*tunables)[k].values.size()) break;
      idx[k] = 0;
      if (k == 0) return out;
    }
    if (tunables->empty()) break;
  }
  return out;
}

}  // namespace kevo::evolve
