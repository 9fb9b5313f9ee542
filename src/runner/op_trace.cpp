#include "runner/op_trace.h"

#include <cstdlib>
#include <string>

namespace kevo::runner {

bool OpTrace::enabled() {
  static const bool on = [] {
    const char* v = std::getenv("KEVO_TRACE_CALLS");
    return v && *v && std::string(v) != "0";
  }();
  return on;
}

nlohmann::json OpTrace::to_json(double handler_ms) const {
  static const char* const kNames[kOps][2] = {
      {"alloc_ms", "allocs"}, {"free_ms", "frees"}, {"export_ms", "exports"}, {"open_ms", "opens"}, {"close_ms", "closes"}};
  nlohmann::json j = {{"handler_ms", handler_ms}};
  for (int op = 0; op < kOps; ++op)
    if (count_[op] > 0) {
      j[kNames[op][0]] = ms_[op];
      j[kNames[op][1]] = count_[op];
    }
  return j;
}

}  // namespace kevo::runner
