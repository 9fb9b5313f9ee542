#include "task/resolved.h"

#include <gtest/gtest.h>

#include "task/limits.h"
#include "task/task.h"
#include "task_text.h"

using namespace kevo;

namespace {
using test::kGood;
using test::replace;

// kGood with a workspace, and its output in f16 when `half`.
Task parsed(bool half = false) {
  std::string text = replace(kGood, "bytes = \"8*B*N\"", "bytes = \"8*B*N\"\nworkspace = \"4*B\"");
  if (half) text = replace(text, "name = \"y\"\ndtype = \"f32\"", "name = \"y\"\ndtype = \"f16\"");
  auto t = parse_task(text, "tasks/softmax/task.toml");
  EXPECT_TRUE(t) << t.error().message;
  return t ? *t : Task{};
}

Config dims_config(int64_t b, int64_t n) { return Config{"big", {{"B", b}, {"N", n}}, false}; }
}  // namespace

// Config b: x f32 [100, 33], idx i32 [100], y f16 [100, 33].
TEST(Resolve, ShapesSizesAndTotals) {
  Task t = parsed(true);
  auto r = t.resolve(t.main());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->config, &t.main());
  EXPECT_EQ(r->dims, (std::vector<int64_t>{100, 33}));
  ASSERT_EQ(r->inputs.size(), 2u);
  ASSERT_EQ(r->outputs.size(), 1u);
  EXPECT_EQ(r->inputs[0].spec, &t.inputs[0]);
  EXPECT_EQ(r->inputs[0].shape, (std::vector<int64_t>{100, 33}));
  EXPECT_EQ(r->inputs[0].numel, 3300);
  EXPECT_EQ(r->inputs[0].nbytes, 4u * 3300);
  EXPECT_EQ(r->inputs[1].name(), "idx");
  EXPECT_EQ(r->inputs[1].dtype(), DType::I32);
  EXPECT_EQ(r->inputs[1].shape, (std::vector<int64_t>{100}));
  EXPECT_EQ(r->inputs[1].nbytes, 400u);
  EXPECT_EQ(r->outputs[0].numel, 3300);
  EXPECT_EQ(r->outputs[0].nbytes, 2u * 3300);
  EXPECT_EQ(r->input_bytes, 4u * 3300 + 400);
  EXPECT_EQ(r->output_bytes, 2u * 3300);
  EXPECT_EQ(r->data_bytes(), 4u * 3300 + 400 + 2u * 3300);
  EXPECT_EQ(r->input_numel(), 3400u);
  EXPECT_EQ(*config_bytes(t, t.main()), r->data_bytes());
}

TEST(Resolve, ModelWorkspaceAndTolerance) {
  Task t = parsed();
  auto r = t.resolve(t.configs[0]);  // B = N = 64
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_TRUE(r->flops && r->bytes);
  EXPECT_DOUBLE_EQ(*r->flops, 5.0 * 64 * 64);
  EXPECT_DOUBLE_EQ(*r->bytes, 8.0 * 64 * 64);
  EXPECT_EQ(r->workspace_bytes, 256u);
  // The first output's dtype sets the precision: f32's atol from the file, its default rtol.
  EXPECT_DOUBLE_EQ(r->tolerance.atol, 1e-3);
  EXPECT_DOUBLE_EQ(r->tolerance.rtol, 1e-4);
  auto half = parsed(true).resolve(t.configs[0]);
  ASSERT_TRUE(half) << half.error().message;
  EXPECT_DOUBLE_EQ(half->tolerance.atol, 1e-2);  // f16's default: the file sets only f32's
  EXPECT_DOUBLE_EQ(half->tolerance.rtol, 1e-2);
  // A task built in code may declare no model: absent, not an error (nor a zero).
  t.flops_expr.clear();
  t.workspace_expr.clear();
  auto bare = t.resolve(t.configs[0]);
  ASSERT_TRUE(bare) << bare.error().message;
  EXPECT_FALSE(bare->flops);
  EXPECT_TRUE(bare->bytes);
  EXPECT_EQ(bare->workspace_bytes, 0u);
}

TEST(Resolve, FindsTensorsByName) {
  Task t = parsed();
  auto r = t.resolve(t.main());
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_NE(r->find("y"), nullptr);
  EXPECT_EQ(r->find("y")->spec, &t.outputs[0]);
  ASSERT_NE(r->find("idx"), nullptr);
  EXPECT_EQ(r->find("idx")->numel, 100);
  EXPECT_EQ(r->find("z"), nullptr);
}

// Sizes past 64 bits are errors that name the tensor, never wrapped sizes.
TEST(Resolve, OverflowIsAnError) {
  Task t = parsed(true);
  Config elements = dims_config(int64_t{1} << 40, int64_t{1} << 40);  // 2^80 elements
  auto e = t.resolve(elements);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, ErrorCode::kParse);
  EXPECT_NE(e.error().message.find("softmax: config 'big': tensor 'x': the element count overflows"),
            std::string::npos)
      << e.error().message;
  Config bytes = dims_config(int64_t{1} << 31, int64_t{1} << 31);  // 2^62 f32 elements: 2^64 bytes
  auto b = t.resolve(bytes);
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("tensor 'x': its byte count overflows"), std::string::npos) << b.error().message;
  t.outputs[0].dtype = DType::F32;
  Config total = dims_config(int64_t{1} << 30, int64_t{1} << 31);  // x and y: 2^63 bytes each
  auto s = t.resolve(total);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("overflow a 64-bit byte count"), std::string::npos) << s.error().message;
}

TEST(Resolve, ExpressionErrorsNameTheTensorOrField) {
  Task t = parsed();
  t.inputs[1].shape = {"N/2"};  // 33/2 on config b
  auto r = t.resolve(t.main());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kParse);
  EXPECT_NE(r.error().message.find("softmax: config 'b': shape of 'idx'"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("not a whole number"), std::string::npos) << r.error().message;
  t = parsed();
  t.workspace_expr = "B-1000";
  auto w = t.resolve(t.main());
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().message.find("config 'b': workspace: -900 bytes is negative"), std::string::npos)
      << w.error().message;
  t = parsed();
  t.bytes_expr = "8*M";
  auto m = t.resolve(t.main());
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("config 'b': bytes:"), std::string::npos) << m.error().message;
  Config partial{"partial", {{"B", 4}}, false};
  auto p = t.resolve(partial);
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("config 'partial': no value for dimension 'N'"), std::string::npos)
      << p.error().message;
}
