#include <gtest/gtest.h>

#include <cmath>

#include "task/expr.h"
#include "task/limits.h"
#include "task/task.h"
#include "task/tensor.h"
#include "task_text.h"

using namespace kevo;

namespace {
using test::kGood;
using test::replace;

void expect_error(const std::string& text, const std::string& needle) {
  auto t = parse_task(text, "tasks/x/task.toml");
  ASSERT_FALSE(t) << "expected an error containing: " << needle;
  EXPECT_NE(t.error().message.find(needle), std::string::npos) << t.error().message;
  EXPECT_NE(t.error().message.find("tasks/x/task.toml"), std::string::npos) << t.error().message;
}
}  // namespace

TEST(Expr, Evaluates) {
  DimValues d{{"N", 10}, {"M", 3}};
  EXPECT_EQ(*eval_expr("2*N+1", d), 21);
  EXPECT_EQ(*eval_expr("(N-M)*2", d), 14);
  EXPECT_EQ(*eval_expr("ceil_div(N, M)", d), 4);
  EXPECT_EQ(*eval_expr("max(N, M) - min(N,M)", d), 7);
  EXPECT_EQ(*eval_expr("-N % 3", d), -1);
  EXPECT_DOUBLE_EQ(*eval_expr("1.5e2 / 3", d), 50);
  EXPECT_EQ(*eval_int_expr("N/2", d), 5);
  EXPECT_FALSE(eval_int_expr("N/3", d));
}

TEST(Expr, ErrorsSayWhere) {
  DimValues d{{"N", 10}};
  auto r = eval_expr("2*Q", d);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("unknown dimension 'Q'"), std::string::npos);
  EXPECT_NE(r.error().message.find("column 3"), std::string::npos);
  EXPECT_FALSE(eval_expr("(N", d));
  EXPECT_FALSE(eval_expr("N/0", d));
  EXPECT_FALSE(eval_expr("foo(N)", d));
  EXPECT_FALSE(eval_expr("N N", d));
  auto names = expr_names("A*B+ceil_div(C,4)");
  ASSERT_TRUE(names);
  EXPECT_EQ(*names, (std::set<std::string>{"A", "B", "C"}));
}

TEST(Task, ParsesAGoodTask) {
  auto t = parse_task(kGood, "tasks/x/task.toml");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->name, "softmax");
  EXPECT_EQ(t->inputs.size(), 2u);
  EXPECT_EQ(t->main().name, "b");
  EXPECT_EQ(t->inputs[0].init.b, 2.0);
  EXPECT_TRUE(t->inputs[0].init.wide);
  EXPECT_FALSE(t->inputs[1].init.wide);
  EXPECT_EQ(t->tolerance_for(DType::F32).atol, 1e-3);
  EXPECT_EQ(t->tolerance_for(DType::F32).rtol, 1e-4);  // default kept
  EXPECT_EQ(t->tolerance_for(DType::BF16).atol, 1e-2);
  EXPECT_EQ(*t->flops(t->main()), 5 * 100 * 33);
  EXPECT_EQ(*t->shape_of(t->inputs[0], t->main()), (std::vector<int64_t>{100, 33}));
  EXPECT_EQ(t->dim_values(t->main()), (std::vector<int64_t>{100, 33}));
}

TEST(Task, MalformedTasksNameFileLineAndField) {
  expect_error(replace(kGood, "dtype = \"f32\"\nshape", "dtype = \"f33\"\nshape"),
               "inputs(x).dtype: unknown dtype 'f33'");
  expect_error(replace(kGood, "dist = \"normal\"", "dist = \"gauss\""), "unknown distribution");
  expect_error(replace(kGood, "name = \"softmax\"", "name = \"Soft Max\""), "name:");
  expect_error(replace(kGood, "held_out = true", ""), "held_out");
  expect_error(replace(replace(replace(kGood, "dims = { B = 100, N = 33 }", "dims = { B = 96, N = 64 }"),
                               "dims = { B = 2, N = 2 }", "dims = { B = 32, N = 32 }"),
                       "dims = { B = 7, N = 9 }", "dims = { B = 64, N = 32 }"),
               "not a multiple of 32");
  expect_error(replace(kGood, "dims = { B = 2, N = 2 }", "dims = { B = 2 }"),
               "does not set dimension 'N'");
  expect_error(replace(kGood, "shape = [\"B\"]", "shape = [\"K\"]"), "'K' is not declared");
  expect_error(replace(kGood, "flops = \"5*B*N\"", "flops = \"5*B*\""), "flops");
  expect_error(replace(kGood, "flops = \"5*B*N\"", "flopz = \"5*B*N\""), "unknown key (did you mean 'flops'?");
  expect_error(replace(kGood, "flops = \"5*B*N\"", "colour = \"red\"\nflops = \"5*B*N\""), "unknown key (known: ");
  expect_error(replace(kGood, "high = \"N\"", "high = 0"), "must exceed low");
  expect_error(replace(kGood, "[tolerance]", "[tolerance\n"), "TOML syntax error");
  expect_error(replace(kGood, "category = \"softmax\"\n", ""), "category: missing");
  // The line number of the offending field is part of the message.
  expect_error(replace(kGood, "dtype = \"f32\"\nshape", "dtype = \"f33\"\nshape"), "task.toml:10:");
}

