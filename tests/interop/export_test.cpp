// `kevo export-torch`: the files, the checks the wrapper makes, and (where torch and CUDA headers
// exist) that ext.cpp compiles.
#include <gtest/gtest.h>

#include <fstream>

#include "interop/export.h"
#include "interop/import.h"
#include "interop/task_compat.h"
#include "test_support.h"
#include "util/fs.h"
#include "util/subprocess.h"

namespace kevo::interop {
namespace {

using testing::TempDir;

TEST(Export, ExprToCpp) {
  EXPECT_EQ(*expr_to_cpp("2*N+1"), "int64_t{2}*d_N+int64_t{1}");
  EXPECT_EQ(*expr_to_cpp("ceil_div(B, 32)"), "kevo_ceil_div(d_B, int64_t{32})");
  EXPECT_EQ(*expr_to_cpp("max(a_1,b)"), "kevo_max(d_a_1,d_b)");
  EXPECT_FALSE(expr_to_cpp("sqrt(N)"));
  EXPECT_FALSE(expr_to_cpp("N ^ 2"));
}

// Compiles ext.cpp with the host compiler against torch's and CUDA's headers (syntax only).
void syntax_check(const fs::path& dir) {
  auto py = torch::find_torch_python();
  auto cxx = find_program("g++");
  if (!py || !cxx) {
    std::printf("[ SKIPPED  ] ext.cpp compile check: needs python3 with torch and g++\n");
    return;
  }
  auto inc = run_process({.argv = {*py, "-c",
                                   "import sysconfig\nfrom torch.utils.cpp_extension import include_paths\n"
                                   "print('\\n'.join(include_paths() + [sysconfig.get_paths()['include']]))"}});
  std::string cuda = "/usr/local/cuda/include";
  std::error_code ec;
  if (!inc || !inc->ok() || !fs::exists(fs::path(cuda) / "cuda_runtime.h", ec)) {
    std::printf("[ SKIPPED  ] ext.cpp compile check: no CUDA headers in %s\n", cuda.c_str());
    return;
  }
  std::vector<std::string> argv = {*cxx, "-std=c++17", "-fsyntax-only", "-DTORCH_EXTENSION_NAME=kevo_test",
                                   "-I" + dir.string(), "-I" + cuda};
  size_t p = 0;
  std::string s = inc->out;
  while ((p = s.find('\n')) != std::string::npos) {
    if (p) argv.push_back("-I" + s.substr(0, p));
    s.erase(0, p + 1);
  }
  if (!fs::exists(fs::path(argv[6].substr(2)) / "c10" / "cuda" / "impl" / "cuda_cmake_macros.h", ec)) {
    std::printf("[ SKIPPED  ] ext.cpp compile check: this torch has no CUDA headers (a CPU-only build)\n");
    return;
  }
  if (!fs::exists(fs::path(argv.back().substr(2)) / "Python.h", ec)) {
    std::printf("[ SKIPPED  ] ext.cpp compile check: no Python.h (python3-dev)\n");
    return;
  }
  argv.push_back((dir / "ext.cpp").string());
  auto r = run_process({.argv = argv, .timeout = std::chrono::milliseconds(300000)});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->ok()) << "ext.cpp does not compile:\n" << r->err.substr(0, 6000);
}

TEST(Export, BundledTaskWithScalarsAndWeights) {
  auto task = load_task_with_torch(fs::path(KEVO_SOURCE_DIR) / "tasks" / "layernorm");
  ASSERT_TRUE(task) << task.error().message;
  TempDir tmp;
  auto s = export_torch(*task, task->baseline_path(), tmp.path / "ext");
  ASSERT_TRUE(s) << s.error().message;
  for (const char* f : {"kernel.cu", "kevo/kernel.h", "ext.cpp", "loader.py", "test_ext.py"})
    EXPECT_TRUE(fs::exists(tmp.path / "ext" / f)) << f;
  EXPECT_EQ(*read_file(tmp.path / "ext" / "kernel.cu"), *read_file(task->baseline_path()));
  auto ext = *read_file(tmp.path / "ext" / "ext.cpp");
  EXPECT_NE(ext.find("check_input(in[0], \"x\", torch::kFloat32, \"float32\", 2, dev);"), std::string::npos) << ext;
  EXPECT_NE(ext.find("const int64_t d_B = in[0].size(0);"), std::string::npos);
  EXPECT_NE(ext.find("const int64_t d_N = in[0].size(1);"), std::string::npos);
  EXPECT_NE(ext.find("must be contiguous"), std::string::npos);
  EXPECT_NE(ext.find("must be a CUDA tensor"), std::string::npos);
  EXPECT_NE(ext.find("const std::vector<double> scalars{1.0000000000000001e-05};"), std::string::npos) << ext;
  EXPECT_NE(ext.find("input 'weight' has shape"), std::string::npos);
  EXPECT_NE(ext.find("at::cuda::getCurrentCUDAStream()"), std::string::npos);
  auto loader = *read_file(tmp.path / "ext" / "loader.py");
  EXPECT_NE(loader.find("name=\"kevo_layernorm\""), std::string::npos);
  EXPECT_NE(loader.find("WEIGHT_PATHS = None"), std::string::npos);
  // The wrapper (torch headers) gets torch's own C++ standard; forcing C++17 against torch 2.11's
  // C++20 headers crashed at run time on the GPU.
  EXPECT_NE(loader.find("extra_cflags=[\"-O2\"]"), std::string::npos) << loader;
  // Shapes in its error messages are formatted by the wrapper, never streamed as IntArrayRef...
  auto ext_cpp = *read_file(tmp.path / "ext" / "ext.cpp");
  EXPECT_EQ(ext_cpp.find("sizes(),"), std::string::npos) << ext_cpp;
  EXPECT_EQ(ext_cpp.find("IntArrayRef"), std::string::npos) << ext_cpp;
  EXPECT_NE(ext_cpp.find("kevo_shape(t.sizes().vec())"), std::string::npos) << ext_cpp;
  // ... and no integer is streamed into a TORCH_CHECK message (see export.cpp).
  EXPECT_NE(ext_cpp.find("std::to_string(ndim)"), std::string::npos) << ext_cpp;
  EXPECT_NE(ext_cpp.find("std::to_string(rc)"), std::string::npos) << ext_cpp;
  EXPECT_NE(ext_cpp.find("std::to_string(in.size())"), std::string::npos) << ext_cpp;
  EXPECT_EQ(ext_cpp.find(", ndim,"), std::string::npos) << ext_cpp;
  EXPECT_FALSE(fs::exists(tmp.path / "ext" / "reference.py"));
  syntax_check(tmp.path / "ext");
}

TEST(Export, PythonFilesAreValidPython) {
  auto py = torch::find_torch_python();
  std::string python = py ? *py : "python3";
  if (!find_program(python)) GTEST_SKIP() << "no python3";
  auto task = load_task_with_torch(fs::path(KEVO_SOURCE_DIR) / "tasks" / "softmax");
  ASSERT_TRUE(task) << task.error().message;
  TempDir tmp;
  ASSERT_TRUE(export_torch(*task, task->baseline_path(), tmp.path));
  auto r = run_process({.argv = {python, "-m", "py_compile", (tmp.path / "loader.py").string(),
                                 (tmp.path / "test_ext.py").string()},
                        .env_add = {{"PYTHONDONTWRITEBYTECODE", "1"}}});
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->ok()) << r->err;
  if (!py) return;
  // Without CUDA the test script says so and passes; loader imports without building anything.
  auto t = run_process({.argv = {python, (tmp.path / "test_ext.py").string()},
                        .env_add = {{"PYTHONDONTWRITEBYTECODE", "1"}},
                        .timeout = std::chrono::milliseconds(120000)});
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->ok()) << t->out << t->err;
  EXPECT_TRUE(t->out.find("SKIP: no CUDA") != std::string::npos || t->out.find("OK") != std::string::npos) << t->out;
}

