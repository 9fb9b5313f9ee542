#include "check/static_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <regex>
#include <set>

#include "compile/include_rules.h"

namespace kevo {
namespace {

using Sev = Finding::Severity;

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// A view of the source for the regular expressions: every whitespace run is one character ('\n'
// if it holds a newline) and identifiers are cut at kMaxIdent characters, with the original offset
// of each character kept. std::regex backtracks recursively, one stack frame per repetition, so a
// 1 MiB run of spaces or of one identifier would overflow the stack; here no repetition in a rule
// runs longer than kMaxIdent.
struct Compact {
  static constexpr size_t kMaxIdent = 256;
  std::string text;
  std::vector<size_t> at;  // original offset of text[i]
  size_t orig(size_t i) const { return i < at.size() ? at[i] : (at.empty() ? 0 : at.back() + 1); }
};

Compact compact(const std::string& s) {
  Compact c;
  c.text.reserve(s.size());
  c.at.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (std::isspace(static_cast<unsigned char>(s[i]))) {
      size_t j = i;
      bool nl = false;
      while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) nl |= s[j++] == '\n';
      c.text += nl ? '\n' : ' ';
      c.at.push_back(i);
      i = j;
    } else if (ident_char(s[i])) {
      size_t j = i;
      while (j < s.size() && ident_char(s[j])) {
        if (j - i < Compact::kMaxIdent) c.text += s[j], c.at.push_back(j);
        ++j;
      }
      i = j;
    } else {
      c.text += s[i];
      c.at.push_back(i++);
    }
  }
  return c;
}

// The two views of the source the rules look at, compacted; hits carry original offsets.
struct Texts {
  Compact code;  // comments and literals blanked: identifiers as the compiler sees them
  Compact keep;  // comments blanked only: for #include names and inline asm strings
  std::vector<size_t> line_starts;
  std::vector<std::pair<size_t, size_t>> forward_bodies;  // [begin, end) of kevo_forward's body
  std::vector<IncludeHit> file_access;  // compile/include_rules.h

  int line_of(size_t off) const {
    return static_cast<int>(std::upper_bound(line_starts.begin(), line_starts.end(), off) -
                            line_starts.begin()) + 1;
  }
  bool in_forward(size_t off) const {
    return std::any_of(forward_bodies.begin(), forward_bodies.end(),
                       [&](auto b) { return off >= b.first && off < b.second; });
  }
};

enum class View { Code, Keep };
enum class When { Always, NoCublas, NoCudnn, F32, Half };
enum class Scope { Anywhere, InForward };
enum class Guard {
  None,
  NotMember,    // not `x.name(` or `x->name(`: a method of the candidate's own object
  HalfIsType,   // `half` counts unless the source declares a variable called half
};

// Custom matchers return (offset, matched name) pairs.
using Hits = std::vector<std::pair<size_t, std::string>>;
using Matcher = Hits (*)(const Texts&, const StaticCheckOptions&);

struct Rule {
  const char* name;
  Sev severity;
  When when;
  View view;
  const char* pattern;  // ECMAScript; the first non-empty group (or the match) names the hit
  Matcher custom;       // used instead of pattern when set
  Scope scope;
  Guard guard;
  const char* message;  // {0}: what matched, {1}: the task's precision
};

Hits default_stream_launches(const Texts& t, const StaticCheckOptions&);

// The include rules (compile/include_rules.h): one static rule per kind, each with its own name.
template <IncludeRule R>
Hits file_access(const Texts& t, const StaticCheckOptions&) {
  Hits hits;
  for (const auto& h : t.file_access)
    if (h.rule == R) hits.emplace_back(h.offset, hit_message(h));
  return hits;
}
Hits asm_syscalls(const Texts& t, const StaticCheckOptions&);
Hits asm_lower_precision(const Texts& t, const StaticCheckOptions&);

constexpr Sev U = Sev::Unsafe;
constexpr Sev W = Sev::Warning;
constexpr auto A = Scope::Anywhere;

