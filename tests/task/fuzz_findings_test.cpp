// Inputs the fuzz harnesses (tests/fuzz) found to break task.toml parsing, kept as regressions.
#include <gtest/gtest.h>

#include "task/task.h"

using namespace kevo;

// toml++ 3.3 asserted (and aborted a Debug build) on a table header without a key.
TEST(TaskFuzzFindings, TableHeaderWithoutAKeyIsASyntaxError) {
  for (const char* text : {"[=", "[[=", "[[[1]]]", "[ =]"}) {
    auto t = parse_task(text, "x/task.toml");
    ASSERT_FALSE(t) << text;
    EXPECT_NE(t.error().message.find("x/task.toml:1:"), std::string::npos) << t.error().message;
    EXPECT_NE(t.error().message.find("TOML syntax error"), std::string::npos) << t.error().message;
  }
}