// Names are pasted into generated code (export-torch, host examples): only identifiers pass.
TEST(Task, NamesMustBeIdentifiers) {
  expect_error(replace(kGood, "name = \"x\"", "name = \"x\\\"); system(\\\"id\\\"); //\""),
               "inputs[0].name: 'x\"); system(\"id\"); //' is not a name");
  expect_error(replace(kGood, "name = \"y\"", "name = \"y\\nimport os\""), "outputs[0].name: 'y\\x0aimport os'");
  expect_error(replace(kGood, "name = \"eps\"", "name = \"1eps\""), "scalars[0].name: '1eps' is not a name");
  expect_error(replace(kGood, "name = \"eps\"", "name = \"e ps\""), "task.toml:23:");
  expect_error(replace(kGood, "dims = [\"B\", \"N\"]", "dims = [\"B\", \"N'\"]"), "each dimension must be a name");
  expect_error(replace(kGood, "name = \"x\"", "name = \"" + std::string(65, 'x') + "\""), "at most 64");
  EXPECT_TRUE(is_identifier("_x1"));
  EXPECT_TRUE(is_identifier(std::string(64, 'a')));
  EXPECT_FALSE(is_identifier(std::string(65, 'a')));
  EXPECT_FALSE(is_identifier(""));
  EXPECT_FALSE(is_identifier("a-b"));
  EXPECT_FALSE(is_identifier("\xc3\xa9"));
}

// A config of 10^12 or 10^15 elements is a mistake in the file: refused at parse time, naming the
// config, the tensor and the numbers; an overflowing expression is an overflow, not a negative size.
TEST(Task, SizeLimitsAndOverflow) {
  std::string big = replace(kGood, "dims = { B = 64, N = 64 }", "dims = { B = 1000000, N = 1000000 }");
  expect_error(big, "config 'a': tensor 'x' has 1000000000000 elements, over the limit of 17179869184");
  expect_error(replace(kGood, "dims = { B = 64, N = 64 }", "dims = { B = 100000, N = 10000000000 }"),
               "config 'a': tensor 'x' has 1000000000000000 elements");
  // At the per-tensor limit (2^34 f32 elements, 64 GiB), over the per-config total with the rest.
  expect_error(replace(kGood, "dims = { B = 64, N = 64 }", "dims = { B = 4, N = 4294967296 }"),
               "config 'a': inputs and outputs take");
  auto ov = replace(kGood, "shape = [\"B\"]", "shape = [\"B*N*N*N*N\"]");
  ov = replace(ov, "dims = { B = 64, N = 64 }", "dims = { B = 64, N = 100000000 }");
  expect_error(ov, "overflows");
  auto t = parse_task(ov, "tasks/x/task.toml");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().message.find("-9223372036854775808"), std::string::npos) << t.error().message;
  EXPECT_EQ(t.error().message.find("not positive"), std::string::npos) << t.error().message;
}

TEST(Task, ConfigBytes) {
  auto t = parse_task(kGood, "tasks/x/task.toml");
  ASSERT_TRUE(t) << t.error().message;
  // Config b: x f32 [100, 33], idx i32 [100], y f32 [100, 33].
  auto b = config_bytes(*t, t->main());
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(*b, 4u * 100 * 33 + 4u * 100 + 4u * 100 * 33);
  EXPECT_TRUE(check_config_limits(*t, t->main()));
  EXPECT_FALSE(shape_elements({int64_t{1} << 40, int64_t{1} << 40}));
  EXPECT_EQ(*shape_elements({3, 5}), 15u);
}

TEST(Expr, OverflowAndNestingAreErrors) {
  DimValues d{{"N", 1} };
  d["N"] = int64_t{1} << 40;
  auto r = eval_int_expr("N*N", d);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("overflows"), std::string::npos) << r.error().message;
  auto inf = eval_int_expr("1e400", d);
  ASSERT_FALSE(inf);
  EXPECT_NE(inf.error().message.find("overflows"), std::string::npos) << inf.error().message;
  // Deep nesting is refused, not a stack overflow.
  std::string deep = std::string(100000, '(') + "N" + std::string(100000, ')');
  auto n = eval_expr(deep, d);
  ASSERT_FALSE(n);
  EXPECT_NE(n.error().message.find("nested more than"), std::string::npos);
  EXPECT_FALSE(eval_expr(std::string(100000, '-') + "N", d));
  EXPECT_FALSE(expr_names(std::string(100000, '(')));
  EXPECT_TRUE(eval_expr(std::string(30, '(') + "N" + std::string(30, ')'), d));
}

