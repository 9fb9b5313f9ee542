// Every bundled backward task's CPU reference (tasks/*_backward/reference.cpp) against central
// finite differences of its forward task's CPU reference: with the incoming gradients g_o as
// weights, loss = sum_o sum_i g_o[i] * y_o[i], and each gradient element the backward computes
// must be d loss / d x at that element. The two references are written independently (one the
// op, one its derivative), so this checks the derivation, not only the code.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <filesystem>

#include "reference_support.h"
#include "task/backward.h"
#include "task/tensor.h"

namespace fs = std::filesystem;
using namespace kevo;
using kevo::test::load_reference;
using kevo::test::RefFn;
using kevo::test::run_ref;
using kevo::test::T;

namespace {

const fs::path kTasks = fs::path(KEVO_SOURCE_DIR) / "tasks";
constexpr uint64_t kSeed = 20261126;
constexpr int kProbes = 12;          // gradient elements checked per gradient
constexpr double kStep = 1e-6;       // relative finite-difference step: rounding stays ~1e-10
constexpr double kAgreement = 1e-6;  // |fd - grad| <= kAgreement * (1 + |grad|), plus the
constexpr double kRoundoffs = 64;    // loss's rounding: kRoundoffs * eps * sum|terms| / step

std::vector<T> to_doubles(const std::vector<HostTensor>& ts) {
  std::vector<T> out;
  for (const auto& h : ts) {
    T t(h.shape);
    for (int64_t i = 0; i < h.numel(); ++i) t[i] = h.at(static_cast<size_t>(i));
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<T> outputs_of(const Task& task, const Config& c) {
  std::vector<T> out;
  for (const auto& o : task.outputs) out.emplace_back(*task.shape_of(o, c));
  return out;
}

std::vector<double> scalars_of(const Task& task) {
  std::vector<double> v;
  for (const auto& s : task.scalars) v.push_back(s.value);
  return v;
}

// The smallest visible config: finite differences run the forward twice per probe.
const Config& smallest(const Task& task) {
  const Config* best = nullptr;
  int64_t best_n = INT64_MAX;
  for (const auto& c : task.configs) {
    if (c.held_out) continue;
    int64_t n = 0;
    for (const auto& t : task.inputs) {
      int64_t e = 1;
      const std::vector<int64_t> shape = *task.shape_of(t, c);
      for (auto d : shape) e *= d;
      n += e;
    }
    if (n < best_n) best = &c, best_n = n;
  }
  return *best;
}

size_t index_of(const std::vector<TensorSpec>& list, const std::string& name) {
  for (size_t i = 0; i < list.size(); ++i)
    if (list[i].name == name) return i;
  ADD_FAILURE() << "no tensor " << name;
  return 0;
}

std::vector<std::string> backward_tasks() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(kTasks, ec)) {
    auto t = load_task(e.path());
    if (t && t->backward) out.push_back(t->name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

class BackwardTask : public testing::TestWithParam<std::string> {};

TEST_P(BackwardTask, GradientsMatchFiniteDifferencesOfTheForward) {
  auto bwd = load_task(kTasks / GetParam());
  ASSERT_TRUE(bwd) << bwd.error().message;
  auto fwd = load_task(forward_dir(*bwd));
  ASSERT_TRUE(fwd) << fwd.error().message;
  ASSERT_TRUE(check_backward_pair(*bwd, *fwd));
  std::string why;
  RefFn bref = load_reference(bwd->name, &why), fref = load_reference(fwd->name, &why);
  if (!why.empty()) GTEST_SKIP() << why;
  ASSERT_TRUE(bref && fref);

  const Config& c = smallest(*bwd);
  auto bh = generate_inputs(*bwd, c, kSeed, false);
  auto fh = generate_inputs(*fwd, c, kSeed, false);
  ASSERT_TRUE(bh && fh);
  std::vector<T> bin = to_doubles(*bh), fin = to_doubles(*fh), grads = outputs_of(*bwd, c);
  // A saved output holds what the forward computes from these inputs (kevo's checks draw it:
  // TASK_FORMAT.md, saved_outputs; the derivation is checked on the forward's own values).
  if (!bwd->backward->saved_outputs.empty()) {
    std::vector<T> ys = outputs_of(*fwd, c);
    run_ref(fref, fin, ys, scalars_of(*fwd), fwd->dim_values(c));
    for (const auto& [in, out] : bwd->backward->saved_outputs)
      bin[index_of(bwd->inputs, in)] = ys[index_of(fwd->outputs, out)];
  }
  run_ref(bref, bin, grads, scalars_of(*bwd), bwd->dim_values(c));

  double magnitude = 0;  // sum of |terms| of the loss: what its rounding error scales with
  auto loss = [&](std::vector<T>& in) {
    std::vector<T> ys = outputs_of(*fwd, c);
    run_ref(fref, in, ys, scalars_of(*fwd), fwd->dim_values(c));
    double l = 0;
    magnitude = 0;
    for (const auto& [g, y] : bwd->backward->grad_outputs) {
      const T& gt = bin[index_of(bwd->inputs, g)];
      const T& yt = ys[index_of(fwd->outputs, y)];
      for (int64_t i = 0; i < yt.numel(); ++i)
        l += gt[i] * yt[i], magnitude += std::abs(gt[i] * yt[i]);
    }
    return l;
  };
  for (size_t o = 0; o < grads.size(); ++o) {
    const GradientSpec& g = bwd->backward->gradients[o];
    T& x = fin[index_of(fwd->inputs, g.of)];
    const int64_t n = x.numel();
    int bad = 0;
    for (int p = 0; p < kProbes && p < n; ++p) {
      const int64_t i = p == 0 ? 0 : p == 1 ? n - 1 : (p * 7919) % n;
      const double x0 = x[i], h = kStep * std::max(1.0, std::abs(x0));
      x[i] = x0 + h;
      const double up = loss(fin);
      x[i] = x0 - h;
      const double down = loss(fin);
      x[i] = x0;
      const double fd = (up - down) / (2 * h), got = grads[o][i];
      const double allowed =
          kAgreement * (1 + std::abs(got)) + kRoundoffs * DBL_EPSILON * magnitude / h;
      if (std::abs(fd - got) > allowed && ++bad <= 3)
        ADD_FAILURE() << bwd->name << ": " << g.output << "[" << i << "] = " << got
                      << ", finite differences of " << fwd->name << " give " << fd << " (config "
                      << c.name << ")";
    }
    EXPECT_EQ(bad, 0) << g.output;
  }
}

// Finite differences never see a tie, so maxpool2d_backward's tie rule is checked here: on a
// constant x every in-bounds position ties, and each window's dy must go to its first one in
// row-major order (the forward's scan keeps the first maximum; so does PyTorch).
TEST(MaxPoolBackward, TiesGoToTheFirstPositionOfTheWindow) {
  std::string why;
  RefFn ref = load_reference("maxpool2d_backward", &why);
  if (!why.empty()) GTEST_SKIP() << why;
  ASSERT_TRUE(ref);
  // Overlapping, padded windows: a position is in several windows and some windows start in
  // the padding.
  const int64_t N = 1, C = 2, H = 6, W = 7, KS = 3, stride = 2, P = 1;
  const int64_t HO = (H + 2 * P - KS) / stride + 1, WO = (W + 2 * P - KS) / stride + 1;
  std::vector<T> in = {T({N, C, H, W}), T({N, C, HO, WO})}, out = {T({N, C, H, W})};
  std::fill(in[0].data.begin(), in[0].data.end(), 0.5);
  for (int64_t i = 0; i < in[1].numel(); ++i) in[1][i] = 1.0 + static_cast<double>(i);
  run_ref(ref, in, out, {}, {N, C, H, W, KS, stride, P});
  T want({N, C, H, W});
  for (int64_t nc = 0; nc < N * C; ++nc)
    for (int64_t oh = 0; oh < HO; ++oh)
      for (int64_t ow = 0; ow < WO; ++ow)
        want[(nc * H + std::max<int64_t>(0, oh * stride - P)) * W +
             std::max<int64_t>(0, ow * stride - P)] += in[1][(nc * HO + oh) * WO + ow];
  for (int64_t i = 0; i < want.numel(); ++i) EXPECT_EQ(out[0][i], want[i]) << "dx[" << i << "]";
}

INSTANTIATE_TEST_SUITE_P(Tasks, BackwardTask, testing::ValuesIn(backward_tasks()),
                         [](const auto& i) { return i.param; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BackwardTask);

}  // namespace
