// `kevo import kernelbench --backward`: sums_over from the shapes, the skip reasons (no Python), and
// the import of test problems whose backward tasks pass check_backward_pair and their lints and whose
// oracle's gradients are the analytic ones; an argmax problem gets the clear skip.
#include "interop/import_backward.h"

#include <gtest/gtest.h>

#include <cmath>

#include "interop/task_compat.h"
#include "lint_support.h"
#include "task/backward.h"
#include "task/tensor.h"
#include "test_support.h"
#include "torch/oracle.h"

namespace kevo::interop {
namespace {

using testing::TempDir;
using Axes = std::vector<std::vector<std::string>>;

std::string sums_over(const Axes& axes, size_t target) { return sums_over_text(sums_over_terms(axes, target), axes); }

TEST(ImportBackwardLogic, SumsOverMatmulAndSoftmax) {
  Axes mm{{"M", "K"}, {"K", "N"}, {"M", "N"}};  // A, B, grad of the output
  EXPECT_EQ(sums_over(mm, 0), "max(N, K)") << "dA sums over N; K: its own row, conservative";
  EXPECT_EQ(sums_over(mm, 1), "max(M, N)");
  Axes sm{{"B", "N"}, {"B", "N"}};  // softmax: x, grad of the output
  EXPECT_EQ(sums_over(sm, 0), "N") << "a reduction along x's own axis";
  Axes lin{{"batch", "in"}, {"out", "in"}, {"out"}, {"batch", "out"}};  // x, weight, bias, grad
  EXPECT_EQ(sums_over(lin, 2), "max(max(max(batch*in, in), batch), out)")
      << "the bias sums over the batch (conservatively: x's size)";
  auto t = sums_over_terms(lin, 1);
  double v = sums_over_value(t, [&](size_t i, size_t j) { return lin[i][j] == "batch" ? 64.0 : 8.0; });
  EXPECT_EQ(v, 64.0) << "the weight gradient sums the 64 rows of the batch";
}

TEST(ImportBackwardLogic, GradientAtolCoversTheSum) {
  EXPECT_DOUBLE_EQ(gradient_atol(1), 1e-4);
  for (double n : {1e3, 262144.0, 1.4e8}) {
    EXPECT_GE(gradient_atol(n), reduction_atol(n)) << n;
    EXPECT_LE(gradient_atol(n), 1.1 * std::max(1e-4, reduction_atol(n))) << n;
  }
}

torch::Description described(DType out, bool float_input, bool parameter) {
  torch::Description d;
  d.style = "module";
  torch::BridgeArg a;
  a.name = "x";
  a.tensor.dtype = float_input ? DType::F32 : DType::I64;
  d.args.push_back(a);
  if (parameter) d.weights.push_back(torch::BridgeTensor{"w", "parameter", "w", "float32", DType::F32, {4}, {}});
  d.outputs.push_back(torch::BridgeTensor{"out", "tensor", "", "", out, {4}, {}});
  return d;
}

TEST(ImportBackwardLogic, SkipReasons) {
  EXPECT_FALSE(static_backward_skip(described(DType::F32, true, false)));
  EXPECT_FALSE(static_backward_skip(described(DType::F32, false, true))) << "a parameter is enough";
  auto s = static_backward_skip(described(DType::I64, true, true));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->reason, BackwardSkip::kNonFloatOutput);
  EXPECT_EQ(to_string(s->reason), "non_float_output");
  s = static_backward_skip(described(DType::F32, false, false));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->reason, BackwardSkip::kNoGradTarget);
  auto fn = described(DType::F32, true, false);
  fn.style = "function";
  EXPECT_EQ(static_backward_skip(fn)->reason, BackwardSkip::kNotModule);

  auto p = parse_grad_probe(torch::ojson{{"verdict", "disconnected"}});
  ASSERT_TRUE(p);
  EXPECT_EQ(probe_backward_skip(*p)->reason, BackwardSkip::kDisconnected);
  p = parse_grad_probe(torch::ojson{{"verdict", "ok"}, {"args", {false}}, {"weights", torch::ojson::array()}});
  ASSERT_TRUE(p);
  EXPECT_EQ(probe_backward_skip(*p)->reason, BackwardSkip::kDisconnected) << "reaches nothing";
  p = parse_grad_probe(torch::ojson{{"verdict", "inplace"}, {"error", "ReluBackward0: modified"}});
  EXPECT_EQ(probe_backward_skip(*p)->reason, BackwardSkip::kInplace);
  p = parse_grad_probe(torch::ojson{{"verdict", "ok"}, {"args", {true}}, {"weights", torch::ojson::array()}});
  EXPECT_FALSE(probe_backward_skip(*p));
  EXPECT_FALSE(parse_grad_probe(torch::ojson{{"verdict", "maybe"}}));
}

struct Imported {
  ImportedTask fwd;
  BackwardImport bwd;
};

