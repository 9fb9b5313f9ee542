// The archive's JSONL: a bad line fails the whole file with its file, line and field named.
#include <gtest/gtest.h>

#include "archive/jsonl.h"

namespace kevo::archive {
namespace {

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

std::string good_line(const std::string& task = "gelu") {
  return R"({"kevo_archive":1,"kind":"winner","task":")" + task +
         R"(","gpu":"NVIDIA H100","source":"__global__ void k(){}","speedup":2.5,"held_out":"passed",)"
         R"("features":{"op_kind":"elementwise","dtypes":["f32"],"bound":"memory"}})";
}

std::string error_of(const std::string& text) {
  auto r = parse_jsonl(text, "lab.jsonl");
  EXPECT_FALSE(r) << text;
  return r ? "" : r.error().message;
}

TEST(ArchiveJsonl, GoodLinesParseAndBlankLinesAreSkipped) {
  auto r = parse_jsonl(good_line() + "\n\n" + good_line("relu") + "\n", "lab.jsonl");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[1].task, "relu");
  EXPECT_EQ((*r)[1].origin, "imported from lab.jsonl line 3");
  EXPECT_EQ((*r)[0].held_out, store::HeldOut::kPassed);
  EXPECT_EQ((*r)[0].fingerprint.size(), 64u);
  EXPECT_NE((*r)[0].fingerprint, (*r)[1].fingerprint);
}

TEST(ArchiveJsonl, ACutOffLineFailsTheWholeFileNamingIt) {
  std::string text = good_line() + "\n" + good_line("relu") + "\n" + good_line().substr(0, 40) + "\n";
  std::string e = error_of(text);
  EXPECT_TRUE(has(e, "lab.jsonl line 3: not valid JSON")) << e;
  EXPECT_TRUE(has(e, "nothing was imported")) << e;
}

TEST(ArchiveJsonl, MissingTaskOrGpuAndBadFieldsAreNamed) {
  auto without = [](const std::string& key) {
    auto j = nlohmann::json::parse(good_line());
    j.erase(key);
    return j.dump();
  };
  EXPECT_TRUE(has(error_of(good_line() + "\n" + without("task")), "lab.jsonl line 2: field 'task' is missing"));
  EXPECT_TRUE(has(error_of(without("gpu")), "lab.jsonl line 1: field 'gpu' is missing"));
  EXPECT_TRUE(has(error_of(without("source")), "field 'source' is missing"));
  auto with = [](const std::string& key, const nlohmann::json& v) {
    auto j = nlohmann::json::parse(good_line());
    j[key] = v;
    return j.dump();
  };
  EXPECT_TRUE(has(error_of(with("kind", "best")), "field 'kind' is 'best', expected winner or improvement"));
  EXPECT_TRUE(has(error_of(with("held_out", "maybe")), "field 'held_out' is 'maybe'"));
  EXPECT_TRUE(has(error_of(with("speedup", "fast")), "field 'speedup' is string, expected a number"));
  EXPECT_TRUE(has(error_of(with("speedup", -1)), "field 'speedup' must be a number above 0"));
  EXPECT_TRUE(has(error_of(with("kevo_archive", 2)), "field 'kevo_archive' is 2, expected 1"));
  EXPECT_TRUE(has(error_of(with("speedup_ci", {1})), "field 'speedup_ci' must be two numbers"));
  EXPECT_TRUE(has(error_of(with("features", {{"bound", "io"}})), "lab.jsonl line 1: features: field 'bound' is 'io'"));
  EXPECT_TRUE(has(error_of(with("features", {{"dtypes", {1}}})), "field 'dtypes' holds number"));
  EXPECT_TRUE(has(error_of("[1,2]"), "lab.jsonl line 1: is array, expected an object"));
}

TEST(ArchiveJsonl, AnUnreadableFileIsNamed) {
  auto r = read_jsonl("/nonexistent/lab.jsonl");
  ASSERT_FALSE(r);
  EXPECT_TRUE(has(r.error().message, "/nonexistent/lab.jsonl: cannot read")) << r.error().message;
}

}  // namespace
}  // namespace kevo::archive
