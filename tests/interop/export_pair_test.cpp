// `kevo export-torch --backward`: a forward and a backward kernel (or PyTorch in place of either) as
// one torch.autograd.Function. The files are written, the Python parses, the kernels compile with
// nvcc -c where nvcc exists, and with both sides on PyTorch the Function's gradients equal plain
// autograd's (Debian's torch, on the CPU). The kernels themselves run only on a GPU
// (scripts/gpu-check.sh, phase interop).
#include "interop/export_pair.h"

#include <gtest/gtest.h>

#include "interop/import_robust_kbench.h"
#include "interop/task_compat.h"
#include "test_support.h"
#include "util/fs.h"
#include "util/subprocess.h"

namespace kevo::interop {
namespace {

using testing::TempDir;

fs::path kernel(const std::string& f) { return testing::data("robust_kbench_kernels/" + f); }

// The test folder's forward and backward tasks, imported into `out`.
std::optional<std::pair<Task, Task>> scale_shift_pair(torch::TorchBridge& b, const fs::path& out) {
  ImportOptions o;
  o.out_dir = out;
  auto r = import_robust_kbench(b, testing::data("robust_kbench/scale_shift"), o);
  for (const auto& t : r)
    if (!t) {
      ADD_FAILURE() << t.error().message;
      return std::nullopt;
    }
  auto f = load_task_with_torch(r.at(0)->dir);
  auto bw = load_task_with_torch(r.at(1)->dir);
  if (!f || !bw) {
    ADD_FAILURE() << "the imported tasks do not load";
    return std::nullopt;
  }
  return std::make_pair(*f, *bw);
}

Result<RunResult> python(const std::vector<std::string>& args) {
  auto py = torch::find_torch_python();
  if (!py) return py.unexpected();
  std::vector<std::string> argv{*py};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process({.argv = argv, .timeout = std::chrono::milliseconds(300000)});
}

// Parsing needs no torch: any python3 will do, so a machine without torch still checks the syntax.
void expect_parses(const fs::path& file) {
  auto py3 = find_program("python3");
  if (!py3) GTEST_SKIP() << "python3 not found: " << file << " not parsed";
  auto r = run_process({.argv = {*py3, "-c", "import ast, sys; ast.parse(open(sys.argv[1]).read())", file.string()},
                        .timeout = std::chrono::milliseconds(60000)});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->ok()) << file << ": " << r->err;
}

TEST(ExportPair, BothSidesOnPyTorchGiveAutogradsGradients) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp("kevo-pair");
  auto tasks = scale_shift_pair(*b, tmp.path / "tasks");
  ASSERT_TRUE(tasks);
  fs::path out = tmp.path / "pair";
  auto s = export_torch_pair(tasks->first, std::nullopt, tasks->second, std::nullopt, out);
  ASSERT_TRUE(s) << s.error().message;
  for (const char* f : {"autograd.py", "test_autograd.py", "reference.py"}) EXPECT_TRUE(fs::exists(out / f)) << f;
  EXPECT_FALSE(fs::exists(out / "forward")) << "no kernel, no extension";
  EXPECT_FALSE(fs::exists(out / "backward"));
  auto py = *read_file(out / "autograd.py");
  EXPECT_NE(py.find("forward:  PyTorch (fallback): the reference module's forward"), std::string::npos) << py;
  EXPECT_NE(py.find("backward: PyTorch (fallback): torch.autograd of the reference module"), std::string::npos);
  EXPECT_NE(py.find("FORWARD_KERNEL = False"), std::string::npos);
  expect_parses(out / "autograd.py");
  expect_parses(out / "test_autograd.py");
  auto r = python({(out / "test_autograd.py").string()});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->ok()) << r->out << r->err;
  EXPECT_NE(r->out.find("PASS"), std::string::npos) << r->out << r->err;
}

TEST(ExportPair, KernelsOnBothSides) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp("kevo-pair");
  auto tasks = scale_shift_pair(*b, tmp.path / "tasks");
  ASSERT_TRUE(tasks);
  fs::path out = tmp.path / "pair";
  auto s = export_torch_pair(tasks->first, kernel("scale_shift.cu"), tasks->second, kernel("scale_shift_backward.cu"), out);
  ASSERT_TRUE(s) << s.error().message;
  for (const char* side : {"forward", "backward"})
    for (const char* f : {"kernel.cu", "kevo/kernel.h", "ext.cpp", "loader.py"})
      EXPECT_TRUE(fs::exists(out / side / f)) << side << "/" << f;
  auto py = *read_file(out / "autograd.py");
  EXPECT_NE(py.find("forward:  the kevo kernel of 'scale_shift'"), std::string::npos) << py;
  EXPECT_NE(py.find("backward: the kevo kernel of 'scale_shift_backward'"), std::string::npos);
  EXPECT_NE(py.find("SAVED = [\"x\", \"w\"]"), std::string::npos) << "the forward keeps what the backward saves";
  EXPECT_NE(py.find("BACKWARD_INPUTS = [\"x\", \"grad_out\", \"w\"]"), std::string::npos) << py;
  EXPECT_NE(py.find("GRADIENTS = [\"x\", \"w\", \"b\"]"), std::string::npos) << py;
  expect_parses(out / "autograd.py");
  auto nvcc = find_program("nvcc");
  if (!nvcc) nvcc = find_program("/usr/local/cuda/bin/nvcc");
  if (!nvcc) {
    std::printf("[ SKIPPED  ] nvcc -c of the kernels: no nvcc\n");
  } else {
    for (const char* side : {"forward", "backward"}) {
      auto r = run_process({.argv = {*nvcc, "-std=c++17", "-c", "-I" + (out / side).string(),
                                     (out / side / "kernel.cu").string(), "-o", (tmp.path / (std::string(side) + ".o")).string()},
                            .timeout = std::chrono::milliseconds(300000)});
      ASSERT_TRUE(r) << r.error().message;
      EXPECT_TRUE(r->ok()) << side << ": " << r->err;
    }
  }
  // Without a GPU the test script says so and passes; on one it checks the kernels' gradients.
  auto r = python({(out / "test_autograd.py").string()});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->ok()) << r->out << r->err;
}

