#include "interop/recheck_results.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "util/fs.h"

namespace kevo::interop {
namespace fs = std::filesystem;

namespace {

constexpr const char* kHeader =
    "file\tsha256\tevaluator\tproblem\toutcome\treason\teager\teager_low\teager_high\tcompile\tcompile_low\t"
    "compile_high\tclaimed\tkernelbench_allclose\tseconds";
constexpr size_t kColumns = 15;

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '\t') out += "\\t";
    else if (c == '\n') out += "\\n";
    else if (c != '\r') out += c;
  }
  return out;
}

std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    const char n = s[++i];
    out += n == 't' ? '\t' : n == 'n' ? '\n' : n;
  }
  return out;
}

std::string number(std::optional<double> v) { return v ? fmt::format("{:.6g}", *v) : "-"; }

std::optional<double> parse_number(const std::string& s) {
  if (s == "-") return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end) return std::nullopt;
  return v;
}

std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> out(1);
  for (char c : line) {
    if (c == '\t') out.emplace_back();
    else out.back() += c;
  }
  return out;
}

}  // namespace

std::string result_line(const RecheckRow& r) {
  const auto& v = r.verdict;
  auto part = [](const std::optional<Speedup>& s, double Speedup::*f) {
    return s ? number((*s).*f) : std::string("-");
  };
  return fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}", escape(r.file), r.sha256, r.evaluator,
                     escape(r.problem), to_string(v.outcome), escape(v.reason), part(v.vs_eager, &Speedup::median),
                     part(v.vs_eager, &Speedup::low), part(v.vs_eager, &Speedup::high),
                     part(v.vs_compile, &Speedup::median), part(v.vs_compile, &Speedup::low),
                     part(v.vs_compile, &Speedup::high), number(r.claimed), to_string(v.kernelbench_allclose),
                     fmt::format("{:.3f}", r.seconds));
}

Result<RecheckRow> parse_result_line(const std::string& line) {
  auto c = cells_of(line);
  if (c.size() != kColumns) return fail(ErrorCode::kParse, "{} columns, {} expected", c.size(), kColumns);
  RecheckRow r;
  r.file = unescape(c[0]);
  r.sha256 = c[1];
  r.evaluator = c[2];
  r.problem = unescape(c[3]);
  auto o = parse_solution_outcome(c[4]);
  if (!o) return fail(ErrorCode::kParse, "unknown outcome '{}'", c[4]);
  r.verdict.outcome = *o;
  r.verdict.reason = unescape(c[5]);
  auto speedup = [&](size_t at) -> std::optional<Speedup> {
    auto m = parse_number(c[at]), lo = parse_number(c[at + 1]), hi = parse_number(c[at + 2]);
    if (!m) return std::nullopt;
    return Speedup{*m, lo.value_or(*m), hi.value_or(*m)};
  };
  r.verdict.vs_eager = speedup(6);
  r.verdict.vs_compile = speedup(9);
  r.claimed = parse_number(c[12]);
  auto k = parse_loose_check(c[13]);
  if (!k) return fail(ErrorCode::kParse, "unknown allclose verdict '{}'", c[13]);
  r.verdict.kernelbench_allclose = *k;
  r.seconds = parse_number(c[14]).value_or(0);
  return r;
}

Result<std::vector<RecheckRow>> read_results(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::vector<RecheckRow>{};
  auto text = read_file(path);
  if (!text) return text.unexpected();
  std::vector<RecheckRow> out;
  std::istringstream in(*text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || (n == 1 && line == kHeader)) continue;
    auto r = parse_result_line(line);
    // A last line cut short by an interruption is checked again, not an error.
    if (!r && in.peek() == EOF) break;
    if (!r) return fail(ErrorCode::kParse, "{}:{}: not a recheck result row: {}", path.string(), n, r.error().message);
    out.push_back(std::move(*r));
  }
  return out;
}

Status append_result(const fs::path& path, const RecheckRow& row) {
  std::error_code ec;
  const bool fresh = !fs::exists(path, ec) || fs::file_size(path, ec) == 0;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return fail(ErrorCode::kIo, "{}: cannot open for appending: {}", path.string(), std::strerror(errno));
  std::string text = (fresh ? std::string(kHeader) + "\n" : std::string()) + result_line(row) + "\n";
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  if (!ok) return fail(ErrorCode::kIo, "{}: cannot append a result: {}", path.string(), std::strerror(err));
  return {};
}

}  // namespace kevo::interop
