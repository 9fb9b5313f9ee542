// The [backward] table of the task format (task/task.cpp) and the checks of a backward task
// against its forward (task/backward.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "task/backward.h"
#include "task/task.h"
#include "task/tensor.h"

using namespace kevo;

namespace {

const char* kConfigs = R"(
[[configs]]
name = "a"
dims = { B = 64, N = 64, M = 8 }
[[configs]]
name = "b"
dims = { B = 100, N = 33, M = 5 }
[[configs]]
name = "c"
dims = { B = 2, N = 2, M = 3 }
[[configs]]
name = "h"
dims = { B = 7, N = 9, M = 4 }
held_out = true
)";

// y = x W^T + b.
const std::string kForward = std::string(R"(
name = "linear"
category = "matmul"
description = "Linear layer."
dims = ["B", "N", "M"]
flops = "2*B*N*M"
bytes = "4*B*N"
[[inputs]]
name = "x"
dtype = "f32"
shape = ["B", "N"]
[[inputs]]
name = "W"
dtype = "f32"
shape = ["M", "N"]
role = "weight"
init = { dist = "normal", std = 0.1 }
[[inputs]]
name = "b"
dtype = "f32"
shape = ["M"]
role = "weight"
[[outputs]]
name = "y"
dtype = "f32"
shape = ["B", "M"]
)") + kConfigs;

const std::string kBackward = std::string(R"(
name = "linear_backward"
category = "matmul"
description = "Gradients of a linear layer."
dims = ["B", "N", "M"]
flops = "4*B*N*M"
bytes = "4*B*N"
[[inputs]]
name = "x"
dtype = "f32"
shape = ["B", "N"]
[[inputs]]
name = "W"
dtype = "f32"
shape = ["M", "N"]
role = "weight"
init = { dist = "normal", std = 0.1 }
[[inputs]]
name = "dy"
dtype = "f32"
shape = ["B", "M"]
[[outputs]]
name = "dx"
dtype = "f32"
shape = ["B", "N"]
[[outputs]]
name = "dW"
dtype = "f32"
shape = ["M", "N"]
[[outputs]]
name = "db"
dtype = "f32"
shape = ["M"]
[backward]
of = "linear"
saved = ["x", "W"]
grad_outputs = { dy = "y" }
gradients = [
  { output = "db", of = "b", sums_over = "B" },
  { output = "dx", of = "x", sums_over = "M" },
  { output = "dW", of = "W", sums_over = "B" },
]
)") + kConfigs;

std::string replace(std::string s, const std::string& from, const std::string& to) {
  auto p = s.find(from);
  EXPECT_NE(p, std::string::npos) << from;
  return p == std::string::npos ? s : s.replace(p, from.size(), to);
}

Result<Task> parse_in(const std::string& text, const std::string& folder) {
  auto t = parse_task(text, "tasks/" + folder + "/task.toml");
  if (t) t->dir = "tasks/" + folder;
  return t;
}

void expect_parse_error(const std::string& text, const std::string& needle) {
  auto t = parse_in(text, "linear_backward");
  ASSERT_FALSE(t) << "expected an error containing: " << needle;
  EXPECT_NE(t.error().message.find(needle), std::string::npos) << t.error().message;
  EXPECT_NE(t.error().message.find("tasks/linear_backward/task.toml"), std::string::npos)
      << t.error().message;
}

void expect_pair_error(const std::string& bwd_text, const std::string& fwd_text,
                       const std::string& needle) {
  auto b = parse_in(bwd_text, "linear_backward");
  auto f = parse_in(fwd_text, "linear");
  ASSERT_TRUE(b) << b.error().message;
  ASSERT_TRUE(f) << f.error().message;
  Status s = check_backward_pair(*b, *f);
  ASSERT_FALSE(s) << "expected an error containing: " << needle;
  EXPECT_NE(s.error().message.find(needle), std::string::npos) << s.error().message;
}

}  // namespace

TEST(Backward, ParsesTheTable) {
  auto t = parse_in(kBackward, "linear_backward");
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_TRUE(t->backward);
  EXPECT_EQ(t->backward->of, "linear");
  EXPECT_EQ(t->backward->saved, (std::vector<std::string>{"x", "W"}));
  ASSERT_EQ(t->backward->grad_outputs.size(), 1u);
  EXPECT_EQ(t->backward->grad_outputs[0], (std::pair<std::string, std::string>{"dy", "y"}));
  // Gradients come back in the order of the outputs, whatever order the file lists them in.
  ASSERT_EQ(t->backward->gradients.size(), 3u);
  EXPECT_EQ(t->backward->gradients[0].output, "dx");
  EXPECT_EQ(t->backward->gradients[0].sums_over, "M");
  EXPECT_EQ(t->backward->gradients[2].of, "b");
  EXPECT_EQ(forward_dir(*t), std::filesystem::path("tasks/linear"));
  auto f = parse_in(kForward, "linear");
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_FALSE(f->backward);
}