Imported import_with_backward(torch::TorchBridge& b, const std::string& file, const fs::path& out) {
  ImportOptions o;
  o.out_dir = out;
  ProblemShape shape;
  auto f = import_kernelbench(b, testing::data(file), o, &shape);
  EXPECT_TRUE(f) << f.error().message;
  if (!f) return {};
  return {*f, import_kernelbench_backward(b, testing::data(file), f->name, shape, o)};
}

TEST(ImportBackward, SoftmaxGradientsAreTheAnalyticOnes) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp("kevo-kb-backward");
  auto im = import_with_backward(*b, "kb_softmax.py", tmp.path);
  ASSERT_TRUE(im.bwd.task && *im.bwd.task) << (im.bwd.task ? im.bwd.task->error().message : "skipped");
  auto fwd = load_task_with_torch(im.fwd.dir);
  auto bwd = load_task_with_torch((*im.bwd.task)->dir);
  ASSERT_TRUE(fwd && bwd);
  ASSERT_TRUE(bwd->backward);
  EXPECT_EQ(bwd->backward->of, "kb_softmax");
  auto pair = check_backward_pair(*bwd, *fwd);
  EXPECT_TRUE(pair) << pair.error().message;
  auto rep = testing::lint_with_oracle(*b, *bwd);
  ASSERT_TRUE(rep) << rep.error().message;
  EXPECT_TRUE(rep->ok()) << format_report(*rep);
  const Config& c = bwd->main().dims.at("dim") > 4096 ? bwd->configs.back() : bwd->main();
  auto in = generate_inputs(*bwd, c, 3, false);
  ASSERT_TRUE(in) << in.error().message;
  auto oracle = torch::TorchOracle::create(*b, *bwd, bwd->dir / "reference.py");
  ASSERT_TRUE(oracle) << oracle.error().message;
  auto out = oracle->outputs(c, *in, "cpu");
  ASSERT_TRUE(out) << out.error().message;
  ASSERT_EQ(out->size(), 1u);
  const HostTensor &x = (*in)[0], &g = (*in)[1];
  const int64_t B = c.dims.at("batch_size"), N = c.dims.at("dim");
  for (int64_t r = 0; r < B; ++r) {  // dx = y * (g - sum(g * y)), y = softmax(x)
    double m = -1e300, z = 0, gy = 0;
    for (int64_t j = 0; j < N; ++j) m = std::max(m, x.at(static_cast<size_t>(r * N + j)));
    for (int64_t j = 0; j < N; ++j) z += std::exp(x.at(static_cast<size_t>(r * N + j)) - m);
    for (int64_t j = 0; j < N; ++j) {
      size_t k = static_cast<size_t>(r * N + j);
      gy += g.at(k) * std::exp(x.at(k) - m) / z;
    }
    for (int64_t j = 0; j < N; ++j) {
      size_t k = static_cast<size_t>(r * N + j);
      double y = std::exp(x.at(k) - m) / z;
      ASSERT_NEAR((*out)[0].at(k), y * (g.at(k) - gy), 1e-6) << "grad_x at " << k << " on " << c.name;
    }
  }
}

TEST(ImportBackward, LinearGeluHasInputAndWeightGradients) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp("kevo-kb-backward");
  auto im = import_with_backward(*b, "kb_linear_gelu.py", tmp.path);
  ASSERT_TRUE(im.bwd.task && *im.bwd.task) << (im.bwd.task ? im.bwd.task->error().message : "skipped");
  auto fwd = load_task_with_torch(im.fwd.dir);
  auto bwd = load_task_with_torch((*im.bwd.task)->dir);
  ASSERT_TRUE(fwd && bwd);
  auto pair = check_backward_pair(*bwd, *fwd);
  EXPECT_TRUE(pair) << pair.error().message;
  ASSERT_GE(bwd->outputs.size(), 2u);
  EXPECT_EQ(bwd->outputs[0].name, "grad_x");
  for (const auto& t : {&*fwd, &*bwd}) {
    auto rep = testing::lint_with_oracle(*b, *t);
    ASSERT_TRUE(rep) << rep.error().message;
    EXPECT_TRUE(rep->ok()) << t->name << "\n" << format_report(*rep);
  }
}

TEST(ImportBackward, ArgmaxIsSkippedWithItsReason) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp("kevo-kb-backward");
  auto im = import_with_backward(*b, "kb_argmax.py", tmp.path);
  EXPECT_TRUE(fs::exists(im.fwd.dir / "task.toml")) << "the forward import still succeeds";
  EXPECT_FALSE(im.bwd.task);
  ASSERT_TRUE(im.bwd.skipped);
  EXPECT_EQ(im.bwd.skipped->reason, BackwardSkip::kNonFloatOutput);
  EXPECT_FALSE(fs::exists(tmp.path / "kb_argmax_backward"));
}

}  // namespace
}  // namespace kevo::interop
