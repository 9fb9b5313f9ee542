// `kevo import robust-kbench`: a robust-kbench-style folder written for these tests gives a forward
// and a backward task whose oracle's gradients are the analytic ones; the six folders of a
// robust-kbench checkout import, load, pass their lints (backward_pair and reduction_tolerance
// included) with the PyTorch oracle run on the CPU at their small configs.
#include "interop/import_robust_kbench.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <iostream>

#include "interop/task_compat.h"
#include "lint_support.h"
#include "task/tensor.h"
#include "test_support.h"
#include "torch/oracle.h"

namespace kevo::interop {
namespace {

using testing::TempDir;

// robust-kbench's task folders: $KEVO_ROBUST_KBENCH_DIR, else ../shared/robust-kbench beside the
// source tree (as the KernelBench coverage test finds ../shared/kernelbench).
fs::path robust_kbench_dir() {
  const char* e = std::getenv("KEVO_ROBUST_KBENCH_DIR");
  return e && *e ? fs::path(e) : fs::path(KEVO_SOURCE_DIR) / ".." / "shared" / "robust-kbench";
}

const Config& config_named(const Task& t, const std::string& name) {
  for (const auto& c : t.configs)
    if (c.name == name) return c;
  ADD_FAILURE() << t.name << ": no config " << name;
  return t.main();
}

TEST(ImportRobustKbench, ForwardAndBackwardOfATestFolder) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp("kevo-rkb-import");
  ImportOptions o;
  o.out_dir = tmp.path;
  auto r = import_robust_kbench(*b, testing::data("robust_kbench/scale_shift"), o);
  ASSERT_EQ(r.size(), 2u);
  for (const auto& t : r) ASSERT_TRUE(t) << t.error().message;
  auto fwd = load_task_with_torch(r[0]->dir);
  auto bwd = load_task_with_torch(r[1]->dir);
  ASSERT_TRUE(fwd) << fwd.error().message;
  ASSERT_TRUE(bwd) << bwd.error().message;
  EXPECT_EQ(bwd->name, "scale_shift_backward");
  EXPECT_EQ(config_named(*bwd, "multi_2").dims, (DimValues{{"batch_size", 48}, {"num_features", 160}}))
      << "shared keys override";
  ASSERT_TRUE(bwd->backward);
  EXPECT_EQ(bwd->backward->of, "scale_shift");
  EXPECT_EQ(bwd->backward->saved, (std::vector<std::string>{"x", "w"})) << "b: func_backward.py does not save it";
  ASSERT_EQ(bwd->outputs.size(), 3u);
  EXPECT_EQ(bwd->outputs[0].name, "grad_x");
  EXPECT_EQ(bwd->outputs[2].name, "grad_b");
  for (const Task* t : {&*fwd, &*bwd}) {
    auto rep = testing::lint_with_oracle(*b, *t);
    ASSERT_TRUE(rep) << rep.error().message;
    EXPECT_TRUE(rep->ok()) << format_report(*rep);
  }
  // The oracle's gradients are the analytic ones: inputs x, grad_out, w, b.
  const Config& c = config_named(*bwd, "small");
  auto in = generate_inputs(*bwd, c, 7, false);
  ASSERT_TRUE(in) << in.error().message;
  auto oracle = torch::TorchOracle::create(*b, *bwd, bwd->dir / "reference.py");
  ASSERT_TRUE(oracle) << oracle.error().message;
  auto out = oracle->outputs(c, *in, "cpu");
  ASSERT_TRUE(out) << out.error().message;
  const int64_t B = c.dims.at("batch_size"), F = c.dims.at("num_features");
  const HostTensor &x = (*in)[0], &g = (*in)[1], &w = (*in)[2];
  for (int64_t f = 0; f < F; ++f) {
    double gw = 0, gb = 0;
    for (int64_t i = 0; i < B; ++i) {
      size_t k = static_cast<size_t>(i * F + f);
      EXPECT_NEAR((*out)[0].at(k), g.at(k) * w.at(static_cast<size_t>(f)), 1e-5) << "grad_x at " << k;
      gw += g.at(k) * x.at(k);
      gb += g.at(k);
    }
    EXPECT_NEAR((*out)[1].at(static_cast<size_t>(f)), gw, 1e-4) << "grad_w at " << f;
    EXPECT_NEAR((*out)[2].at(static_cast<size_t>(f)), gb, 1e-4) << "grad_b at " << f;
  }
}

TEST(ImportRobustKbench, AllSixTasksOfACheckout) {
  fs::path dir = robust_kbench_dir();
  if (!fs::exists(dir / "layernorm" / "func_forward.py"))
    GTEST_SKIP() << "no robust-kbench checkout at " << dir << " (set KEVO_ROBUST_KBENCH_DIR)";
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp("kevo-rkb-six");
  ImportOptions o;
  o.out_dir = tmp.path;
  int imported = 0;
  for (const char* name : {"layernorm", "llama_rmsnorm", "mnist_cross_entropy", "mnist_linear",
                           "mnist_linear_relu", "mnist_pool"}) {
    auto r = import_robust_kbench(*b, dir / name, o);
    ASSERT_EQ(r.size(), 2u) << name << ": a forward and a backward task";
    if (!r[0] && r[0].error().message.find("needs torch >= 2.4: torch.nn.RMSNorm") != std::string::npos) {
      std::cout << "[ explained ] " << name << ": " << r[0].error().message << "\n";  // Debian's torch 1.13
      continue;
    }
    for (const auto& t : r) {
      ASSERT_TRUE(t) << name << ": " << t.error().message;
      auto task = load_task_with_torch(t->dir);
      ASSERT_TRUE(task) << task.error().message;
      EXPECT_EQ(task->backward.has_value(), t->name.ends_with("_backward"));
      auto rep = testing::lint_with_oracle(*b, *task);
      ASSERT_TRUE(rep) << t->name << ": " << rep.error().message;
      for (const auto& f : rep->findings) {
        if (f.severity != Severity::Fail) continue;
        // Explained: robust-kbench's layernorm func_backward.py saves bias, which a layer norm's
        // gradients do not depend on (kevo keeps what robust-kbench saves).
        bool explained = t->name == "layernorm_backward" && f.check == "input_unused" &&
                         f.message.find("input 'bias' can be ignored") != std::string::npos;
        EXPECT_TRUE(explained) << format_report(*rep);
        if (explained) std::cout << "[ explained ] " << t->name << ": " << f.message << "\n";
      }
      if (rep->count(Severity::Warn)) std::cout << format_report(*rep);
      ++imported;
    }
  }
  EXPECT_GE(imported, 10);
}

}  // namespace
}  // namespace kevo::interop
