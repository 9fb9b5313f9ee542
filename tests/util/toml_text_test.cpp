#include "util/toml_text.h"

#include <gtest/gtest.h>

using namespace kevo;

namespace {
std::optional<TomlHazard> scan(std::string_view text) {
  return find_toml_hazard(text);
}
}  // namespace

// The fuzzer's finding: a non-ASCII character where toml++ 3.3 asks whether it is whitespace.
TEST(TomlText, NonAsciiOutsideStringsIsFoundWithItsPosition) {
  auto p = scan("a = 1\nb = 2 \u00a1\n");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->line, 2u);
  EXPECT_EQ(p->column, 7u);
  for (const char* text : {"\u00b5 = 1\n", "a = [1, \u00a1]\n", "[t\u00a1]\n", "a = 'x'\u00a1\n", "\u3001\n",
                           // a '#' inside a string opens no comment; U+00A0 is refused too
                           "a = \"x#\"\u00a0\n"})
    EXPECT_TRUE(scan(text)) << text;
}

TEST(TomlText, StringsCommentsAndBomAreFine) {
  for (const char* text :
       {"# \u00b5s per call\na = 1\n", "a = \"\u00b5s\"\n", "a = '\u00b5s'\n", "a = 1 # \u00a1\n",
        "a = \"\"\"\n\u00a1\n\"\"\"\n", "a = '''\n\u00a1'''\n", "a = \"q\\\"\u00a1\"\n",
        "\xEF\xBB\xBF" "a = 1\n", "\"k\u00e9y\" = 1\n"})
    EXPECT_FALSE(scan(text)) << text;
}

// A multi-line string may end in one or two of its own quotes; the scanner must not take them for
// the start of a new string (which would hide the character after them).
TEST(TomlText, QuotesClosingAMultiLineStringDoNotOpenAnother) {
  EXPECT_TRUE(scan("a = \"\"\"x\"\"\"\"\u00a1\n"));
  EXPECT_TRUE(scan("a = \"\"\"x\"\"\"\"\"\u00a1\n"));
  EXPECT_TRUE(scan("a = '''x''''' \u00a1\n"));
  EXPECT_TRUE(scan("a = \"open\n\u00a1\n"));  // a one-line string ends at its line, at the latest
  EXPECT_TRUE(scan("# c\r\u00a1\n"));          // a comment ends at '\r', at the latest
}

TEST(TomlText, ColumnsCountCharactersNotBytes) {
  auto p = scan("a = \"\u00e9\u00e9\" \u00a1\n");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->line, 1u);
  EXPECT_EQ(p->column, 10u);
}

// The CI fuzzer's second finding: toml++ 3.3 asks whether a character is whitespace after a
// backslash in a """ string (a line-ending backslash skips whitespace and newlines), reaching the
// same unreachable point. Valid TOML (`"""\<newline>é"""`) is refused there too, with its own
// reason.
TEST(TomlText, NonAsciiAfterABackslashInAMultiLineStringIsRefused) {
  for (const char* text : {"a = \"\"\"\\\u00a1\"\"\"\n", "a = \"\"\"\\ \u00a1\n\"\"\"\n",
                           "a = \"\"\"\\\n\u00e9\"\"\"\n", "a = \"\"\"\\\r\n  \n \u00a1\"\"\"\n"}) {
    auto p = scan(text);
    ASSERT_TRUE(p) << text;
    EXPECT_EQ(p->kind, TomlHazardKind::kNonAsciiAfterBackslash) << text;
  }
  auto p = scan("a = \"\"\"x\\\n  \u00e9\"\"\"\n");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->line, 2u);
  EXPECT_EQ(p->column, 3u);
  EXPECT_NE(describe(p->kind).find("\\uXXXX"), std::string_view::npos);
  // Escapes and a continuation followed by ASCII text leave the rest of the string as it was.
  for (const char* text : {"a = \"\"\"\\\\\u00a1\"\"\"\n", "a = \"\"\"\\\"\u00a1\"\"\"\n",
                           "a = \"\"\"\\\n  x\u00a1\"\"\"\n", "a = \"\"\"\\u00e9\"\"\"\n"})
    EXPECT_FALSE(scan(text)) << text;
}

// The fuzzer's third finding: toml++ reads a value that does not start with a quote (a number, a
// date, a boolean) up to a terminator, asking of every character whether it is whitespace, so a
// quote inside such a token opens no string and a non-ASCII character after it must be refused.
TEST(TomlText, AQuoteInsideABareValueOpensNoString) {
  for (const char* text :
       {"a =8\"\"\"2\u00a1_ou\n", "a = 1.\"\u00a1\"\n", "a = [\n 1.\"\u00a1\"]\n",
        "a = true'\u00a1'\n", "a = 1\"\"\u00a1\"\n", "a = { b = 2.'\u00a1' }\n",
        "a = 8\\\"\u00a1\n", "x = [\n1\\\"\u00a1\n", "a = {b=1=\"\u00a1\"}\n"}) {
    auto p = scan(text);
    ASSERT_TRUE(p) << text;
    EXPECT_EQ(p->kind, TomlHazardKind::kNonAsciiOutsideStrings) << text;
  }
  // Where a token may start, quotes still open strings: keys, dotted keys, headers, arrays.
  for (const char* text : {"a.\"\u00e9\" = 1\n", "[a.\"\u00e9\"]\n", "x = [\"\u00e9\",'\u00fc']\n",
                           "x = {\"\u00e9\" = 1}\n", "x = [\n 1,\n]\na.\"\u00e9\" = 2\n",
                           "x = 1 # c\n'\u00e9'.b = 2\n", "a=\"\u00e9\"\n",
                           "a = {b=\"\u00e9\", c=[{d='\u00fc'}]}\n", "a = [[1],[\"\u00e9\"]]\n"})
    EXPECT_FALSE(scan(text)) << text;
}
