#include "lint/suite.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "util/fs.h"

namespace kevo {

namespace fs = std::filesystem;

Result<std::vector<std::string>> parse_suite(std::string_view text, const std::string& file) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  std::istringstream in{std::string(text)};
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    auto b = line.find_first_not_of(" \t\r"), e = line.find_last_not_of(" \t\r");
    if (b == std::string::npos) continue;
    std::string name = line.substr(b, e - b + 1);
    bool valid = std::all_of(name.begin(), name.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
    if (!valid)
      return fail(ErrorCode::kParse, "{}:{}: '{}' is not a task name ([a-z0-9_]+, one per line)", file,
                  lineno, name);
    if (!seen.insert(name).second)
      return fail(ErrorCode::kParse, "{}:{}: task '{}' is listed twice", file, lineno, name);
    names.push_back(name);
  }
  if (names.empty()) return fail(ErrorCode::kParse, "{}: the suite lists no tasks", file);
  return names;
}

Result<std::vector<std::string>> load_suite(const std::string& name_or_path) {
  std::error_code ec;
  fs::path p = name_or_path;
  if (!fs::is_regular_file(p, ec)) p = kevo_home() / "suites" / (name_or_path + ".txt");
  std::ifstream f(p);
  if (!f) {
    auto known = bundled_suites();
    std::string list;
    for (const auto& s : known) list += (list.empty() ? "" : ", ") + s;
    return fail(ErrorCode::kNotFound,
                "{}: no such suite file, and no bundled suite of that name (bundled: {})", name_or_path,
                list.empty() ? "none" : list);
  }
  std::stringstream ss;
  ss << f.rdbuf();
  return parse_suite(ss.str(), p.string());
}

std::vector<std::string> bundled_suites() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(kevo_home() / "suites", ec))
    if (e.path().extension() == ".txt") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> bundled_tasks() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(kevo_home() / "tasks", ec))
    if (fs::exists(e.path() / "task.toml", ec)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace kevo