// One line per rule.
const Rule kRules[] = {
    {"host_include", U, When::Always, View::Keep, nullptr, file_access<IncludeRule::HostInclude>, A, Guard::None, "{0}"},
    {"embed_file", U, When::Always, View::Keep, nullptr, file_access<IncludeRule::EmbedFile>, A, Guard::None, "{0}"},
    {"line_directive", U, When::Always, View::Keep, nullptr, file_access<IncludeRule::LineDirective>, A, Guard::None, "{0}"},
    {"pragma_file", U, When::Always, View::Keep, nullptr, file_access<IncludeRule::PragmaFile>, A, Guard::None, "{0}"},
    {"has_include", U, When::Always, View::Keep, nullptr, file_access<IncludeRule::HasInclude>, A, Guard::None, "{0}"},
    {"stream_create", U, When::Always, View::Code, R"(\b(cudaStreamCreate\w*|cuStreamCreate\w*)\s*\()", nullptr, A, Guard::None,
     "{0} creates a stream: launch all work on a->stream"},
    {"other_stream", U, When::Always, View::Code, R"(\b(cudaStreamPerThread|cudaStreamLegacy|CU_STREAM_PER_THREAD|CU_STREAM_LEGACY)\b)", nullptr, A, Guard::None,
     "{0} is not a->stream: launch all work on a->stream"},
    {"default_stream_launch", W, When::Always, View::Code, nullptr, default_stream_launches, A, Guard::None,
     "{0}: launch on a->stream (4th <<<>>> argument)"},
    {"thread_create", U, When::Always, View::Code, R"(\b(std\s*::\s*(?:thread|jthread))\b(?!\s*::)|\b(std\s*::\s*async)\b|\b(pthread_create|thrd_create)\s*\()", nullptr, A, Guard::None,
     "{0} creates a host thread: no threads, launch everything on a->stream"},
    {"process_create", U, When::Always, View::Code, R"(\b(fork|vfork|clone|clone3|system|popen|posix_spawnp?|execlp?|execle|execvp?|execvpe|execve|fexecve)\s*\()", nullptr, A, Guard::NotMember,
     "{0} starts a process"},
    {"file_io", U, When::Always, View::Code, R"(\b(fopen|fopen64|freopen|open|open64|openat|creat|mkstemp|tmpfile)\s*\(|\b((?:basic_)?[io]?fstream)\b|\b(std\s*::\s*filesystem)\b)", nullptr, A, Guard::NotMember,
     "{0}: candidates must not touch files"},
    {"network_io", U, When::Always, View::Code, R"(\b(socket|socketpair|connect|getaddrinfo|gethostbyname|accept4?|sendto|recvfrom|sendmsg|recvmsg)\s*\(|\b(curl_easy_\w+))", nullptr, A, Guard::NotMember,
     "{0}: candidates must not use the network"},
    {"dynamic_loading", U, When::Always, View::Code, R"(\b(dlopen|dlmopen|dlsym|dlvsym)\s*\()", nullptr, A, Guard::None,
     "{0} loads code at run time"},
    {"driver_launch", U, When::Always, View::Code, R"(\b(cuLaunch\w*|cuModuleLoad\w*|cuModuleGetFunction|cuLibraryLoad\w*|cuLibraryGetKernel)\s*\(|\b(cuGetProcAddress\w*|cudaGetDriverEntryPoint\w*)\b)", nullptr, A, Guard::None,
     "{0} loads or launches code through the driver API"},
    {"host_callback", W, When::Always, View::Code, R"(\b(cudaLaunchHostFunc|cudaStreamAddCallback)\s*\()", nullptr, A, Guard::None,
     "{0} runs host code on a driver thread"},
    {"cublas", U, When::NoCublas, View::Keep, R"(#\s*include\s*[<"]\s*(cublas\w*\.h))", nullptr, A, Guard::None,
     "includes {0}, but this task does not allow cuBLAS"},
    {"cublas", U, When::NoCublas, View::Code, R"(\b(cublas[A-Z]\w*)\s*\()", nullptr, A, Guard::None,
     "calls {0}, but this task does not allow cuBLAS"},
    {"cudnn", U, When::NoCudnn, View::Keep, R"(#\s*include\s*[<"]\s*(cudnn\w*\.h))", nullptr, A, Guard::None,
     "includes {0}, but this task does not allow cuDNN"},
    {"cudnn", U, When::NoCudnn, View::Code, R"(\b(cudnn[A-Z]\w*)\s*\()", nullptr, A, Guard::None,
     "calls {0}, but this task does not allow cuDNN"},
    {"asm_syscall", U, When::Always, View::Keep, nullptr, asm_syscalls, A, Guard::None,
     "inline asm makes a system call ({0})"},
    {"device_reset", U, When::Always, View::Code, R"(\b(cudaDeviceReset)\s*\()", nullptr, A, Guard::None,
     "{0} destroys the context kevo runs in"},
    {"device_change", U, When::Always, View::Code, R"(\b(cudaSetDevice|cuCtxSetCurrent|cuCtxCreate\w*|cuCtxPushCurrent\w*)\s*\()", nullptr, A, Guard::None,
     "{0} changes the device or context"},
    {"pinned_alloc", W, When::Always, View::Code, R"(\b(cudaMallocHost|cudaHostAlloc|cudaHostRegister)\s*\()", nullptr, A, Guard::None,
     "{0} allocates pinned host memory"},
    {"alloc_in_forward", W, When::Always, View::Code, R"(\b(cudaMalloc|cudaMallocAsync|cudaMallocManaged|cudaMallocPitch|cudaMalloc3D|cudaMallocFromPoolAsync|cuMemAlloc\w*)\s*\()", nullptr, Scope::InForward, Guard::None,
     "{0} in kevo_forward allocates on every call: allocate once: use a->workspace"},
    {"lower_precision", W, When::F32, View::Code, R"(\b(__half2?|half2?|__nv_bfloat16[2]?|nv_bfloat162?|__nv_bfloat162|__float2half\w*|__float22half2\w*|__float2bfloat16\w*|__float22bfloat162\w*|__nv_fp8\w*|__float_to_tf32|tf32)\b)", nullptr, A, Guard::HalfIsType,
     "{0}: computes in lower precision than the task ({1})"},
    {"lower_precision", W, When::Half, View::Code, R"(\b(__nv_fp8\w*|__nv_fp4\w*|__nv_fp6\w*)\b)", nullptr, A, Guard::None,
     "{0}: computes in lower precision than the task ({1})"},
    {"lower_precision", W, When::Always, View::Keep, nullptr, asm_lower_precision, A, Guard::None,
     "inline asm {0}: computes in lower precision than the task ({1})"},
    {"process_exit", W, When::Always, View::Code, R"(\b(exit|_exit|_Exit|abort|quick_exit|terminate)\s*\()", nullptr, A, Guard::NotMember,
     "{0}() ends the process: the runtime classifies this as a failure"},
    {"sleep", W, When::Always, View::Code, R"(\b(sleep|usleep|nanosleep|clock_nanosleep|__nanosleep|sleep_for|sleep_until)\s*\()", nullptr, A, Guard::NotMember,
     "{0} sleeps"},
};

