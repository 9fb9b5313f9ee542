#include "interop/recheck_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

#include "util/fs.h"

namespace kevo::interop {
namespace fs = std::filesystem;

namespace {

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, '\t')) out.push_back(cell);
  if (!line.empty() && line.back() == '\t') out.emplace_back();
  return out;
}

std::optional<int> leading_number(const std::string& s) {
  size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == 0 || i > 6) return std::nullopt;
  return std::stoi(s.substr(0, i));
}

// One row's cells into a claim; `where` is "FILE:LINE".
Result<Claim> claim_of(const std::map<std::string, size_t>& col, const std::vector<std::string>& cells,
                       const std::string& where) {
  auto cell = [&](const char* name) -> std::optional<std::string> {
    auto it = col.find(name);
    if (it == col.end() || it->second >= cells.size()) return std::nullopt;
    return cells[it->second];
  };
  Claim c;
  c.file = cell("file").value_or("");
  if (c.file.empty()) return fail(ErrorCode::kParse, "{}: column 'file' is empty", where);
  const std::string sp = cell("claimed_speedup").value_or("");
  char* end = nullptr;
  c.speedup = std::strtod(sp.c_str(), &end);
  if (sp.empty() || *end || !(c.speedup > 0))
    return fail(ErrorCode::kParse, "{}: column 'claimed_speedup': '{}' is not a positive number", where, sp);
  if (auto id = cell("problem_id"); id && !id->empty()) {
    c.problem_id = leading_number(*id);
    if (!c.problem_id || std::to_string(*c.problem_id) != *id)
      return fail(ErrorCode::kParse, "{}: column 'problem_id': '{}' is not a problem number", where, *id);
  }
  c.problem_name = cell("problem_name").value_or("");
  c.gpu = cell("gpu").value_or("");
  if (auto ok = cell("claimed_correct"); ok && !ok->empty()) c.claimed_correct = *ok == "True" || *ok == "true" || *ok == "1";
  return c;
}

// The problem file for number `id`: `<id>_*.py` or `L<level>_<NNN>.py`.
std::optional<fs::path> problem_file(const fs::path& problems, int id) {
  std::error_code ec;
  std::vector<fs::path> hits;
  for (const auto& e : fs::directory_iterator(problems, ec)) {
    const std::string n = e.path().filename().string();
    if (e.path().extension() != ".py") continue;
    std::string rest = n;
    if (rest.size() > 3 && rest[0] == 'L' && std::isdigit(static_cast<unsigned char>(rest[1])) && rest[2] == '_') rest = rest.substr(3);
    auto num = leading_number(rest);
    if (num && *num == id) hits.push_back(e.path());
  }
  std::sort(hits.begin(), hits.end());
  if (hits.empty()) return std::nullopt;
  return hits.front();
}

}  // namespace

std::optional<int> problem_number_of(const std::string& file_name) {
  std::string rest = file_name;
  if (rest.size() > 3 && rest[0] == 'L' && std::isdigit(static_cast<unsigned char>(rest[1])) && rest[2] == '_') rest = rest.substr(3);
  return leading_number(rest);
}

Result<std::vector<Claim>> read_claims(const fs::path& tsv) {
  auto text = read_file(tsv);
  if (!text) return text.unexpected();
  std::istringstream in(*text);
  std::string line;
  if (!std::getline(in, line)) return fail(ErrorCode::kParse, "{}: empty (a header line is needed)", tsv.string());
  std::map<std::string, size_t> col;
  auto header = split_tabs(line);
  for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  for (const char* need : {"file", "claimed_speedup"})
    if (!col.count(need)) return fail(ErrorCode::kParse, "{}:1: no column '{}' in the header", tsv.string(), need);
  std::vector<Claim> out;
  for (int n = 2; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    auto c = claim_of(col, split_tabs(line), fmt::format("{}:{}", tsv.string(), n));
    if (!c) return c.unexpected();
    out.push_back(std::move(*c));
  }
  return out;
}

Result<std::vector<RecheckItem>> plan_recheck(const fs::path& solutions, const fs::path& claims_tsv,
                                              const std::vector<Claim>& claims, const fs::path& problems) {
  std::error_code ec;
  if (!fs::is_directory(solutions, ec)) return fail(ErrorCode::kNotFound, "{}: no such folder", solutions.string());
  if (!fs::is_directory(problems, ec)) return fail(ErrorCode::kNotFound, "{}: no such folder", problems.string());
  std::map<fs::path, const Claim*> by_file;
  for (const auto& c : claims) {
    fs::path p = fs::weakly_canonical(claims_tsv.parent_path() / c.file, ec);
    if (!fs::is_regular_file(p, ec)) return fail(ErrorCode::kNotFound, "{}: the claim for '{}': no such file", claims_tsv.string(), c.file);
    by_file[p] = &c;
  }
  std::vector<RecheckItem> out;
  for (const auto& e : fs::recursive_directory_iterator(solutions, ec))
    if (e.is_regular_file() && e.path().extension() == ".py") out.push_back({e.path(), std::nullopt, std::nullopt, ""});
  if (ec) return fail("{}: cannot list: {}", solutions.string(), ec.message());
  for (auto& item : out) {
    if (auto it = by_file.find(fs::weakly_canonical(item.solution, ec)); it != by_file.end()) item.claim = *it->second;
    auto id = item.claim && item.claim->problem_id ? item.claim->problem_id : problem_number_of(item.solution.filename().string());
    if (!id) {
      item.problem_error = "no problem number in its file name and no claim row naming one";
      continue;
    }
    item.problem = problem_file(problems, *id);
    if (!item.problem) item.problem_error = fmt::format("no problem file numbered {} in {}", *id, problems.string());
  }
  auto num = [](const RecheckItem& i) { return problem_number_of(i.solution.filename().string()).value_or(1 << 30); };
  std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
    return num(a) != num(b) ? num(a) < num(b) : a.solution < b.solution;
  });
  return out;
}

}  // namespace kevo::interop
