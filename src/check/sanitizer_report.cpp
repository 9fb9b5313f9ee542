#include "check/sanitizer_report.h"

#include <regex>

namespace kevo {

SanitizerSummary read_sanitizer_summary(std::string_view tool, std::string_view report) {
  static const std::regex errors_re(R"(ERROR SUMMARY:\s*(\d+) errors?)");
  static const std::regex race_re(R"(RACECHECK SUMMARY:\s*(\d+) hazards? displayed\s*\((\d+) errors?,\s*(\d+) warnings?\))");
  const std::regex& re = tool == "racecheck" ? race_re : errors_re;
  SanitizerSummary s;
  std::string text(report);
  // The last summary counts (a wrapper may print more than one process's report).
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    s.found = true;
    s.line = m.str(0);
    s.clean = std::stoll(tool == "racecheck" ? m.str(2) : m.str(1)) == 0;
  }
  return s;
}

}  // namespace kevo
