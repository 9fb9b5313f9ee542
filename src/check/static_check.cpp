#include "check/static_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
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

// A rule matches names in the code (comments and literals blanked) or runs a custom matcher.
// `names` is a space-separated list, each matched where an identifier starts (as the compiler
// sees it: `xfork(` is not `fork(`):
//   f(     a call of f: the next non-space character is '('
//   p*     any identifier that begins with p (combines with "(")
//   a::b   a qualified name, spaces allowed around "::"
//   w!     the word where no "::" follows it (std::thread, not std::thread::id)
//   w      the word, whatever follows
// One pass over the identifiers tries only the names that start with each one, so the checks are
// linear in the source (a 1 MiB candidate of short identifiers took minutes with a regex per rule).
struct Rule {
  const char* name;
  Sev severity;
  When when;
  const char* names;  // the syntax above; nullptr when custom is set
  Matcher custom;
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
Hits cublas_headers(const Texts& t, const StaticCheckOptions&);
Hits cudnn_headers(const Texts& t, const StaticCheckOptions&);

constexpr Sev U = Sev::Unsafe;
constexpr Sev W = Sev::Warning;
constexpr auto A = Scope::Anywhere;
constexpr auto F = Scope::InForward;
constexpr auto G0 = Guard::None;
constexpr auto NM = Guard::NotMember;
constexpr Matcher N = nullptr;  // a rule of names

// One line per rule.
const Rule kRules[] = {
    {"host_include", U, When::Always, nullptr, file_access<IncludeRule::HostInclude>, A, G0, "{0}"},
    {"embed_file", U, When::Always, nullptr, file_access<IncludeRule::EmbedFile>, A, G0, "{0}"},
    {"line_directive", U, When::Always, nullptr, file_access<IncludeRule::LineDirective>, A, G0, "{0}"},
    {"pragma_file", U, When::Always, nullptr, file_access<IncludeRule::PragmaFile>, A, G0, "{0}"},
    {"has_include", U, When::Always, nullptr, file_access<IncludeRule::HasInclude>, A, G0, "{0}"},
    {"stream_create", U, When::Always, "cudaStreamCreate*( cuStreamCreate*(", N, A, G0,
     "{0} creates a stream: launch all work on a->stream"},
    {"other_stream", U, When::Always, "cudaStreamPerThread cudaStreamLegacy CU_STREAM_PER_THREAD CU_STREAM_LEGACY", N, A, G0,
     "{0} is not a->stream: launch all work on a->stream"},
    {"default_stream_launch", W, When::Always, nullptr, default_stream_launches, A, G0,
     "{0}: launch on a->stream (4th <<<>>> argument)"},
    {"thread_create", U, When::Always, "std::thread! std::jthread! std::async pthread_create( thrd_create(", N, A, G0,
     "{0} creates a host thread: no threads, launch everything on a->stream"},
    {"process_create", U, When::Always, "fork( vfork( clone( clone3( system( popen( posix_spawn( posix_spawnp( "
     "execl( execlp( execle( execv( execvp( execvpe( execve( fexecve(", N, A, NM,
     "{0} starts a process"},
    {"file_io", U, When::Always, "fopen( fopen64( freopen( open( open64( openat( creat( mkstemp( tmpfile( fstream ifstream "
     "ofstream basic_fstream basic_ifstream basic_ofstream std::filesystem", N, A, NM,
     "{0}: candidates must not touch files"},
    {"network_io", U, When::Always, "socket( socketpair( connect( getaddrinfo( gethostbyname( accept( accept4( sendto( "
     "recvfrom( sendmsg( recvmsg( curl_easy_*", N, A, NM,
     "{0}: candidates must not use the network"},
    {"dynamic_loading", U, When::Always, "dlopen( dlmopen( dlsym( dlvsym(", N, A, G0,
     "{0} loads code at run time"},
    {"driver_launch", U, When::Always, "cuLaunch*( cuModuleLoad*( cuModuleGetFunction( cuLibraryLoad*( cuLibraryGetKernel( "
     "cuGetProcAddress* cudaGetDriverEntryPoint*", N, A, G0,
     "{0} loads or launches code through the driver API"},
    {"host_callback", W, When::Always, "cudaLaunchHostFunc( cudaStreamAddCallback(", N, A, G0,
     "{0} runs host code on a driver thread"},
    {"cublas", U, When::NoCublas, nullptr, cublas_headers, A, G0,
     "includes {0}, but this task does not allow cuBLAS"},
    {"cublas", U, When::NoCublas, "cublas*(", N, A, G0,
     "calls {0}, but this task does not allow cuBLAS"},
    {"cudnn", U, When::NoCudnn, nullptr, cudnn_headers, A, G0,
     "includes {0}, but this task does not allow cuDNN"},
    {"cudnn", U, When::NoCudnn, "cudnn*(", N, A, G0,
     "calls {0}, but this task does not allow cuDNN"},
    {"asm_syscall", U, When::Always, nullptr, asm_syscalls, A, G0,
     "inline asm makes a system call ({0})"},
    {"device_reset", U, When::Always, "cudaDeviceReset(", N, A, G0,
     "{0} destroys the context kevo runs in"},
    {"device_change", U, When::Always, "cudaSetDevice( cuCtxSetCurrent( cuCtxCreate*( cuCtxPushCurrent*(", N, A, G0,
     "{0} changes the device or context"},
    {"pinned_alloc", W, When::Always, "cudaMallocHost( cudaHostAlloc( cudaHostRegister(", N, A, G0,
     "{0} allocates pinned host memory"},
    {"alloc_in_forward", W, When::Always, "cudaMalloc( cudaMallocAsync( cudaMallocManaged( cudaMallocPitch( cudaMalloc3D( "
     "cudaMallocFromPoolAsync( cuMemAlloc*(", N, F, G0,
     "{0} in kevo_forward allocates on every call: allocate once: use a->workspace"},
    {"lower_precision", W, When::F32, "__half __half2 half half2 __nv_bfloat16 __nv_bfloat162 nv_bfloat16 nv_bfloat162 "
     "__float2half* __float22half2* __float2bfloat16* __float22bfloat162* __nv_fp8* __float_to_tf32 tf32", N, A, Guard::HalfIsType,
     "{0}: computes in lower precision than the task ({1})"},
    {"lower_precision", W, When::Half, "__nv_fp8* __nv_fp4* __nv_fp6*", N, A, G0,
     "{0}: computes in lower precision than the task ({1})"},
    {"lower_precision", W, When::Always, nullptr, asm_lower_precision, A, G0,
     "inline asm {0}: computes in lower precision than the task ({1})"},
    {"process_exit", W, When::Always, "exit( _exit( _Exit( abort( quick_exit( terminate(", N, A, NM,
     "{0}() ends the process: the runtime classifies this as a failure"},
    {"sleep", W, When::Always, "sleep( usleep( nanosleep( clock_nanosleep( __nanosleep( sleep_for( sleep_until(", N, A, NM,
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

size_t skip_space(const std::string& s, size_t i) {
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return i;
}

size_t ident_end(const std::string& s, size_t i) {
  while (i < s.size() && ident_char(s[i])) ++i;
  return i;
}

// Calls fn(begin, end) for each identifier of s (runs of [A-Za-z0-9_] not led by a digit).
template <class F>
void for_each_identifier(const std::string& s, F&& fn) {
  for (size_t i = 0; i < s.size();) {
    if (!ident_char(s[i])) {
      ++i;
      continue;
    }
    const size_t j = ident_end(s, i);
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) fn(i, j);
    i = j;
  }
}

// True when the source declares a variable (not the cuda_fp16 type) called `half`:
// `<type> half2? [=;,)[]` with whitespace after the type.
bool declares_half_variable(const std::string& code) {
  static const std::set<std::string_view> kTypes = {"int",     "long",    "unsigned", "size_t", "int64_t",
                                                    "int32_t", "auto",    "float",    "double", "const",
                                                    "constexpr"};
  bool found = false;
  for_each_identifier(code, [&](size_t i, size_t j) {
    const std::string_view w(code.data() + i, j - i);
    if (found || (w != "half" && w != "half2")) return;
    const size_t after = skip_space(code, j);
    if (after >= code.size() || std::string_view("=;,)[").find(code[after]) == std::string_view::npos) return;
    size_t k = i;
    while (k > 0 && std::isspace(static_cast<unsigned char>(code[k - 1]))) --k;
    if (k == i) return;
    size_t b = k;
    while (b > 0 && ident_char(code[b - 1])) --b;
    found = kTypes.count(std::string_view(code.data() + b, k - b)) > 0;
  });
  return found;
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

enum class Follow { Anything, Call, NotScope };

// One entry of a rule's `names`, parsed (syntax at struct Rule).
struct NamePattern {
  size_t rule;  // index in kRules
  std::vector<std::string> parts;  // "std::thread" -> {"std", "thread"}
  bool prefix = false;  // the last part is a prefix
  Follow follow = Follow::Anything;
};

NamePattern parse_name(size_t rule, std::string_view n) {
  NamePattern p{rule, {}};
  if (n.ends_with('(')) p.follow = Follow::Call, n.remove_suffix(1);
  if (n.ends_with('!')) p.follow = Follow::NotScope, n.remove_suffix(1);
  if (n.ends_with('*')) p.prefix = true, n.remove_suffix(1);
  for (size_t at; (at = n.find("::")) != std::string_view::npos; n.remove_prefix(at + 2))
    p.parts.emplace_back(n.substr(0, at));
  p.parts.emplace_back(n);
  return p;
}

struct NameIndex {
  std::map<std::string, std::vector<NamePattern>, std::less<>> exact;  // by first part
  std::vector<NamePattern> prefixed;  // one part, a prefix
};

const NameIndex& name_index() {
  static const NameIndex index = [] {
    NameIndex x;
    for (size_t r = 0; r < std::size(kRules); ++r) {
      if (!kRules[r].names) continue;
      std::string_view list = kRules[r].names;
      for (size_t b = 0; b < list.size();) {
        size_t e = std::min(list.find(' ', b), list.size());
        if (e > b) {
          NamePattern p = parse_name(r, list.substr(b, e - b));
          if (p.prefix && p.parts.size() == 1) x.prefixed.push_back(p);
          else x.exact[p.parts[0]].push_back(p);
        }
        b = e + 1;
      }
    }
    return x;
  }();
  return index;
}

// End of the match of p at the identifier s[i, j) (whose first part already matched), or npos.
size_t match_end(const std::string& s, size_t j, const NamePattern& p) {
  for (size_t k = 1; k < p.parts.size(); ++k) {
    size_t q = skip_space(s, j);
    if (s.compare(q, 2, "::") != 0) return std::string::npos;
    q = skip_space(s, q + 2);
    j = ident_end(s, q);
    const std::string_view w(s.data() + q, j - q);
    const bool ok = (p.prefix && k + 1 == p.parts.size()) ? w.starts_with(p.parts[k]) : w == p.parts[k];
    if (q == j || !ok) return std::string::npos;
  }
  const size_t q = skip_space(s, j);
  switch (p.follow) {
    case Follow::Anything: return j;
    case Follow::Call: return q < s.size() && s[q] == '(' ? j : std::string::npos;
    case Follow::NotScope: return s.compare(q, 2, "::") == 0 ? std::string::npos : j;
  }
  return j;
}

// The hits of every rule of names, one pass over the code's identifiers.
void match_names(const Texts& t, const StaticCheckOptions& opts, std::vector<Hits>& per_rule) {
  const std::string& s = t.code.text;
  const NameIndex& index = name_index();
  const bool half_variable = declares_half_variable(s);
  auto attempt = [&](size_t i, size_t j, const NamePattern& p) {
    const Rule& r = kRules[p.rule];
    if (!applies(r.when, opts)) return;
    const size_t end = match_end(s, j, p);
    if (end == std::string::npos) return;
    std::string name = s.substr(i, end - i);
    std::erase_if(name, [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
    if (r.guard == Guard::NotMember && preceded_by_member_access(s, i)) return;
    if (r.guard == Guard::HalfIsType && half_variable && (name == "half" || name == "half2")) return;
    per_rule[p.rule].emplace_back(t.code.orig(i), std::move(name));
  };
  for_each_identifier(s, [&](size_t i, size_t j) {
    const std::string_view w(s.data() + i, j - i);
    if (auto it = index.exact.find(w); it != index.exact.end())
      for (const NamePattern& p : it->second) attempt(i, j, p);
    for (const NamePattern& p : index.prefixed)
      if (w.starts_with(p.parts[0])) attempt(i, j, p);
  });
}

// `#include <name...h>` directives whose header name begins with prefix.
Hits library_headers(const Texts& t, std::string_view prefix) {
  const std::string& s = t.keep.text;
  Hits hits;
  for (size_t h = s.find('#'); h != std::string::npos; h = s.find('#', h + 1)) {
    size_t q = skip_space(s, h + 1);
    if (s.compare(q, 7, "include") != 0) continue;
    q = skip_space(s, q + 7);
    if (q >= s.size() || (s[q] != '<' && s[q] != '"')) continue;
    q = skip_space(s, q + 1);
    if (s.compare(q, prefix.size(), prefix) != 0) continue;
    const size_t e = ident_end(s, q + prefix.size());
    if (s.compare(e, 2, ".h") == 0) hits.emplace_back(t.keep.orig(h), s.substr(q, e + 2 - q));
  }
  return hits;
}

Hits cublas_headers(const Texts& t, const StaticCheckOptions&) { return library_headers(t, "cublas"); }
Hits cudnn_headers(const Texts& t, const StaticCheckOptions&) { return library_headers(t, "cudnn"); }

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
  std::vector<Hits> per_rule(std::size(kRules));
  match_names(t, opts, per_rule);

  std::vector<Finding> out;
  std::set<std::pair<std::string, int>> seen;
  for (size_t ri = 0; ri < std::size(kRules); ++ri) {
    const Rule& r = kRules[ri];
    if (!applies(r.when, opts)) continue;
    const Hits& hits = r.custom ? (per_rule[ri] = r.custom(t, opts)) : per_rule[ri];
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
