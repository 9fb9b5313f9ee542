// The PyTorch oracle on CPU against bundled tasks' CPU references: kevo generates the inputs of a
// task config, the bridge runs a PyTorch reference of the same op (tests/torch/data/torch_*.py)
// on them, tasks/<name>/reference.cpp runs on the same inputs (compiled with g++, dlopen'ed), and
// the outputs must agree within the task's tolerance.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <kevo/reference.h>

#include "task/task.h"
#include "task/tensor.h"
#include "test_support.h"
#include "torch/oracle.h"
#include "util/subprocess.h"

namespace kevo::torch {
namespace {

using RefFn = void (*)(const kevo_ref_args*);

RefFn compile_reference(const std::string& task, const fs::path& dir, std::string* why) {
  auto cxx = find_program("g++");
  if (!cxx) {
    *why = "g++ not found: cannot compile the task's CPU reference";
    return nullptr;
  }
  const fs::path src = fs::path(KEVO_SOURCE_DIR) / "tasks" / task / "reference.cpp";
  const fs::path so = dir / (task + ".so");
  auto r = run_process({.argv = {*cxx, "-O2", "-std=c++17", "-shared", "-fPIC",
                                 "-I" + (fs::path(KEVO_SOURCE_DIR) / "include").string(), "-o", so.string(),
                                 src.string()},
                        .timeout = std::chrono::milliseconds(120000)});
  if (!r || !r->ok()) {
    ADD_FAILURE() << src << " does not compile: " << (r ? r->err : r.error().message);
    return nullptr;
  }
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    ADD_FAILURE() << dlerror();
    return nullptr;
  }
  return reinterpret_cast<RefFn>(dlsym(h, "kevo_reference"));
}

void serial_for(int64_t n, void* ctx, void (*fn)(void*, int64_t)) {
  for (int64_t i = 0; i < n; ++i) fn(ctx, i);
}

// Runs the CPU reference on `inputs` (converted to double); outputs as doubles.
std::vector<std::vector<double>> run_cpu(RefFn fn, const Task& task, const Config& c,
                                         const std::vector<HostTensor>& inputs) {
  std::vector<std::vector<double>> in_d, out_d;
  std::vector<kevo_ref_tensor> ins, outs;
  for (const auto& t : inputs) {
    std::vector<double> v(static_cast<size_t>(t.numel()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = t.at(i);
    in_d.push_back(std::move(v));
  }
  for (const auto& o : task.outputs) {
    auto s = task.shape_of(o, c);
    int64_t n = 1;
    for (auto d : *s) n *= d;
    out_d.emplace_back(static_cast<size_t>(n), 0.0);
  }
  auto conv = [](std::vector<double>& d, const std::vector<int64_t>& shape) {
    kevo_ref_tensor r{};
    r.data = d.data();
    r.ndim = static_cast<int>(shape.size());
    for (size_t i = 0; i < shape.size(); ++i) r.shape[i] = shape[i];
    return r;
  };
  for (size_t i = 0; i < inputs.size(); ++i) ins.push_back(conv(in_d[i], inputs[i].shape));
  for (size_t i = 0; i < task.outputs.size(); ++i) outs.push_back(conv(out_d[i], *task.shape_of(task.outputs[i], c)));
  std::vector<double> scalars;
  for (const auto& s : task.scalars) scalars.push_back(s.value);
  auto dims = task.dim_values(c);
  kevo_ref_args a{};
  a.inputs = ins.data();
  a.num_inputs = static_cast<int>(ins.size());
  a.outputs = outs.data();
  a.num_outputs = static_cast<int>(outs.size());
  a.scalars = scalars.data();
  a.num_scalars = static_cast<int>(scalars.size());
  a.dims = dims.data();
  a.num_dims = static_cast<int>(dims.size());
  a.parallel_for = serial_for;
  fn(&a);
  return out_d;
}

// Compares the bridge's outputs for every visible config small enough for a CPU run.
void compare_task(const std::string& task_name, const std::string& torch_file) {
  KEVO_BRIDGE_OR_SKIP(b);
  auto task = load_task(fs::path(KEVO_SOURCE_DIR) / "tasks" / task_name);
  ASSERT_TRUE(task) << task.error().message;
  testing::TempDir tmp;
  std::string why;
  RefFn ref = compile_reference(task_name, tmp.path, &why);
  if (!ref && !why.empty()) GTEST_SKIP() << why;
  ASSERT_NE(ref, nullptr);
  auto oracle = TorchOracle::create(*b, *task, testing::data(torch_file));
  ASSERT_TRUE(oracle) << oracle.error().message;
  int compared = 0;
  for (const auto& c : task->configs) {
    double elems = 1;
    for (const auto& [d, v] : c.dims) elems *= static_cast<double>(v);
    if (elems > 2e6) continue;  // keep the CPU run short
    for (uint64_t seed : {1, 2}) {
      auto inputs = generate_inputs(*task, c, seed, /*wide=*/seed == 2);
      ASSERT_TRUE(inputs) << inputs.error().message;
      auto got = oracle->outputs(c, *inputs);
      ASSERT_TRUE(got) << c.name << ": " << got.error().message;
      auto want = run_cpu(ref, *task, c, *inputs);
      ASSERT_EQ(got->size(), want.size());
      for (size_t o = 0; o < want.size(); ++o) {
        const HostTensor& g = (*got)[o];
        ASSERT_EQ(static_cast<size_t>(g.numel()), want[o].size()) << c.name;
        EXPECT_EQ(g.dtype, task->outputs[o].dtype);
        EXPECT_EQ(g.shape, *task->shape_of(task->outputs[o], c));
        Tolerance tol = task->tolerance_for(task->outputs[o].dtype);
        double rms = 0;
        for (double v : want[o]) rms += v * v;
        rms = std::sqrt(rms / static_cast<double>(std::max<size_t>(1, want[o].size())));
        size_t bad = 0;
        for (size_t i = 0; i < want[o].size(); ++i) {
          double d = std::fabs(g.at(i) - want[o][i]);
          if (!(d <= tol.atol * std::max(1.0, rms) + tol.rtol * std::fabs(want[o][i]))) {
            if (bad++ < 3)
              ADD_FAILURE() << task_name << " config " << c.name << " seed " << seed << " element " << i
                            << ": torch " << g.at(i) << " vs reference.cpp " << want[o][i];
          }
        }
        EXPECT_EQ(bad, 0u) << task_name << " " << c.name;
      }
      ++compared;
    }
  }
  EXPECT_GE(compared, 2) << "no config small enough to compare";
}

TEST(Oracle, SoftmaxMatchesCpuReference) { compare_task("softmax", "torch_softmax.py"); }
TEST(Oracle, GeluMatchesCpuReference) { compare_task("gelu", "torch_gelu.py"); }
TEST(Oracle, LayernormWithWeightsMatchesCpuReference) { compare_task("layernorm", "torch_layernorm.py"); }

}  // namespace
}  // namespace kevo::torch