TEST(Export, ImportedTaskKeepsTorchNamesAndDerivedDims) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp;
  ImportOptions o;
  o.out_dir = tmp.path / "tasks";
  auto imported = import_kernelbench(*b, testing::data("kb_conv_bn.py"), o);
  ASSERT_TRUE(imported) << imported.error().message;
  auto task = load_task_with_torch(imported->dir);
  ASSERT_TRUE(task) << task.error().message;
  std::ofstream(tmp.path / "k.cu") << "#include <kevo/kernel.h>\nKEVO_EXPORT int kevo_forward(const kevo_args*) { return 1; }\n";
  auto s = export_torch(*task, tmp.path / "k.cu", tmp.path / "ext");
  ASSERT_TRUE(s) << s.error().message;
  auto loader = *read_file(tmp.path / "ext" / "loader.py");
  EXPECT_NE(loader.find("\"conv_weight\": \"conv.weight\""), std::string::npos) << loader;
  // stride changes only output shapes: a constant of the imported task, not a dim
  EXPECT_NE(loader.find("DERIVED_DIMS = {\"out_d2\": (0, 2), \"out_d3\": (0, 3)}"), std::string::npos) << loader;
  EXPECT_TRUE(fs::exists(tmp.path / "ext" / "reference.py"));
  auto ext = *read_file(tmp.path / "ext" / "ext.cpp");
  EXPECT_NE(ext.find("const int64_t d_out_d2 = given_dims[0];"), std::string::npos) << ext;
  syntax_check(tmp.path / "ext");
}

