// A task's PyTorch side timed through the bridge on the CPU (TimeOptions::device "cpu", so CI can
// exercise the protocol): eager, torch.compile (an error value before torch 2.0), and the task's
// PyTorch extension baseline: a CUDA one fails cleanly naming the cause, a C++ one is built once
// per bridge session and timed, a broken one fails alone with its compiler log, and a mode that
// hangs costs only that mode.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "test_support.h"
#include "torch/torch_timing.h"

namespace kevo::torch {
namespace {

using Clock = std::chrono::steady_clock;

const char* kToml = R"(name = "relu_scale"
category = "elementwise"
description = "out = relu(x) * 2 (an EvoEngineer-style record for the PyTorch timing tests)."
dims = ["batch_size", "dim"]
flops = "batch_size*dim"
bytes = "8*batch_size*dim"
oracle = "torch"
torch_reference = "reference.py"
torch_baseline = "@EXT@"

[[inputs]]
name = "x"
dtype = "f32"
shape = ["batch_size", "dim"]

[[outputs]]
name = "out"
dtype = "f32"
shape = ["batch_size", "dim"]

[[configs]]
name = "main"
dims = { batch_size = 64, dim = 1024 }
main = true

[[configs]]
name = "ragged"
dims = { batch_size = 7, dim = 1001 }

[[configs]]
name = "tiny"
dims = { batch_size = 1, dim = 33 }

[[configs]]
name = "held"
dims = { batch_size = 3, dim = 777 }
held_out = true
)";

// The functional rewrite EvoEngineer and the AI CUDA Engineer use: Model.forward(x, fn=module_fn).
const char* kReference = R"(import time
import torch
import torch.nn as nn


def module_fn(x: torch.Tensor, scale: float) -> torch.Tensor:
    @SLEEP@
    return torch.relu(x) * scale


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x, fn=module_fn):
        return fn(x, self.scale)


batch_size = 64
dim = 4096
scale = 2.0


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [scale]
)";

const char* kCpuExtension = R"(#include <torch/extension.h>
torch::Tensor forward(torch::Tensor x, double scale) { return torch::relu(x) * scale; }
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "relu_scale"); }
)";

const char* kCudaExtension = R"(#include <torch/extension.h>
__global__ void relu_scale_kernel(const float* x, float* y, float s, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.f) * s;
}
torch::Tensor forward(torch::Tensor x, double scale) {
  auto y = torch::empty_like(x);
  int64_t n = x.numel();
  relu_scale_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), (float)scale, n);
  return y;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "relu_scale"); }
)";

std::string replaced(std::string s, const std::string& what, const std::string& with) {
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + with.size())) s.replace(p, what.size(), with);
  return s;
}

// A task directory with the reference and an extension file named `ext_name`.
Task write_task(const fs::path& dir, const std::string& ext_name, const std::string& ext_source,
                const std::string& sleep = "pass") {
  fs::create_directories(dir);
  std::ofstream(dir / "task.toml") << replaced(kToml, "@EXT@", ext_name);
  std::ofstream(dir / "reference.py") << replaced(kReference, "@SLEEP@", sleep);
  std::ofstream(dir / ext_name) << ext_source;
  auto t = load_task(dir);
  EXPECT_TRUE(t) << t.error().message;
  return t ? *t : Task{};
}

TorchTimingOptions cpu_options(const fs::path& build_root) {
  TorchTimingOptions o;
  o.device = "cpu";
  o.budget_s = 0.3;
  o.build_root = build_root;
  return o;
}

TEST(TorchTiming, NoReferenceIsAnError) {
  Task t;
  t.name = "plain";
  auto r = time_torch(t, {});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("no torch_reference"), std::string::npos) << r.error().message;
  EXPECT_FALSE(torch_unavailable(r.error()));
}

TEST(TorchTiming, EagerOnCpuAndCudaExtensionFailsNamingTheCause) {
  KEVO_BRIDGE_OR_SKIP(b);
  testing::TempDir tmp;
  Task task = write_task(tmp.path / "task", "torch_baseline.cu", kCudaExtension);
  auto r = time_torch_main(task, 5, cpu_options(tmp.path / "build"), b);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->device, "cpu");
  EXPECT_EQ(r->device_name.rfind("CPU", 0), 0u) << r->device_name;
  ASSERT_EQ(r->modes.size(), 3u);
  const TimedMode& eager = r->modes.at("eager");
  ASSERT_TRUE(eager.ok) << eager.error;
  EXPECT_GT(eager.median_ms, 0);
  EXPECT_GE(eager.n, 10);
  EXPECT_LE(eager.min_ms, eager.median_ms);
  EXPECT_LE(eager.ci_low_ms, eager.median_ms);
  EXPECT_GE(eager.ci_high_ms, eager.median_ms);
  const TimedMode& compile = r->modes.at("compile");
  if (!compile.ok) {
    EXPECT_FALSE(compile.error.empty());
  }
  if (b->info().torch.rfind("1.", 0) == 0) {
    EXPECT_NE(compile.error.find("torch >= 2.0"), std::string::npos) << compile.error;
  }
  // A CUDA extension cannot be timed on the CPU: said so, and the other modes still report.
  const TimedMode& ext = r->modes.at("extension");
  EXPECT_FALSE(ext.ok);
  EXPECT_EQ(ext.error.rfind("no CUDA", 0), 0u) << ext.error;
  EXPECT_NE(ext.error.find("torch_baseline.cu"), std::string::npos) << ext.error;
  EXPECT_NE(pytorch_line(*r, eager.median_ms / 2).find("eager "), std::string::npos);
  // Without compile and extension, only eager is asked for.
  auto o = cpu_options(tmp.path / "build");
  o.compile = false;
  o.extension = false;
  auto e = time_torch_main(task, 5, o, b);
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(e->modes.size(), 1u);
}

