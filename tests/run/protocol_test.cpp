// The typed checker <-> runner messages survive their JSON form, and a reply missing what the
// checker needs is an error, not a default.
#include "run/protocol.h"

#include <gtest/gtest.h>

using namespace kevo::proto;

TEST(Protocol, TimeBatchRequestRoundTrip) {
  TimeBatchRequest q;
  q.slot = "cand";
  q.inputs.push_back({"x", 0, {4, 8}, 32, 128, 0, Gen{1, 0.5, 2.0, 0, 1, 77}});
  q.outputs.push_back({"y", 2, {4, 8}, 32, 64, 0, std::nullopt});
  q.scalars = {0.5};
  q.dims = {4, 8};
  q.first_call = 123456789012345ull;
  q.calls = 17;
  q.flush_bytes = 1 << 20;
  q.sums_key = ~0ull;
  q.export_outputs = true;
  q.state = true;
  json j = q;
  auto back = j.get<TimeBatchRequest>();
  EXPECT_EQ(back.slot, "cand");
  ASSERT_EQ(back.inputs.size(), 1u);
  ASSERT_TRUE(back.inputs[0].gen);
  EXPECT_EQ(back.inputs[0].gen->base, 77u);
  EXPECT_EQ(back.inputs[0].gen->kind, 1);
  EXPECT_FALSE(back.outputs[0].gen);
  EXPECT_EQ(back.outputs[0].numel, 32);
  EXPECT_EQ(back.first_call, 123456789012345ull);
  EXPECT_EQ(back.sums_key, ~0ull);
  EXPECT_EQ(back.calls, 17);
  EXPECT_TRUE(back.export_outputs && back.state);
}

TEST(Protocol, TimeBatchReplyRoundTripWithState) {
  TimeBatchReply r;
  r.ok = true;
  r.call_ms = {1.0, 2.0};
  r.flush_ms = {0.1, 0.1};
  r.sums = {{Sums{10, 0, 4.0, 1.0, -1.0}}, {Sums{10, 1, 5.0, 2.0, -2.0}}};
  r.rc = {0, 0};
  r.state_before = DeviceState{{{"limit_persisting_l2", 0}}};
  r.state_after = DeviceState{{{"limit_persisting_l2", 4096}}};
  json j = r;
  auto back = j.get<TimeBatchReply>();
  ASSERT_EQ(back.sums.size(), 2u);
  EXPECT_EQ(back.sums[1][0].nonfinite, 1);
  EXPECT_DOUBLE_EQ(back.sums[1][0].signed1, -2.0);
  ASSERT_TRUE(back.state_before && back.state_after);
  EXPECT_FALSE(*back.state_before == *back.state_after);
  EXPECT_EQ(back.state_before->diff(*back.state_after), "limit_persisting_l2: 0 -> 4096");
}

TEST(Protocol, ReplyWithoutItsFiguresIsAnError) {
  json j = {{"ok", true}};  // a runner that claims success but sends no call times
  EXPECT_THROW(j.get<TimeBatchReply>(), nlohmann::json::exception);
  json failed = {{"ok", false}, {"error", "boom"}, {"fatal", true}};
  auto r = failed.get<TimeBatchReply>();
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.fatal);
  EXPECT_EQ(r.error, "boom");
}

TEST(Protocol, ErrorReplyCarriesTheCudaErrorNumber) {
  ErrorReply fatal{.error = "cudaStreamSynchronize(stream_): cudaErrorIllegalAddress: ...", .fatal = true,
                   .cuda_error = 700};
  json j = fatal;
  EXPECT_EQ(j.value("ok", true), false);  // what the checker's other reads of a reply look at
  EXPECT_EQ(j.value("cuda_error", 0), 700);
  auto back = j.get<ErrorReply>();
  EXPECT_TRUE(back.fatal);
  EXPECT_EQ(back.cuda_error, 700);
  EXPECT_EQ(back.error, fatal.error);
  // A request the runner could not serve, and a fatal reply of a runner before the number.
  json bad = ErrorReply{.error = "bad request: x"};
  EXPECT_EQ(bad, (json{{"ok", false}, {"error", "bad request: x"}}));
  auto old = json{{"ok", false}, {"fatal", true}, {"error", "illegal"}}.get<ErrorReply>();
  EXPECT_TRUE(old.fatal);
  EXPECT_EQ(old.cuda_error, 0);
}
