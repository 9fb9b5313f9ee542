#include "compile/diagnostics.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <regex>
#include <set>
#include <vector>

#include "compile/sandbox.h"
#include "util/fs.h"

namespace kevo {
namespace {

enum class Sev { Error, Warning, Note };

struct Block {
  Sev sev;
  std::vector<std::string> lines;
};

// Source excerpts in nvcc messages show its own rewriting of the CUDA keywords; undo it so the
// excerpt matches what the model wrote. Returns how many characters were removed before each
// original column, so the caret line under the excerpt can be moved with it.
std::string restore_keywords(const std::string& s, std::vector<std::pair<size_t, size_t>>* removed) {
  static const std::pair<std::string_view, std::string_view> kRewrites[] = {
      {"__attribute__((global))", "__global__"},     {"__attribute__((device))", "__device__"},
      {"__attribute__((host))", "__host__"},         {"__attribute__((shared))", "__shared__"},
      {"__attribute__((constant))", "__constant__"}, {"__attribute__((managed))", "__managed__"},
  };
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    bool hit = false;
    for (const auto& [from, to] : kRewrites) {
      if (s.compare(i, from.size(), from) == 0) {
        out += to;
        if (removed) removed->emplace_back(i, from.size() - to.size());
        i += from.size();
        hit = true;
        break;
      }
    }
    if (!hit) out += s[i++];
  }
  return out;
}

// Moves a caret line ("      ^") left by what restore_keywords removed before the caret.
std::string shift_caret(const std::string& line, const std::vector<std::pair<size_t, size_t>>& removed) {
  size_t caret = line.find('^');
  if (caret == std::string::npos || line.find_first_not_of(" \t^") != std::string::npos) return line;
  size_t shift = 0;
  for (const auto& [pos, n] : removed)
    if (pos < caret) shift += n;
  return line.substr(std::min(shift, caret));
}

std::string temp_prefix() {
  std::error_code ec;
  std::string t = std::filesystem::temp_directory_path(ec).string();
  if (ec || t.empty()) t = "/tmp";
  if (t.back() != '/') t += '/';
  return t;
}

// Replaces the private paths in one line by the shown name.
std::string replace_paths(const std::string& line, std::string_view shown) {
  static const std::string tmp = temp_prefix();
  // A path token: no spaces, quotes, parentheses or colons (which end it in every log format).
  static const std::regex path_re(R"([^\s'"`():,;]+)");
  std::string out;
  size_t last = 0;
  for (std::sregex_iterator it(line.begin(), line.end(), path_re), end; it != end; ++it) {
    const std::string tok = it->str();
    std::string base = tok.substr(tok.rfind('/') == std::string::npos ? 0 : tok.rfind('/') + 1);
    bool ours = base.rfind(kCompileSourceStem, 0) == 0 || base.rfind("tmpxft_", 0) == 0 ||
                tok.rfind(tmp, 0) == 0 || tok.rfind("/tmp/", 0) == 0;
    if (!ours) continue;
    out.append(line, last, it->position() - last);
    out.append(shown);
    last = it->position() + tok.size();
    // Drop the object-file offset the linker appends: "x.cpp:(.text+0x52)".
    static const std::regex offset_re(R"(^:\(\.[\w.]+\+0x[0-9a-f]+\))");
    std::smatch m;
    std::string rest = line.substr(last);
    if (std::regex_search(rest, m, offset_re)) last += m.length(0);
  }
  out.append(line, last, std::string::npos);
  return out;
}

bool is_noise(const std::string& l) {
  static const std::regex noise_re(
      R"(^(ptxas info\s*:|\s+\d+ bytes stack frame|Remark: The warnings can be suppressed|)"
      R"(\d+ errors? detected in the compilation of|nvcc warning\s*:|collect2: error: ld returned|)"
      R"(compilation terminated\.|In file included from|\s+from [^ ]+[:,]$))");
  static const std::regex gcc_context_re(R"(: In (function|member function|instantiation of|constructor|destructor) .*:$)");
  return std::regex_search(l, noise_re) || std::regex_search(l, gcc_context_re);
}

// Whether the compiler may quote lines of `file` (as the compiler wrote it, before paths are
// replaced) back: the candidate's own (kevo_src.*, nvcc's tmpxft_* intermediates of it), kevo's
// headers and the toolkit's and system's. Any other file's text (had one been read, despite the
// include rules and the sandbox) is withheld, so a diagnostic cannot carry a host file out.
bool quotable_file(const std::string& file) {
  const std::string base = file.substr(file.rfind('/') == std::string::npos ? 0 : file.rfind('/') + 1);
  if (base.rfind(kCompileSourceStem, 0) == 0 || base.rfind("tmpxft_", 0) == 0) return true;
  static const std::vector<std::string> kTrusted = [] {
    std::vector<std::string> t = {"/usr/", (kevo_home() / "include").string() + "/"};
    if (auto root = toolkit_root("nvcc"); !root.empty()) t.push_back(root.string() + "/");
    return t;
  }();
  if (file.find("..") != std::string::npos) return false;
  return std::any_of(kTrusted.begin(), kTrusted.end(),
                     [&](const std::string& d) { return file.rfind(d, 0) == 0; });
}

// The file a diagnostic's first line names ("f(12): error", "f:12:3: error"), or "".
std::string header_file(const std::string& l) {
  static const std::regex re(R"(^(.+?)(?:\((\d+)\)|:(\d+):(\d+)): (?:catastrophic error|internal error|fatal error|error|warning|remark|note)\b)");
  std::smatch m;
  return std::regex_search(l, m, re) ? m[1].str() : "";
}

bool starts_indented(const std::string& l) { return !l.empty() && (l[0] == ' ' || l[0] == '\t'); }

// Recognizes the first line of a diagnostic and returns it rewritten in one style
// ("file(line): error: message"), or nullopt.
std::optional<std::pair<Sev, std::string>> parse_header(const std::string& l,
                                                        std::string& pending_ld_function) {
  static const std::regex cudafe_re(
      R"(^(.+)\((\d+)\): (catastrophic error|internal error|error|warning|remark)(?: #[\w-]+)?: (.*)$)");
  static const std::regex gcc_re(R"(^(.+?):(\d+):(\d+): (fatal error|error|warning|note): (.*)$)");
  static const std::regex ptxas_loc_re(R"(^ptxas .*, line \d+; (error|warning)\s*: (.*)$)");
  static const std::regex ptxas_re(R"(^ptxas (fatal|error|warning)\s*: (.*)$)");
  static const std::regex ld_fn_re(R"(^(?:/\S*/)?ld(?:\.\w+)?: (.*): in function `([^']+)':$)");
  static const std::regex ld_re(R"(^(?:/\S*/)?ld(?:\.\w+)?: (.*)$)");
  static const std::regex undef_re(R"(^(.*?): ?(undefined reference to .*)$)");
  // gold's form of the same ("obj:src:function f: error: undefined reference to 'x'"), written as
  // ld.bfd writes it, so a candidate's diagnostics do not depend on the linker.
  static const std::regex gold_undef_re(R"(^.*:function ([^:]+): error: undefined reference to '(.*)'$)");
  static const std::regex nvcc_re(R"(^nvcc (fatal|error)\s*: (.*)$)");
  auto sev_of = [](const std::string& s) {
    if (s == "warning") return Sev::Warning;
    if (s == "remark" || s == "note") return Sev::Note;
    return Sev::Error;
  };
  std::smatch m;
  if (std::regex_match(l, m, cudafe_re)) {
    std::string sev = m[3];
    return std::pair{sev_of(sev), fmt::format("{}({}): {}: {}", m[1].str(), m[2].str(), sev, m[4].str())};
  }
  if (std::regex_match(l, m, gcc_re)) {
    std::string sev = m[4];
    return std::pair{sev_of(sev), fmt::format("{}({}): {}: {}", m[1].str(), m[2].str(), sev, m[5].str())};
  }
  if (std::regex_match(l, m, ptxas_loc_re) || std::regex_match(l, m, ptxas_re)) {
    std::string sev = m[1] == "warning" ? "warning" : "error";
    return std::pair{sev_of(sev), fmt::format("ptxas {}: {}", sev, m[2].str())};
  }
  if (std::regex_match(l, m, nvcc_re)) return std::pair{Sev::Error, fmt::format("nvcc error: {}", m[2].str())};
  if (std::regex_match(l, m, ld_fn_re)) {
    pending_ld_function = m[2];
    return std::nullopt;
  }
  if (std::regex_match(l, m, gold_undef_re))
    return std::pair{Sev::Error, fmt::format("link error: undefined reference to `{}' (in {})", m[2].str(), m[1].str())};
  if (std::regex_search(l, m, undef_re)) {
    std::string where = pending_ld_function.empty() ? "" : fmt::format(" (in {})", pending_ld_function);
    return std::pair{Sev::Error, fmt::format("link error: {}{}", m[2].str(), where)};
  }
  if (std::regex_match(l, m, ld_re)) return std::pair{Sev::Error, fmt::format("link error: {}", m[1].str())};
  if (l.rfind("error", 0) == 0 || l.find(": error:") != std::string::npos ||
      l.find("fatal error") != std::string::npos)
    return std::pair{Sev::Error, l};
  return std::nullopt;
}

std::string render(const Block& b) {
  std::string s;
  for (const auto& l : b.lines) s += l + "\n";
  return s;
}

}  // namespace

std::string trim_diagnostics(std::string_view log, std::string_view shown_name, size_t max_chars) {
  constexpr size_t kMaxContinuation = 6;  // excerpt, caret and a few instantiation contexts
  std::vector<Block> blocks;
  std::vector<std::string> unrecognized;
  Block* cur = nullptr;
  std::string ld_function;
  std::vector<std::pair<size_t, size_t>> prev_removed;  // by the excerpt line before a caret line
  size_t pos = 0;
  while (pos < log.size()) {
    size_t nl = log.find('\n', pos);
    if (nl == std::string_view::npos) nl = log.size();
    std::string line(log.substr(pos, nl - pos));
    pos = nl + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    // std::regex recurses per character: a line quoting a 1 MiB one-line source must not reach it.
    constexpr size_t kMaxLine = 4096;
    if (line.size() > kMaxLine) line.resize(kMaxLine);
    if (line.find_first_not_of(" \t") == std::string::npos) {
      cur = nullptr;
      continue;
    }
    if (is_noise(line)) {
      // The indented lines after a noise header (e.g. ptxas properties) belong to the noise.
      if (!starts_indented(line)) cur = nullptr;
      continue;
    }
    const std::string raw_file = starts_indented(line) ? "" : header_file(line);
    line = replace_paths(line, shown_name);
    if (starts_indented(line)) {
      if (cur && cur->lines.size() <= kMaxContinuation) {
        std::vector<std::pair<size_t, size_t>> removed;
        std::string restored = restore_keywords(line, &removed);
        cur->lines.push_back(restored == line ? shift_caret(line, prev_removed) : restored);
        prev_removed = std::move(removed);
      }
      continue;
    }
    auto h = parse_header(line, ld_function);
    if (!h) {
      cur = nullptr;
      unrecognized.push_back(line);
      continue;
    }
    if (!raw_file.empty() && !quotable_file(raw_file)) {
      cur = nullptr;  // none of its excerpt lines either
      if (h->first != Sev::Note)
        blocks.push_back({h->first, {fmt::format("{}: {}: its text is not shown (not the candidate's file)",
                                                 raw_file, h->first == Sev::Error ? "error" : "warning")}});
      continue;
    }
    if (h->first == Sev::Note) {
      // gcc notes and nvcc remarks explain the diagnostic before them.
      if (!blocks.empty()) {
        cur = &blocks.back();
        cur->lines.push_back("  " + h->second);
      }
      continue;
    }
    blocks.push_back({h->first, {h->second}});
    cur = &blocks.back();
  }

  // Errors first, then warnings; identical blocks once.
  std::vector<std::string> errors, warnings;
  std::set<std::string> seen;
  for (const auto& b : blocks) {
    std::string r = render(b);
    if (!seen.insert(r).second) continue;
    (b.sev == Sev::Error ? errors : warnings).push_back(std::move(r));
  }
  if (errors.empty() && warnings.empty()) {
    // Nothing in a known format: keep the tail of what is left, which is where failures are.
    std::string s;
    for (auto it = unrecognized.rbegin(); it != unrecognized.rend(); ++it) {
      if (s.size() + it->size() + 1 > max_chars) break;
      s = *it + "\n" + s;
    }
    return s;
  }

  std::string out;
  size_t shown_errors = 0, shown_warnings = 0;
  bool full = false;
  auto emit = [&](const std::string& r, size_t& counter) {
    if (full) return;
    // Leave room for the "(N more ...)" note.
    if (out.size() + r.size() + 40 > max_chars) {
      if (out.empty()) {  // never return nothing: cut the first diagnostic instead
        out = r.substr(0, max_chars > 60 ? max_chars - 60 : max_chars) + "...\n";
        ++counter;
      }
      full = true;
      return;
    }
    out += r;
    if (r.find('\n') != r.size() - 1) out += "\n";  // a blank line between multi-line blocks
    ++counter;
  };
  for (const auto& e : errors) emit(e, shown_errors);
  for (const auto& w : warnings) emit(w, shown_warnings);
  size_t more_e = errors.size() - shown_errors, more_w = warnings.size() - shown_warnings;
  if (more_e || more_w) {
    std::string note;
    if (more_e) note = fmt::format("{} more error{}", more_e, more_e == 1 ? "" : "s");
    if (more_w)
      note += fmt::format("{}{} more warning{}", note.empty() ? "" : ", ", more_w, more_w == 1 ? "" : "s");
    out += "(" + note + ")\n";
  }
  while (out.size() >= 2 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n') out.pop_back();
  return out;
}

}  // namespace kevo