bool applies(When w, const StaticCheckOptions& o) {
  switch (w) {
    case When::Always: return true;
    case When::NoCublas: return !o.allow_cublas;
    case When::NoCudnn: return !o.allow_cudnn;
    case When::F32: return o.precision == "f32";
    case When::Half: return o.precision == "f16" || o.precision == "bf16";
  }
  return true;
}

bool preceded_by_member_access(const std::string& s, size_t off) {
  size_t i = off;
  while (i > 0 && std::isspace(static_cast<unsigned char>(s[i - 1]))) --i;
  if (i >= 1 && s[i - 1] == '.') return true;
  return i >= 2 && s[i - 1] == '>' && s[i - 2] == '-';
}

// Index just past the parenthesized group opening at s[open] == '(' (or npos).
size_t match_paren(const std::string& s, size_t open, char l = '(', char r = ')') {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (s[i] == l) ++depth;
    if (s[i] == r && --depth == 0) return i + 1;
  }
  return std::string::npos;
}

bool is_asm_qualifier(std::string_view w) {
  return w == "volatile" || w == "__volatile__" || w == "goto" || w == "inline";
}

// Calls fn(original offset of the asm keyword, asm body) for each inline asm statement in t.keep.
// Statements do not nest, so the scan resumes after each body: linear in the source.
template <class F>
void for_each_asm(const Texts& t, F&& fn) {
  const std::string& s = t.keep.text;
  for (size_t i = 0; i < s.size();) {
    if (!ident_char(s[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < s.size() && ident_char(s[j])) ++j;
    std::string_view w(s.data() + i, j - i);
    const size_t kw = i;
    i = j;
    if (w != "asm" && w != "__asm__" && w != "__asm") continue;
    // asm [qualifiers] ( ... )
    for (;;) {
      while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) ++j;
      size_t k = j;
      while (k < s.size() && ident_char(s[k])) ++k;
      if (k == j || !is_asm_qualifier(std::string_view(s.data() + j, k - j))) break;
      j = k;
    }
    if (j >= s.size() || s[j] != '(') continue;
    size_t close = match_paren(s, j);
    if (close == std::string::npos) close = s.size();
    // Escapes inside the asm string ("\n\tsyscall") must not hide word boundaries; the body is
    // compacted again so the rules' regexes stay shallow.
    std::string body = s.substr(j, close - j);
    for (size_t b = 0; b + 1 < body.size(); ++b)
      if (body[b] == '\\' && std::isalpha(static_cast<unsigned char>(body[b + 1]))) body[b] = body[b + 1] = ' ';
    fn(t.keep.orig(kw), compact(body).text);
    i = close;
  }
}

Hits asm_syscalls(const Texts& t, const StaticCheckOptions&) {
  static const std::regex sys_re(R"(\b(syscall|sysenter|svc)\b|\bint\s*\$?0x80\b)");
  Hits hits;
  for_each_asm(t, [&](size_t off, const std::string& body) {
    std::smatch m;
    if (std::regex_search(body, m, sys_re)) hits.emplace_back(off, m.str(0));
  });
  return hits;
}

Hits asm_lower_precision(const Texts& t, const StaticCheckOptions& o) {
  static const std::regex f32_re(R"(\.(f16|bf16|f16x2|bf16x2|tf32|e4m3|e5m2|e2m1)\b)");
  static const std::regex half_re(R"(\.(e4m3|e5m2|e2m1|e3m2|e2m3)\b)");
  const std::regex* re = o.precision == "f32"                            ? &f32_re
                         : (o.precision == "f16" || o.precision == "bf16") ? &half_re
                                                                            : nullptr;
  Hits hits;
  if (!re) return hits;
  for_each_asm(t, [&](size_t off, const std::string& body) {
    std::smatch m;
    if (std::regex_search(body, m, *re)) hits.emplace_back(off, "uses " + m.str(0));
  });
  return hits;
}

std::string trim(std::string s) {
  size_t b = s.find_first_not_of(" \t\n");
  size_t e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

Hits default_stream_launches(const Texts& t, const StaticCheckOptions&) {
  static const std::set<std::string> kDefault = {"0", "0L", "0u", "NULL", "nullptr", "(cudaStream_t)0",
                                                 "(cudaStream_t)nullptr", "cudaStream_t(0)",
                                                 "cudaStream_t{}", "cudaStreamDefault", "{}"};
  Hits hits;
  const std::string& s = t.code.text;
  // Launch configurations do not nest: the next one is searched after this one's ">>>" (linear).
  for (size_t p = s.find("<<<"), e = 0; p != std::string::npos; p = s.find("<<<", e + 3)) {
    e = s.find(">>>", p + 3);
    if (e == std::string::npos) break;
    // Split on top-level commas.
    std::vector<std::string> args(1);
    int depth = 0;
    for (size_t i = p + 3; i < e; ++i) {
      char c = s[i];
      if (c == '(' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == ']' || c == '}') --depth;
      if (c == ',' && depth == 0) {
        args.emplace_back();
      } else {
        args.back() += c;
      }
    }
    if (args.size() < 4) {
      hits.emplace_back(t.code.orig(p), "launch without a stream argument runs on the default stream");
    } else {
      std::string st = trim(args[3]);
      st.erase(std::remove_if(st.begin(), st.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); }),
               st.end());
      if (kDefault.count(st)) hits.emplace_back(t.code.orig(p), "launch on stream " + st + " (the default stream)");
    }
  }
  return hits;
}

