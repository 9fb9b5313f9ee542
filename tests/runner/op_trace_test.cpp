#include "runner/op_trace.h"

#include <gtest/gtest.h>

#include <thread>

using kevo::runner::OpTrace;

TEST(OpTrace, SumsEachKindOfDriverCallAndNamesOnlyThoseThatRan) {
  OpTrace t;
  {
    OpTrace::Scope s(t, OpTrace::kAlloc);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  t.add(OpTrace::kAlloc, 1.5);
  t.add(OpTrace::kOpen, 2.0);
  auto j = t.to_json(12.0);
  EXPECT_EQ(j["handler_ms"], 12.0);
  EXPECT_EQ(j["allocs"], 2);
  EXPECT_GE(j["alloc_ms"].get<double>(), 6.5);
  EXPECT_LT(j["alloc_ms"].get<double>(), 1000.0);
  EXPECT_EQ(j["opens"], 1);
  EXPECT_EQ(j["open_ms"], 2.0);
  EXPECT_FALSE(j.contains("frees")) << j.dump();
  EXPECT_FALSE(j.contains("export_ms")) << j.dump();
  t.reset();
  EXPECT_EQ(t.to_json(0.0), nlohmann::json({{"handler_ms", 0.0}}));
}