TEST(Task, MissingDirectoryIsAClearError) {
  auto t = load_task("/nonexistent/kevo-task");
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("not a task directory"), std::string::npos);
}

TEST(Dtype, HalfAndBf16RoundTrip) {
  for (float f : {0.f, 1.f, -2.5f, 65504.f, 1e-5f, 3.14159f}) {
    EXPECT_NEAR(half_to_float(float_to_half(f)), f, std::fabs(f) * 1e-3 + 1e-7) << f;
    EXPECT_NEAR(bf16_to_float(float_to_bf16(f)), f, std::fabs(f) * 8e-3) << f;
  }
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_TRUE(std::isinf(half_to_float(float_to_half(1e6f))));
  EXPECT_TRUE(std::isnan(half_to_float(0xffff)));
  EXPECT_TRUE(std::isnan(bf16_to_float(0xffff)));
}

TEST(Generate, DeterministicAndDistributed) {
  auto t = parse_task(kGood, "tasks/x/task.toml");
  ASSERT_TRUE(t);
  Config big{"big", {{"B", 512}, {"N", 512}}, false};
  auto a = generate_inputs(*t, big, 42, false);
  auto b = generate_inputs(*t, big, 42, false);
  auto c = generate_inputs(*t, big, 43, false);
  auto w = generate_inputs(*t, big, 42, true);
  ASSERT_TRUE(a && b && c && w);
  EXPECT_EQ((*a)[0].bytes, (*b)[0].bytes);
  EXPECT_NE((*a)[0].bytes, (*c)[0].bytes);
  auto stats = [](const HostTensor& x) {
    double s = 0, s2 = 0;
    for (int64_t i = 0; i < x.numel(); ++i) s += x.at(i), s2 += x.at(i) * x.at(i);
    double m = s / x.numel();
    return std::pair{m, std::sqrt(s2 / x.numel() - m * m)};
  };
  auto [m, sd] = stats((*a)[0]);
  EXPECT_NEAR(m, 0, 0.05);
  EXPECT_NEAR(sd, 2.0, 0.05);
  EXPECT_NEAR(stats((*w)[0]).second, 16.0, 0.5);  // wide draw: std x 8
  const HostTensor& idx = (*a)[1];
  for (int64_t i = 0; i < idx.numel(); ++i) {
    ASSERT_GE(idx.at(i), 0);
    ASSERT_LT(idx.at(i), 512);
  }
  // The int input is not widened.
  EXPECT_EQ((*a)[1].bytes, (*w)[1].bytes);
}

// Normal values come in Box-Muller pairs (cosine, sine of one draw). Element i must depend on i
// alone: a small tensor (generated serially) is a prefix of a large one (generated in parallel
// chunks that start at odd and even indices), and the pairs are uncorrelated.
TEST(Generate, NormalPairsDependOnTheIndexOnly) {
  TensorSpec spec;
  spec.name = "x";
  spec.dtype = DType::F32;
  spec.init.dist = Dist::Normal;
  spec.init.a = 1.0;
  spec.init.b = 3.0;
  auto small = generate_input(spec, {1001}, {}, 9, false);
  auto large = generate_input(spec, {3000017}, {}, 9, false);
  ASSERT_TRUE(small && large);
  for (int64_t i = 0; i < 1001; ++i) ASSERT_EQ(small->at(i), large->at(i)) << i;
  double s = 0, s2 = 0, cross = 0;
  int64_t n = large->numel();
  for (int64_t i = 0; i < n; ++i) s += large->at(i), s2 += large->at(i) * large->at(i);
  double m = s / n, sd = std::sqrt(s2 / n - m * m);
  for (int64_t i = 0; i + 1 < n; i += 2) cross += (large->at(i) - m) * (large->at(i + 1) - m);
  EXPECT_NEAR(m, 1.0, 0.01);
  EXPECT_NEAR(sd, 3.0, 0.01);
  EXPECT_NEAR(cross / (n / 2) / (sd * sd), 0.0, 0.01);  // within a pair: uncorrelated
  spec.init.dist = Dist::LogNormal;
  spec.init.a = 0.0;
  spec.init.b = 0.5;
  auto ln = generate_input(spec, {1000000}, {}, 3, false);
  ASSERT_TRUE(ln);
  double ls = 0;
  for (int64_t i = 0; i < ln->numel(); ++i) ls += std::log(ln->at(i));
  EXPECT_NEAR(ls / ln->numel(), 0.0, 0.01);
}