// True when the source declares a variable (not the cuda_fp16 type) called `half`.
bool declares_half_variable(const std::string& code) {
  static const std::regex re(
      R"(\b(int|long|unsigned|size_t|int64_t|int32_t|auto|float|double|const|constexpr)\s+(half2?)\s*[=;,)\[])");
  return std::regex_search(code, re);
}

// kevo_forward ( params ) ... { body }: the bodies' original extents. Bounded scans, resuming after
// each body, keep a source of repeated "kevo_forward(" linear.
void find_forward_bodies(Texts& t) {
  constexpr std::string_view kName = "kevo_forward";
  constexpr size_t kMaxParams = 4096, kMaxBetween = 256;
  const std::string& s = t.code.text;
  for (size_t p = s.find(kName); p != std::string::npos; p = s.find(kName, p + 1)) {
    const size_t end = p + kName.size();
    if ((p > 0 && ident_char(s[p - 1])) || (end < s.size() && ident_char(s[end]))) continue;
    size_t i = end;
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i >= s.size() || s[i] != '(') continue;
    size_t close = match_paren(s.substr(i, kMaxParams), 0);
    if (close == std::string::npos) continue;
    size_t open = std::string::npos;
    for (size_t j = i + close; j < s.size() && j < i + close + kMaxBetween; ++j) {
      if (s[j] == ';' || s[j] == ',' || s[j] == '=' || s[j] == '}') break;
      if (s[j] == '{') {
        open = j;
        break;
      }
    }
    if (open == std::string::npos) continue;
    size_t body_end = match_paren(s, open, '{', '}');
    if (body_end == std::string::npos) body_end = s.size();
    t.forward_bodies.emplace_back(t.code.orig(open), t.code.orig(body_end));
    p = body_end - 1;
  }
}

