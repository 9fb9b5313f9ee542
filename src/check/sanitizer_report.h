// Reading compute-sanitizer's verdict from its report. memcheck, initcheck and synccheck end with
// "ERROR SUMMARY: N errors"; racecheck ends with "RACECHECK SUMMARY: N hazards displayed
// (E errors, W warnings)". A report without its summary line proves nothing.
#pragma once

#include <string>
#include <string_view>

namespace kevo {

struct SanitizerSummary {
  bool found = false;   // the tool's summary line is in the report
  bool clean = false;   // found, and it reports no errors
  std::string line;     // the summary line as printed (without the "=========" prefix)
};

SanitizerSummary read_sanitizer_summary(std::string_view tool, std::string_view report);

}  // namespace kevo
