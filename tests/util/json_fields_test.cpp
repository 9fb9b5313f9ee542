#include "util/json_fields.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace kevo;
using nlohmann::json;
using ::testing::HasSubstr;

TEST(JsonFields, MissingKeysTakeTheirDefaults) {
  JsonFields f(json::object(), "run 1: stored configuration");
  EXPECT_EQ(f.get("seeds", 3), 3);
  EXPECT_EQ(f.get<std::string>("name", "x"), "x");
  EXPECT_TRUE(f.object("budgets").empty());
  EXPECT_TRUE(f.ok());
}

TEST(JsonFields, PresentKeysAreRead) {
  JsonFields f(json{{"seeds", 5}, {"name", "kevo"}, {"usd", 1.5}, {"on", true}, {"n", 7u}}, "doc");
  EXPECT_EQ(f.get("seeds", 3), 5);
  EXPECT_EQ(f.get<std::string>("name", ""), "kevo");
  EXPECT_DOUBLE_EQ(f.get("usd", 0.0), 1.5);
  EXPECT_TRUE(f.get("on", false));
  EXPECT_EQ(f.get("n", uint64_t{0}), 7u);
  EXPECT_DOUBLE_EQ(f.get("seeds", 0.0), 5.0) << "an integer is a number";
  EXPECT_TRUE(f.ok());
}

// A hand-edited or foreign database: the first field of another type is named, with what it is
// and what was expected; nothing throws.
TEST(JsonFields, AFieldOfAnotherTypeIsNamed) {
  JsonFields f(json{{"max_calls", "ten"}, {"eval_seeds", 2.5}, {"seed", -1}}, "run 3: stored configuration");
  EXPECT_EQ(f.get<int64_t>("max_calls", 9), 9);
  EXPECT_EQ(f.get("eval_seeds", 3), 3);
  EXPECT_EQ(f.get("seed", uint64_t{4}), 4u);
  ASSERT_FALSE(f.ok());
  auto s = f.status();
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message, "run 3: stored configuration: field 'max_calls' is string, expected an integer");
}

TEST(JsonFields, ADocumentThatIsNoObjectIsNamed) {
  JsonFields f(json::array({1, 2}), "budgets");
  EXPECT_EQ(f.get("max_candidates", 45), 45);
  EXPECT_THAT(f.status().error().message, HasSubstr("budgets: is array, expected an object"));
  EXPECT_TRUE(JsonFields(json(), "null reads as empty").ok());
}

TEST(JsonFields, FieldOrReadsAnotherTypeAsAbsent) {
  json j{{"ok", "yes"}, {"outcome", 3}, {"time_ms", 1.25}};
  EXPECT_FALSE(field_or(j, "ok", false));
  EXPECT_EQ(field_or(j, "outcome", "pass"), "pass");
  EXPECT_DOUBLE_EQ(field_or(j, "time_ms", 0.0), 1.25);
  EXPECT_EQ(field_or(json("not an object"), "outcome", "none"), "none");
}