TEST(TorchTiming, CudaRequestedWithoutCudaIsUnavailable) {
  KEVO_BRIDGE_OR_SKIP(b);
  if (b->info().cuda) GTEST_SKIP() << "torch sees a GPU here: the no-CUDA path is not reachable";
  testing::TempDir tmp;
  Task task = write_task(tmp.path / "task", "torch_baseline.cu", kCudaExtension);
  TorchTimingOptions o;  // device "cuda"
  auto r = time_torch_main(task, 5, o, b);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message.rfind("no CUDA", 0), 0u) << r.error().message;
  EXPECT_EQ(r.error().code, ErrorCode::kNoCuda);
  EXPECT_TRUE(torch_unavailable(r.error()));
}

// Skips (visibly) where this machine cannot build a torch C++ extension at all.
#define SKIP_IF_NO_BUILD_ENVIRONMENT(mode)                                                            \
  if (!(mode).ok && ((mode).error.rfind("no ", 0) == 0 ||                                            \
                     (mode).error.find("torch/extension.h: No such file") != std::string::npos))     \
  GTEST_SKIP() << "cannot build torch extensions here: " << (mode).error

TEST(TorchTiming, CppExtensionIsBuiltOncePerSessionAndTimed) {
  KEVO_BRIDGE_OR_SKIP(b);
  testing::TempDir tmp;
  Task task = write_task(tmp.path / "task", "torch_baseline.cpp", kCpuExtension);
  auto o = cpu_options(tmp.path / "build");
  o.compile = false;
  auto r = time_torch_main(task, 5, o, b);
  ASSERT_TRUE(r) << r.error().message;
  const TimedMode& ext = r->modes.at("extension");
  SKIP_IF_NO_BUILD_ENVIRONMENT(ext);
  ASSERT_TRUE(ext.ok) << ext.error;
  EXPECT_GT(ext.median_ms, 0);
  EXPECT_GE(ext.n, 10);
  ASSERT_TRUE(r->modes.at("eager").ok);
  int builds = 0;
  for (const auto& e : fs::directory_iterator(tmp.path / "build"))
    builds += e.path().filename().string().rfind("kevo_ext_", 0) == 0;
  EXPECT_EQ(builds, 1);
  // The same bridge session times it again without building: the build folder is not needed.
  fs::remove_all(tmp.path / "build");
  auto t0 = Clock::now();
  auto again = time_torch_main(task, 6, o, b);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_TRUE(again->modes.at("extension").ok) << again->modes.at("extension").error;
  EXPECT_FALSE(fs::exists(tmp.path / "build")) << "the extension was built again";
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 30.0);
}

TEST(TorchTiming, BrokenExtensionFailsAloneWithItsCompilerOutput) {
  KEVO_BRIDGE_OR_SKIP(b);
  testing::TempDir tmp;
  Task task = write_task(tmp.path / "task", "torch_baseline.cpp",
                         std::string("#error kevo-test: this extension is broken\n") + kCpuExtension);
  auto o = cpu_options(tmp.path / "build");
  o.compile = false;
  auto r = time_torch_main(task, 5, o, b);
  ASSERT_TRUE(r) << r.error().message;
  const TimedMode& ext = r->modes.at("extension");
  SKIP_IF_NO_BUILD_ENVIRONMENT(ext);
  ASSERT_FALSE(ext.ok);
  EXPECT_NE(ext.error.find("torch_baseline.cpp does not build"), std::string::npos) << ext.error;
  EXPECT_NE(ext.error.find("kevo-test: this extension is broken"), std::string::npos) << ext.error;
  EXPECT_TRUE(r->modes.at("eager").ok) << r->modes.at("eager").error;
}

TEST(TorchTiming, ModeThatHangsCostsOnlyThatMode) {
  std::string why;
  if (!testing::shared_bridge(&why)) GTEST_SKIP() << why;
  testing::TempDir tmp;
  // Every call sleeps 60 s: eager misses its deadline and the bridge is killed; the extension mode
  // still reports, from a restarted bridge.
  Task task = write_task(tmp.path / "task", "torch_baseline.cu", kCudaExtension,
                         "if x.device.type != \"meta\": time.sleep(60)  # describe runs on meta");
  auto o = cpu_options(tmp.path / "build");
  o.compile = false;
  o.budget_s = 0;
  o.eager_timeout = std::chrono::milliseconds(1500);
  auto t0 = Clock::now();
  auto r = time_torch_main(task, 5, o);  // a bridge of its own
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->modes.at("eager").error.rfind("timeout", 0), 0u) << r->modes.at("eager").error;
  EXPECT_EQ(r->modes.at("extension").error.rfind("no CUDA", 0), 0u) << r->modes.at("extension").error;
  EXPECT_LT(secs, 50.0);
}

}  // namespace
}  // namespace kevo::torch
