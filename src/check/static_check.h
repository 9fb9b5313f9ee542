// Static checks on candidate source: a second line of defence behind the runtime protocol. Finds
// streams, threads, processes, file/network I/O, dynamic loading, driver-API launches, forbidden
// libraries and lower-precision computation, each at its line. Comments and string literals are
// ignored (except where a rule is about a string: #include names and inline asm).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compile/source_text.h"  // blank_comments_and_strings

namespace kevo {

struct Finding {
  enum class Severity { Warning, Unsafe } severity;
  int line;  // 1-based
  std::string rule;  // e.g. "stream_create"
  std::string message;
};

struct StaticCheckOptions {
  bool allow_cublas = false;
  bool allow_cudnn = false;
  std::string precision = "f32";  // the task's output dtype
};

// Findings ordered by line; at most one per rule and line.
std::vector<Finding> static_check(std::string_view source, const StaticCheckOptions& opts);

// "line 12: unsafe: creates a CUDA stream ... [stream_create]", one per line.
std::string format_findings(const std::vector<Finding>& findings);

bool has_unsafe(const std::vector<Finding>& findings);

}  // namespace kevo