// Calls fn(offset, match) for each match of a rule's pattern in text. Every alternative of a
// pattern that begins with \b starts where an identifier does, and one that begins with '#' at a
// '#': those are tried at such positions alone (anchored), several times faster than std::regex's
// attempt at every position.
template <class F>
void for_each_match(const std::string& text, const char* pattern, F&& fn) {
  const std::regex re(pattern);
  const std::string_view p(pattern);
  const bool at_ident = p.substr(0, 2) == "\\b", at_hash = !p.empty() && p[0] == '#';
  if (!at_ident && !at_hash) {
    for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it)
      fn(static_cast<size_t>(it->position()), *it);
    return;
  }
  namespace rc = std::regex_constants;
  std::smatch m;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool start = at_hash ? text[i] == '#' : ident_char(text[i]) && (i == 0 || !ident_char(text[i - 1]));
    if (!start) continue;
    const auto flags = rc::match_continuous | (i > 0 ? rc::match_prev_avail : rc::match_default);
    if (!std::regex_search(text.begin() + static_cast<std::ptrdiff_t>(i), text.end(), m, re, flags)) continue;
    fn(i, m);
    i += std::max<size_t>(m.length(0), 1) - 1;
  }
}

}  // namespace

std::vector<Finding> static_check(std::string_view source, const StaticCheckOptions& opts) {
  Texts t;
  {
    const std::string keep = blank_comments_and_strings(source, false);
    const std::string code = blank_comments_and_strings(source, true);
    for (size_t i = 0; i < source.size(); ++i)
      if (source[i] == '\n') t.line_starts.push_back(i + 1);
    t.file_access = find_host_file_access(code, keep);
    t.keep = compact(keep);
    t.code = compact(code);
  }
  find_forward_bodies(t);
  const bool half_variable = declares_half_variable(t.code.text);

  std::vector<Finding> out;
  std::set<std::pair<std::string, int>> seen;
  for (const Rule& r : kRules) {
    if (!applies(r.when, opts)) continue;
    const Compact& view = r.view == View::Code ? t.code : t.keep;
    const std::string& text = view.text;
    Hits hits;
    if (r.custom) {
      hits = r.custom(t, opts);
    } else {
      for_each_match(text, r.pattern, [&](size_t off, const std::smatch& m) {
        std::string name = m.str(0);
        for (size_t g = 1; g < m.size(); ++g)
          if (m[g].matched && m[g].length() > 0) {
            name = m[g].str();
            break;
          }
        if (r.guard == Guard::NotMember && preceded_by_member_access(text, off)) return;
        if (r.guard == Guard::HalfIsType && half_variable && (name == "half" || name == "half2")) return;
        hits.emplace_back(view.orig(off), trim(name));
      });
    }
    for (const auto& [off, name] : hits) {
      if (r.scope == Scope::InForward && !t.in_forward(off)) continue;
      int line = t.line_of(off);
      if (!seen.insert({r.name, line}).second) continue;
      out.push_back({r.severity, line, r.name, fmt::format(fmt::runtime(r.message), name, opts.precision)});
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) { return a.line < b.line; });
  return out;
}

std::string format_findings(const std::vector<Finding>& findings) {
  std::string s;
  for (const auto& f : findings)
    s += fmt::format("line {}: {}: {} [{}]\n", f.line, f.severity == Sev::Unsafe ? "unsafe" : "warning",
                     f.message, f.rule);
  return s;
}

bool has_unsafe(const std::vector<Finding>& findings) {
  return std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.severity == Sev::Unsafe; });
}

}  // namespace kevo
