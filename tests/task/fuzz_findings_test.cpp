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

// toml++ 3.3 reached __builtin_unreachable (UBSan: "execution reached an unreachable program
// point") on a non-ASCII character outside a string or comment; such text is refused before
// toml++ sees it (util/toml_text.h), naming the place.
TEST(TaskFuzzFindings, NonAsciiOutsideAStringIsASyntaxErrorNotUndefinedBehaviour) {
  auto t = parse_task("name = \"x\"\n[dims] \u00a1\n", "x/task.toml");
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("x/task.toml:2:8: TOML syntax error: a non-ASCII character"),
            std::string::npos)
      << t.error().message;
}

// The same unreachable point, found by CI's fuzz smoke: toml++ 3.3 asks whether the characters
// after a backslash in a """ string are whitespace (to skip a line-ending backslash's). Refused
// before toml++ sees it, naming the place and the way to write the character instead.
TEST(TaskFuzzFindings, NonAsciiAfterABackslashInAMultiLineStringIsRefused) {
  auto t = parse_task("name = \"x\"\ndescription = \"\"\"a \\\n  \u00e9\"\"\"\n", "x/task.toml");
  ASSERT_FALSE(t);
  EXPECT_NE(
      t.error().message.find("x/task.toml:3:3: TOML syntax error: a non-ASCII character right "
                             "after a backslash"),
      std::string::npos)
      << t.error().message;
  EXPECT_NE(t.error().message.find("\\uXXXX"), std::string::npos) << t.error().message;
}