TEST(Backward, MalformedTablesNameTheField) {
  expect_parse_error(replace(kBackward, "of = \"linear\"", "of = \"Linear!\""), "backward.of");
  expect_parse_error(replace(kBackward, "of = \"linear\"", "of = \"linear_backward\""),
                     "another task");
  expect_parse_error(replace(kBackward, "saved = [\"x\", \"W\"]", "saved = [\"x\", \"q\"]"),
                     "backward.saved: 'q' is not one of this task's inputs");
  expect_parse_error(replace(kBackward, "saved = [\"x\", \"W\"]", "saved = [\"x\"]"),
                     "input 'W' must be listed exactly once");
  expect_parse_error(replace(kBackward, "saved = [\"x\", \"W\"]", "saved = [\"x\", \"W\", \"dy\"]"),
                     "input 'dy' must be listed exactly once");
  expect_parse_error(
      replace(kBackward, "grad_outputs = { dy = \"y\" }", "grad_outputs = { dz = \"y\" }"),
      "backward.grad_outputs.dz: 'dz' is not one of this task's inputs");
  expect_parse_error(replace(kBackward, "grad_outputs = { dy = \"y\" }", "grad_outputs = {}"),
                     "backward.grad_outputs");
  expect_parse_error(
      replace(kBackward, "  { output = \"db\", of = \"b\", sums_over = \"B\" },\n", ""),
      "output 'db' must be listed exactly once");
  expect_parse_error(replace(kBackward, "output = \"db\", of = \"b\", sums_over = \"B\"",
                             "output = \"db\", of = \"b\""),
                     "backward.gradients(db).sums_over: missing");
  expect_parse_error(replace(kBackward, "sums_over = \"M\"", "sums_over = \"K\""),
                     "backward.gradients(dx).sums_over");
  expect_parse_error(replace(kBackward, "sums_over = \"M\"", "sums_over = \"M-8\""),
                     "must be at least 1");
  expect_parse_error(replace(kBackward, "output = \"dx\"", "output = \"dz\""),
                     "'dz' is not one of this task's outputs");
  expect_parse_error(replace(kBackward, "grad_outputs =", "gradouts ="),
                     "backward.gradouts: unknown key");
  expect_parse_error(replace(kBackward, "output = \"dx\", of", "output = \"dx\", off"),
                     "unknown key");
}

TEST(Backward, PairMatchesTheForward) {
  auto b = parse_in(kBackward, "linear_backward");
  auto f = parse_in(kForward, "linear");
  ASSERT_TRUE(b && f);
  EXPECT_TRUE(check_backward_pair(*b, *f));
  // A saved input draws the same values as the forward's input of that name for the same seed:
  // that is what makes it the forward's input.
  const Config& c = b->configs[1];
  auto bx = generate_inputs(*b, c, 42, false), fx = generate_inputs(*f, c, 42, false);
  ASSERT_TRUE(bx && fx);
  EXPECT_EQ((*bx)[0].bytes, (*fx)[0].bytes);
  EXPECT_EQ((*bx)[1].bytes, (*fx)[1].bytes);
  EXPECT_FALSE(check_backward_pair(*f, *f));  // the forward is no backward task
}

TEST(Backward, PairMismatchesAreNamed) {
  expect_pair_error(replace(kBackward, "init = { dist = \"normal\", std = 0.1 }", ""), kForward,
                    "saved input 'W': its role and init must be the forward's");
  expect_pair_error(
      replace(kBackward, "shape = [\"M\", \"N\"]\nrole", "shape = [\"N\", \"M\"]\nrole"), kForward,
      "saved input 'W'");
  expect_pair_error(
      replace(kBackward, "grad_outputs = { dy = \"y\" }", "grad_outputs = { dy = \"z\" }"),
      kForward, "'z' is not an output of the forward task 'linear'");
  expect_pair_error(replace(kBackward, "of = \"b\"", "of = \"bias\""), kForward,
                    "backward.gradients(db).of: 'bias' is not an input of the forward task");
  expect_pair_error(kBackward, replace(kForward, "name = \"x\"", "name = \"x0\""),
                    "backward.saved: 'x' is not an input of the forward task 'linear'");
  expect_pair_error(
      replace(kBackward, "name = \"dy\"\ndtype = \"f32\"", "name = \"dy\"\ndtype = \"f16\""),
      kForward, "incoming gradient 'dy'");
  // Both files are named, so the author knows which one to fix.
  expect_pair_error(replace(kBackward, "name = \"db\"\ndtype = \"f32\"\nshape = [\"M\"]",
                            "name = \"db\"\ndtype = \"f32\"\nshape = [\"B\"]"),
                    kForward, "tasks/linear/task.toml");
  std::string with_k =
      replace(kForward, "dims = [\"B\", \"N\", \"M\"]", "dims = [\"B\", \"N\", \"M\", \"K\"]");
  for (size_t p = 0; (p = with_k.find(", M = ", p)) != std::string::npos; p += 12)
    with_k.replace(p, 6, ", K = 1, M = ");
  expect_pair_error(kBackward, with_k,
                    "the forward task 'linear' has dimension 'K'; declare it here too");
}

