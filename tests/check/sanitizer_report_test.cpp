// compute-sanitizer summaries as the tools print them (memcheck/initcheck vs racecheck).
#include "check/sanitizer_report.h"

#include <gtest/gtest.h>

using namespace kevo;

TEST(SanitizerReport, MemcheckAndInitcheck) {
  auto s = read_sanitizer_summary("memcheck", "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n");
  EXPECT_TRUE(s.found);
  EXPECT_TRUE(s.clean);
  EXPECT_EQ(s.line, "ERROR SUMMARY: 0 errors");
  s = read_sanitizer_summary("initcheck", "========= Uninitialized __global__ memory read\n========= ERROR SUMMARY: 1 error\n");
  EXPECT_TRUE(s.found);
  EXPECT_FALSE(s.clean);
}

TEST(SanitizerReport, RacecheckHasItsOwnSummary) {
  // Observed on an H100: racecheck printed no "ERROR SUMMARY" at all.
  auto s = read_sanitizer_summary("racecheck",
                                  "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n");
  EXPECT_TRUE(s.found);
  EXPECT_TRUE(s.clean);
  s = read_sanitizer_summary("racecheck", "========= RACECHECK SUMMARY: 16 hazards displayed (16 errors, 0 warnings)\n");
  EXPECT_TRUE(s.found);
  EXPECT_FALSE(s.clean);
  s = read_sanitizer_summary("racecheck", "========= RACECHECK SUMMARY: 1 hazard displayed (0 errors, 1 warning)\n");
  EXPECT_TRUE(s.clean);  // warnings alone are not a failure
  EXPECT_FALSE(read_sanitizer_summary("racecheck", "========= ERROR SUMMARY: 0 errors\n").found);
}

TEST(SanitizerReport, NoSummaryIsNotClean) {
  auto s = read_sanitizer_summary("memcheck", "========= Target application terminated before first instrumented API call\n");
  EXPECT_FALSE(s.found);
  EXPECT_FALSE(s.clean);
}