// The bundled ReLU pair: its backward reads the forward's output y (saved_outputs), so the forward
// must keep y, not only its inputs.
TEST(ExportPair, TheForwardKeepsTheOutputsTheBackwardReads) {
  TempDir tmp("kevo-pair");
  const fs::path tasks = fs::path(KEVO_SOURCE_DIR) / "tasks";
  auto f = load_task(tasks / "gemm_bias_relu");
  auto bw = load_task(tasks / "gemm_bias_relu_backward");
  ASSERT_TRUE(f && bw);
  fs::path out = tmp.path / "pair";
  auto s = export_torch_pair(*f, tasks / "gemm_bias_relu" / "baseline.cu", *bw,
                             tasks / "gemm_bias_relu_backward" / "baseline.cu", out);
  ASSERT_TRUE(s) << s.error().message;
  auto py = *read_file(out / "autograd.py");
  EXPECT_NE(py.find("SAVED = [\"x\", \"W\"]"), std::string::npos) << py;
  EXPECT_NE(py.find("SAVED_OUTPUTS = {\"y\": 0, }"), std::string::npos) << py;
  EXPECT_NE(py.find("BACKWARD_INPUTS = [\"x\", \"W\", \"y\", \"dy\"]"), std::string::npos) << py;
  EXPECT_NE(py.find("GRAD_OUTPUTS = {\"dy\": 0, }"), std::string::npos) << py;
  expect_parses(out / "autograd.py");
  // With no reference.py, test_autograd.py has nothing to compare with: it says so and exits 2.
  auto t = *read_file(out / "test_autograd.py");
  EXPECT_NE(t.find("NOT RUN: the forward task has no PyTorch reference"), std::string::npos);
}

TEST(ExportPair, OneKernelTheOtherSideOnPyTorch) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp("kevo-pair");
  auto tasks = scale_shift_pair(*b, tmp.path / "tasks");
  ASSERT_TRUE(tasks);
  auto s = export_torch_pair(tasks->first, kernel("scale_shift.cu"), tasks->second, std::nullopt, tmp.path / "pair");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_TRUE(fs::exists(tmp.path / "pair" / "forward" / "kernel.cu"));
  EXPECT_FALSE(fs::exists(tmp.path / "pair" / "backward"));
  auto py = *read_file(tmp.path / "pair" / "autograd.py");
  EXPECT_NE(py.find("FORWARD_KERNEL = True\nBACKWARD_KERNEL = False"), std::string::npos) << py;
  EXPECT_NE(py.find("backward: PyTorch (fallback)"), std::string::npos);
}

TEST(ExportPair, RefusesAMismatchedPairAndAFallbackWithoutReference) {
  auto lin = load_task_with_torch(fs::path(KEVO_SOURCE_DIR) / "tasks" / "linear");
  auto lin_b = load_task_with_torch(fs::path(KEVO_SOURCE_DIR) / "tasks" / "linear_backward");
  auto gelu = load_task_with_torch(fs::path(KEVO_SOURCE_DIR) / "tasks" / "gelu");
  ASSERT_TRUE(lin && lin_b && gelu);
  TempDir tmp("kevo-pair");
  auto not_bwd = export_torch_pair(*lin, lin->baseline_path(), *lin, lin->baseline_path(), tmp.path / "a");
  ASSERT_FALSE(not_bwd);
  EXPECT_NE(not_bwd.error().message.find("is not a backward task"), std::string::npos) << not_bwd.error().message;
  auto other = export_torch_pair(*gelu, gelu->baseline_path(), *lin_b, lin_b->baseline_path(), tmp.path / "b");
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("is the backward of 'linear', not of 'gelu'"), std::string::npos);
  // A pair whose gradient names no forward input (task/backward.h's check, not a broken autograd.py).
  Task stray = *lin_b;
  stray.backward->gradients.front().of = "z";
  auto mismatched = export_torch_pair(*lin, lin->baseline_path(), stray, lin_b->baseline_path(), tmp.path / "e");
  ASSERT_FALSE(mismatched);
  EXPECT_NE(mismatched.error().message.find("'z'"), std::string::npos) << mismatched.error().message;
  EXPECT_FALSE(fs::exists(tmp.path / "e" / "autograd.py"));
  auto no_ref = export_torch_pair(*lin, std::nullopt, *lin_b, lin_b->baseline_path(), tmp.path / "c");
  ASSERT_FALSE(no_ref);
  EXPECT_NE(no_ref.error().message.find("has no PyTorch reference"), std::string::npos) << no_ref.error().message;
  // Both kernels need no reference: the Function works on tensors alone.
  auto both = export_torch_pair(*lin, lin->baseline_path(), *lin_b, lin_b->baseline_path(), tmp.path / "d");
  ASSERT_TRUE(both) << both.error().message;
  EXPECT_NE(read_file(tmp.path / "d" / "autograd.py")->find("WEIGHT_PATHS = None"), std::string::npos);
}

}  // namespace
}  // namespace kevo::interop