TEST(Export, RejectsAFileWithoutKevoForward) {
  auto task = load_task_with_torch(fs::path(KEVO_SOURCE_DIR) / "tasks" / "gelu");
  ASSERT_TRUE(task);
  TempDir tmp;
  std::ofstream(tmp.path / "k.cu") << "__global__ void f() {}\n";
  auto s = export_torch(*task, tmp.path / "k.cu", tmp.path / "ext");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("defines no kevo_forward"), std::string::npos);
}

// Names reach generated C++ and Python: escaped whatever they hold, and refused unless they are
// identifiers (task.toml's parser refuses them first; a Task built in code is checked here).
TEST(Export, EscapingHelpers) {
  EXPECT_EQ(cpp_string_literal("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(cpp_escape("x\ny"), "x\\ny");
  EXPECT_EQ(cpp_escape("?" "?/"), "\\?" "?/");  // a trigraph, split so this file has none
  EXPECT_EQ(cpp_escape(std::string("\x01\xff", 2)), "\\001\\377");
  EXPECT_EQ(cpp_escape("it's"), "it\\'s");
  EXPECT_EQ(py_string_literal("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
  EXPECT_EQ(py_string_literal(std::string("\x00\xe9", 2)), "\"\\x00\\xe9\"");
}

TEST(Export, EscapedLiteralsRoundTripThroughPython) {
  if (!find_program("python3")) GTEST_SKIP() << "no python3";
  const std::string hostile = "x\"); import os; os.system(\"id\") #\n\\\x01";
  auto r = run_process({.argv = {"python3", "-c", "import sys; sys.stdout.write(" + py_string_literal(hostile) + ")"}});
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->ok()) << r->err;
  EXPECT_EQ(r->out, hostile);
}

TEST(Export, HostileNamesAndModulesAreRefused) {
  auto task = load_task_with_torch(fs::path(KEVO_SOURCE_DIR) / "tasks" / "gelu");
  ASSERT_TRUE(task) << task.error().message;
  TempDir tmp;
  ExportOptions o;
  for (const char* module : {"../../x", "a b", "kevo\"; import os", ""}) {
    o.module_name = module;
    auto s = export_torch(*task, task->baseline_path(), tmp.path / "ext", o);
    if (std::string_view(module).empty()) {
      EXPECT_TRUE(s) << s.error().message;  // the default, kevo_<task>
      continue;
    }
    ASSERT_FALSE(s) << module;
    EXPECT_NE(s.error().message.find("not a Python identifier"), std::string::npos) << s.error().message;
  }
  Task bad = *task;
  bad.inputs[0].name = "x\"); system(\"id\"); //";
  o.module_name.clear();
  auto s = export_torch(bad, task->baseline_path(), tmp.path / "bad", o);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("tensor name 'x\\\"); system(\\\"id\\\"); //' is not an identifier"),
            std::string::npos)
      << s.error().message;
  EXPECT_FALSE(fs::exists(tmp.path / "bad" / "ext.cpp"));
}

}  // namespace
}  // namespace kevo::interop
