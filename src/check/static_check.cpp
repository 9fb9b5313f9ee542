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

// The two views of the source the rules look at; both keep every offset of the original.
struct Texts {
  std::string code;  // comments and literals blanked: identifiers as the compiler sees them
  std::string keep;  // comments blanked only: for #include names and inline asm strings
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

// Calls fn(offset of the asm keyword, asm body) for each inline asm statement in t.keep.
template <class F>
void for_each_asm(const Texts& t, F&& fn) {
  static const std::regex asm_re(R"(\b(asm|__asm__|__asm)\b((?:\s*(?:volatile|__volatile__|goto|inline))*)\s*\()");
  for (std::sregex_iterator it(t.keep.begin(), t.keep.end(), asm_re), end; it != end; ++it) {
    size_t open = it->position() + it->length() - 1;
    size_t close = match_paren(t.keep, open);
    if (close == std::string::npos) close = t.keep.size();
    // Escapes inside the asm string ("\n\tsyscall") must not hide word boundaries.
    std::string body = t.keep.substr(open, close - open);
    for (size_t i = 0; i + 1 < body.size(); ++i)
      if (body[i] == '\\' && std::isalpha(static_cast<unsigned char>(body[i + 1]))) body[i] = body[i + 1] = ' ';
    fn(static_cast<size_t>(it->position()), body);
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
  const std::string& s = t.code;
  for (size_t p = s.find("<<<"); p != std::string::npos; p = s.find("<<<", p + 3)) {
    size_t e = s.find(">>>", p + 3);
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
      hits.emplace_back(p, "launch without a stream argument runs on the default stream");
    } else {
      std::string st = trim(args[3]);
      st.erase(std::remove_if(st.begin(), st.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); }),
               st.end());
      if (kDefault.count(st)) hits.emplace_back(p, "launch on stream " + st + " (the default stream)");
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

void find_forward_bodies(Texts& t) {
  static const std::regex re(R"(\bkevo_forward\s*\([^)]*\)\s*\{)");
  for (std::sregex_iterator it(t.code.begin(), t.code.end(), re), end; it != end; ++it) {
    size_t open = it->position() + it->length() - 1;
    size_t close = match_paren(t.code, open, '{', '}');
    t.forward_bodies.emplace_back(open, close == std::string::npos ? t.code.size() : close);
  }
}

}  // namespace

std::vector<Finding> static_check(std::string_view source, const StaticCheckOptions& opts) {
  Texts t;
  t.keep = blank_comments_and_strings(source, false);
  t.code = blank_comments_and_strings(source, true);
  for (size_t i = 0; i < t.code.size(); ++i)
    if (t.code[i] == '\n') t.line_starts.push_back(i + 1);
  find_forward_bodies(t);
  t.file_access = find_host_file_access(t.code, t.keep);
  const bool half_variable = declares_half_variable(t.code);

  std::vector<Finding> out;
  std::set<std::pair<std::string, int>> seen;
  for (const Rule& r : kRules) {
    if (!applies(r.when, opts)) continue;
    const std::string& text = r.view == View::Code ? t.code : t.keep;
    Hits hits;
    if (r.custom) {
      hits = r.custom(t, opts);
    } else {
      std::regex re(r.pattern);
      for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it) {
        std::string name = it->str(0);
        for (size_t g = 1; g < it->size(); ++g)
          if ((*it)[g].matched && (*it)[g].length() > 0) {
            name = (*it)[g].str();
            break;
          }
        size_t off = it->position();
        if (r.guard == Guard::NotMember && preceded_by_member_access(text, off)) continue;
        if (r.guard == Guard::HalfIsType && half_variable && (name == "half" || name == "half2")) continue;
        hits.emplace_back(off, trim(name));
      }
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
