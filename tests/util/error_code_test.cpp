// ErrorCode: every code has a name of its own, and fail() carries the code it is given.
#include "util/error_code.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "util/result.h"

namespace kevo {
namespace {

TEST(ErrorCode, EveryCodeHasItsOwnName) {
  std::set<std::string> names;
  const int last = static_cast<int>(ErrorCode::kReplayMiss);
  for (int i = 0; i <= last; ++i) {
    std::string name(to_string(static_cast<ErrorCode>(i)));
    EXPECT_TRUE(i == 0 || name != "unspecified") << "code " << i << " has no name";
    EXPECT_TRUE(names.insert(name).second) << name << " is used twice";
  }
  EXPECT_EQ(to_string(ErrorCode::kTimeout), "timeout");
}

TEST(ErrorCode, FailCarriesTheCodeAndAPlainFailNone) {
  Status timed_out = fail(ErrorCode::kTimeout, "timeout after {} ms", 300);
  ASSERT_FALSE(timed_out);
  EXPECT_EQ(timed_out.error().code, ErrorCode::kTimeout);
  EXPECT_EQ(timed_out.error().message, "timeout after 300 ms");
  Result<int> plain = fail("timeout in the text only");
  ASSERT_FALSE(plain);
  EXPECT_EQ(plain.error().code, ErrorCode::kUnspecified);
  // Passed up unchanged.
  auto up = [&]() -> Result<int> {
    KEVO_TRY(timed_out);
    return 1;
  };
  EXPECT_EQ(up().error().code, ErrorCode::kTimeout);
}

}  // namespace
}  // namespace kevo
