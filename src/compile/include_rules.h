// Rules that keep a candidate from reading host files through the compiler: only toolkit and
// system headers may be included (`#include <name.h>`); quoted, path and macro-built includes,
// #embed, assembler .incbin/.include, #line and linemarkers, file-naming pragmas and
// __has_include probes of paths are refused before anything is compiled. The compiler's sandbox
// (compile/sandbox.h) is the second line; these rules are what protects a machine without one.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kevo {

enum class IncludeRule { HostInclude, EmbedFile, LineDirective, PragmaFile, HasInclude };

// "host_include", "embed_file", "line_directive", "pragma_file", "has_include": the rule names in
// static findings and verdicts.
const char* to_string(IncludeRule r);

struct IncludeHit {
  IncludeRule rule;
  size_t offset;     // in the source
  std::string what;  // the directive as written (trimmed, at most ~80 characters)
};

// Every place the source could make the compiler read a file other than a header; ordered by rule
// kind, then offset. Linear in the source size.
std::vector<IncludeHit> find_host_file_access(std::string_view source);
// The same on views already made: `code` with comments and literals blanked, `keep` with comments
// blanked only (compile/source_text.h), so offsets agree.
std::vector<IncludeHit> find_host_file_access(std::string_view code, std::string_view keep);

// "line 3: unsafe: #include \"/etc/passwd\": ... [host_include]" for the first hit; empty if none.
// What compile_cuda_shared answers instead of compiling such a source.
std::string describe_first_hit(std::string_view source, const std::vector<IncludeHit>& hits);

// The finding's message for a hit (the static checks and the compiler's refusal say the same).
std::string hit_message(const IncludeHit& h);

// True for a header name that can only resolve inside the include path: relative, made of
// [A-Za-z0-9_.+-/], no "..", "." or empty components.
bool is_plain_header_name(std::string_view name);

}  // namespace kevo