TEST(Backward, ReductionToleranceGrowsWithTheTerms) {
  EXPECT_DOUBLE_EQ(reduction_atol(1), kReductionMargin * kF32Roundoff);
  EXPECT_DOUBLE_EQ(reduction_atol(0), reduction_atol(1));
  EXPECT_DOUBLE_EQ(reduction_atol(40000), 200 * reduction_atol(1));
  // The default f32 atol (1e-4) covers a sum over 8192 rows but not over a 64x64x16 image batch.
  EXPECT_LT(reduction_atol(8192), 1e-4);
  EXPECT_GT(reduction_atol(64 * 64 * 16 * 4), 1e-4);
}

namespace {

// kBackward with the forward's output y saved as an input (as a ReLU layer's backward reads it).
std::string with_saved_output(const std::string& y_init) {
  std::string s = replace(kBackward, "[[inputs]]\nname = \"dy\"",
                          "[[inputs]]\nname = \"y\"\ndtype = \"f32\"\nshape = [\"B\", \"M\"]\ninit = " + y_init +
                              "\n[[inputs]]\nname = \"dy\"");
  return replace(s, "grad_outputs = { dy = \"y\" }", "saved_outputs = { y = \"y\" }\ngrad_outputs = { dy = \"y\" }");
}

}  // namespace

TEST(Backward, SavedOutputsAreInputsHoldingAForwardOutput) {
  const std::string text = with_saved_output("{ dist = \"normal\", std = 1.0, min = 0.0 }");
  auto b = parse_in(text, "linear_backward");
  ASSERT_TRUE(b) << b.error().message;
  ASSERT_EQ(b->backward->saved_outputs.size(), 1u);
  EXPECT_EQ(b->backward->saved_outputs[0], (std::pair<std::string, std::string>{"y", "y"}));
  auto f = parse_in(kForward, "linear");
  ASSERT_TRUE(f);
  EXPECT_TRUE(check_backward_pair(*b, *f)) << check_backward_pair(*b, *f).error().message;
  // Listed twice, or named after no output of the forward, or shaped unlike it: each named.
  expect_parse_error(replace(text, "saved = [\"x\", \"W\"]", "saved = [\"x\", \"W\", \"y\"]"),
                     "input 'y' must be listed exactly once");
  expect_parse_error(replace(text, "saved_outputs = { y = \"y\" }", "saved_outputs = { q = \"y\" }"),
                     "backward.saved_outputs.q: 'q' is not one of this task's inputs");
  expect_pair_error(replace(text, "saved_outputs = { y = \"y\" }", "saved_outputs = { y = \"z\" }"), kForward,
                    "backward.saved_outputs.y: 'z' is not an output of the forward task 'linear'");
  expect_pair_error(replace(text, "name = \"y\"\ndtype = \"f32\"\nshape = [\"B\", \"M\"]",
                            "name = \"y\"\ndtype = \"f32\"\nshape = [\"M\", \"B\"]"),
                    kForward, "saved output 'y'");
}

TEST(Backward, MinRaisesDrawsAsAReluOutputLooks) {
  auto b = parse_in(with_saved_output("{ dist = \"normal\", std = 1.0, min = 0.0 }"), "linear_backward");
  ASSERT_TRUE(b) << b.error().message;
  const Config& c = b->configs[0];
  for (bool wide : {false, true}) {
    auto xs = generate_inputs(*b, c, 7, wide);
    ASSERT_TRUE(xs) << xs.error().message;
    const HostTensor& y = (*xs)[2];
    ASSERT_EQ(y.name, "y");
    size_t zeros = 0, n = y.bytes.size() / sizeof(float);
    for (size_t i = 0; i < n; ++i) {
      float v;
      std::memcpy(&v, y.bytes.data() + i * sizeof(float), sizeof v);
      EXPECT_GE(v, 0.f);
      zeros += v == 0.f;
    }
    EXPECT_GT(zeros, n / 3) << "about half of a clamped normal is exactly 0";
    EXPECT_LT(zeros, 2 * n / 3);
  }
  // The timed draws (the runner's) are raised the same way.
  auto d = draw_spec(b->inputs[2], c.dims, 7, false);
  ASSERT_TRUE(d);
  d->timed = true;
  int zeros = 0;
  for (int64_t i = 0; i < 1000; ++i) {
    EXPECT_GE(draw_value(*d, i), 0.0);
    zeros += draw_value(*d, i) == 0.0;
  }
  EXPECT_GT(zeros, 300);
  // Only float draws take a min.
  expect_parse_error(
      with_saved_output("{ dist = \"normal\", std = 1.0, min = \"zero\" }"), "inputs(y).init.min: must be a number");
}
