#include "check/static_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace kevo;
using Sev = Finding::Severity;
using ::testing::HasSubstr;

namespace {

std::vector<Finding> with_rule(const std::vector<Finding>& fs, const std::string& rule) {
  std::vector<Finding> out;
  for (const auto& f : fs)
    if (f.rule == rule) out.push_back(f);
  return out;
}

struct Case {
  const char* rule;
  Sev severity;
  const char* positive;  // the offending code is on line 3
  const char* negative;  // similar code that must not be flagged by this rule
};

// One positive and one false-positive guard per rule.
const Case kCases[] = {
    {"stream_create", Sev::Unsafe, "int f() {\n  cudaStream_t s;\n  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);\n}",
     "int f(const kevo_args* a) {\n  cudaStream_t stream = a->stream;\n  cudaEvent_t e; cudaEventCreate(&e); // cudaStreamCreate(&s)\n}"},
    {"other_stream", Sev::Unsafe, "void f() {\n\n  k<<<1, 32, 0, cudaStreamPerThread>>>();\n}",
     "void f(const kevo_args* a) {\n  auto streamPerThreadCount = 2;\n  k<<<1, 32, 0, a->stream>>>();\n}"},
    {"default_stream_launch", Sev::Warning, "void f() {\n\n  k<<<grid, block, smem, 0>>>(x);\n}",
     "void f(const kevo_args* a) {\n  int stream = 0;\n  k<<<dim3(g, 1), block, 0, a->stream>>>(x, min(a, b));\n}"},
    {"thread_create", Sev::Unsafe, "#include <thread>\nvoid f() {\n  std::thread t([] {}); t.detach();\n}",
     "void f() {\n  int thread_idx = threadIdx.x; unsigned n = std::thread::hardware_concurrency();\n  std::this_thread::yield();\n}"},
    {"process_create", Sev::Unsafe, "#include <unistd.h>\nvoid f() {\n  if (fork() == 0) execvp(\"sh\", nullptr);\n}",
     "void f(Obj* o) {\n  int ecosystem(int);\n  o->system(1); cudaMemcpy(a, b, n, cudaMemcpyDefault); forked_count(2);\n}"},
    {"file_io", Sev::Unsafe, "void f() {\n\n  FILE* fp = fopen(\"/tmp/x\", \"w\");\n}",
     "void f(Obj* o) {\n  bool is_open = reopen_count > 0; o->open(3);\n  const char* s = \"fopen(\"; int opened(3);\n}"},
    {"file_io", Sev::Unsafe, "#include <fstream>\nvoid f() {\n  std::ofstream out(\"ref.bin\");\n}",
     "void f() {\n  // std::ifstream in(\"ref.bin\");\n  int fstream_count = 0;\n}"},
    {"network_io", Sev::Unsafe, "void f() {\n  int s;\n  s = socket(AF_INET, SOCK_STREAM, 0); connect(s, addr, len);\n}",
     "void f(Peer* p) {\n  int socket_count = 0;\n  p->connect(); reconnect(1);\n}"},
    {"dynamic_loading", Sev::Unsafe, "void f() {\n\n  void* h = dlopen(\"libcublas.so\", RTLD_NOW);\n}",
     "void f() {\n  int dlopened = 0;\n  const char* s = \"dlsym(\";\n}"},
    {"driver_launch", Sev::Unsafe, "void f() {\n\n  cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, args, nullptr);\n}",
     "void f(const kevo_args* a) {\n  cudaLaunchKernel((void*)k, g, b, args, 0, a->stream);\n  int cuLaunch = 0; (void)cuLaunch_count;\n}"},
    {"host_callback", Sev::Warning, "void f(const kevo_args* a) {\n\n  cudaLaunchHostFunc(a->stream, cb, nullptr);\n}",
     "void f() {\n  // cudaLaunchHostFunc(s, cb, 0);\n  int cudaLaunchHostFunc_calls = 0;\n}"},
    {"cublas", Sev::Unsafe, "#include <kevo/kernel.h>\n\n#include <cublas_v2.h>\n",
     "#include <kevo/kernel.h>\n// #include <cublas_v2.h>\n#include \"mycublas_like.cuh\"\n"},
    {"cublas", Sev::Unsafe, "void f() {\n\n  cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &a, A, m, B, k, &b, C, m);\n}",
     "void f() {\n  int cublas_like = 0;\n  my_cublasSgemm(1); const char* s = \"cublasSgemm(\";\n}"},
    {"cudnn", Sev::Unsafe, "void f() {\n\n  cudnnConvolutionForward(h, &a, xd, x, wd, w, cd, algo, ws, wsz, &b, yd, y);\n}",
     "void f() {\n  int cudnn_free = 1;\n  my_cudnnConvolutionForward(2);\n}"},
    {"cudnn", Sev::Unsafe, "#include <kevo/kernel.h>\n\n#include <cudnn.h>\n",
     "#include <kevo/kernel.h>\n/* #include <cudnn.h> */\n#include <cuda_fp16.h>\n"},
    {"asm_syscall", Sev::Unsafe, "void f() {\n\n  asm volatile(\"mov $60, %%rax\\n\\tsyscall\" ::: \"rax\");\n}",
     "__device__ void f(float* y) {\n  int syscall_count = 0;\n  asm volatile(\"st.global.f32 [%0], %1;\" :: \"l\"(y), \"f\"(1.f));\n}"},
    {"device_reset", Sev::Unsafe, "void f() {\n\n  cudaDeviceReset();\n}",
     "void f() {\n  cudaDeviceSynchronize();\n  int cudaDeviceResetCount = 0;\n}"},
    {"device_change", Sev::Unsafe, "void f() {\n\n  cudaSetDevice(1);\n}",
     "void f() {\n  int dev;\n  cudaGetDevice(&dev); cudaSetDeviceFlags_count(3);\n}"},
    {"pinned_alloc", Sev::Warning, "void f() {\n  float* h;\n  cudaMallocHost(&h, 1024);\n}",
     "void f() {\n  float* h = (float*)malloc(16);\n  free(h); cudaFreeHost(p);\n}"},
    {"alloc_in_forward", Sev::Warning,
     "KEVO_EXPORT int kevo_forward(const kevo_args* a) {\n  float* tmp;\n  cudaMalloc(&tmp, 4 << 20);\n  return 0;\n}",
     "static float* scratch;\nstatic void init() { cudaMalloc(&scratch, 1 << 20); }\n"
     "KEVO_EXPORT int kevo_forward(const kevo_args* a) {\n  float* tmp = (float*)a->workspace; return 0;\n}"},
    {"lower_precision", Sev::Warning, "#include <cuda_fp16.h>\n__global__ void k(const float* x, float* y) {\n  __half h = __float2half(x[0]);\n}",
     "__global__ void k(const float* x, float* y, int n) {\n  int half = n / 2;\n  y[half] = x[half] * 0.5f; // __half\n}"},
    {"lower_precision", Sev::Warning,
     "__device__ void mma(float* d, unsigned* a, unsigned* b) {\n\n  asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 ...\");\n}",
     "__device__ void k(float* d) {\n\n  asm volatile(\"mma.sync.aligned.m16n8k8.row.col.f32.f32.f32.f32 ...\"); // .f16\n}"},
    {"process_exit", Sev::Warning, "int kevo_forward(const kevo_args* a) {\n\n  if (!a) exit(0);\n}",
     "void f(Proc* p) {\n  int exit_code = 0;\n  p->exit(); on_exit_cleanup(1); std::abort_flag = 1;\n}"},
    {"sleep", Sev::Warning, "__global__ void k() {\n\n  __nanosleep(1000000);\n}",
     "void f(Timer* t) {\n  int sleep_ms = 10;\n  t->sleep(3);\n}"},
    {"sleep", Sev::Warning, "void f() {\n\n  std::this_thread::sleep_for(std::chrono::seconds(1));\n}",
     "void f() {\n  /* usleep(100); */\n  int usleep_us = 3;\n}"},
    // Reading host files through the compiler (compile/include_rules.h).
    {"host_include", Sev::Unsafe, "#include <kevo/kernel.h>\n\n#include \"/etc/passwd\"\n",
     "#include <kevo/kernel.h>\n// #include \"/etc/passwd\"\nconst char* s = \"#include \\\"x\\\"\"; /* #include \"y\" */\n"},
    {"host_include", Sev::Unsafe, "#include <kevo/kernel.h>\n\n  #  include <../../etc/passwd>\n",
     "#include <cuda/std/atomic>\n#include <cuda_fp16.h>\n#include /* c */ <mma.h>\n"},
    {"host_include", Sev::Unsafe, "#define F \"/etc/passwd\"\n\n#include F\n",
     "#define F 1\nconst char* r = R\"(\n#include \"/etc/passwd\"\n)\";\n"},
    {"host_include", Sev::Unsafe, "int a;\n\n#include_next </etc/passwd>\n", "int a;\nint include = 1;\n"},
    {"embed_file", Sev::Unsafe, "int a;\n\nasm(\".incbin \\\"/etc/passwd\\\"\");\n",
     "struct S { int include; };\nvoid f(S s) {\n  s.include = 1; // asm(\".incbin x\")\n}"},
    {"embed_file", Sev::Unsafe, "int a;\n\n#embed \"/dev/zero\"\n", "int a;\nint embed = 2;\n"},
    {"line_directive", Sev::Unsafe, "int a;\n\n#line 1 \"/etc/passwd\"\n", "int a;\n// #line 1\nint line = 3;\n"},
    {"line_directive", Sev::Unsafe, "int a;\n\n# 12 \"kernel.h\"\n", "int a;\n#if 1\n#endif\n"},
    {"pragma_file", Sev::Unsafe, "int a;\n\n#pragma GCC dependency \"/etc/passwd\"\n",
     "int a;\n#pragma unroll 4\n#pragma nv_diag_suppress 177\n"},
    {"pragma_file", Sev::Unsafe, "int a;\n\n_Pragma(\"GCC dependency \\\"/etc/passwd\\\"\")\n",
     "int a;\n_Pragma(\"unroll\")\nint x;\n"},
    {"has_include", Sev::Unsafe, "int a;\n\n#if __has_include(\"/etc/passwd\")\n#endif\n",
     "int a;\n#if __has_include(<cuda_fp8.h>)\n#endif\n"},
};

class RuleCase : public ::testing::TestWithParam<Case> {};

}  // namespace

TEST_P(RuleCase, FlagsThePositiveAtItsLine) {
  const Case& c = GetParam();
  auto fs = with_rule(static_check(c.positive, {}), c.rule);
  ASSERT_FALSE(fs.empty()) << "rule " << c.rule << " missed:\n" << c.positive;
  EXPECT_EQ(fs[0].line, 3) << format_findings(fs);
  EXPECT_EQ(fs[0].severity, c.severity) << format_findings(fs);
  EXPECT_FALSE(fs[0].message.empty());
}

TEST_P(RuleCase, DoesNotFlagTheLookAlike) {
  const Case& c = GetParam();
  auto fs = with_rule(static_check(c.negative, {}), c.rule);
  EXPECT_TRUE(fs.empty()) << "false positive for " << c.rule << ":\n" << format_findings(fs) << c.negative;
}

INSTANTIATE_TEST_SUITE_P(Rules, RuleCase, ::testing::ValuesIn(kCases), [](const auto& info) {
  return std::string(info.param.rule) + "_" + std::to_string(info.index);
});

TEST(StaticCheck, TheAbiExampleIsClean) {
  const char* relu = R"(#include <kevo/kernel.h>

__global__ void relu_kernel(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.f);
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const kevo_tensor* x = &a->inputs[0];
  kevo_tensor* y = &a->outputs[0];
  int64_t n = kevo_numel(x);
  relu_kernel<<<(unsigned)((n + 255) / 256), 256, 0, a->stream>>>(
      (const float*)x->data, (float*)y->data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
)";
  auto fs = static_check(relu, {});
  EXPECT_TRUE(fs.empty()) << format_findings(fs);
}

TEST(StaticCheck, LibrariesAllowedByTheTaskAreNotFlagged) {
  const char* src = "#include <cublas_v2.h>\n#include <cudnn.h>\nvoid f() { cublasSgemm(h); cudnnCreate(&d); }\n";
  StaticCheckOptions o;
  o.allow_cublas = true;
  o.allow_cudnn = true;
  EXPECT_TRUE(static_check(src, o).empty()) << format_findings(static_check(src, o));
  o.allow_cudnn = false;
  auto fs = static_check(src, o);
  EXPECT_TRUE(with_rule(fs, "cublas").empty());
  EXPECT_EQ(with_rule(fs, "cudnn").size(), 2u) << format_findings(fs);
}

TEST(StaticCheck, PrecisionFollowsTheTask) {
  const char* bf16 = "#include <cuda_bf16.h>\n__global__ void k(__nv_bfloat16* y) { y[0] = __float2bfloat16(1.f); }\n";
  auto f32 = with_rule(static_check(bf16, {}), "lower_precision");
  ASSERT_FALSE(f32.empty());
  EXPECT_THAT(f32[0].message, HasSubstr("computes in lower precision than the task (f32)"));
  StaticCheckOptions o;
  o.precision = "bf16";
  EXPECT_TRUE(static_check(bf16, o).empty()) << format_findings(static_check(bf16, o));
  const char* fp8 = "__global__ void k(__nv_fp8_e4m3* y) {}\n";
  auto half = with_rule(static_check(fp8, o), "lower_precision");
  ASSERT_EQ(half.size(), 1u);
  EXPECT_THAT(half[0].message, HasSubstr("(bf16)"));
  o.precision = "i32";
  EXPECT_TRUE(static_check(bf16, o).empty());
}

TEST(StaticCheck, LaunchWithoutAStreamIsAWarning) {
  auto fs = with_rule(static_check("void f() {\n  k<<<1, 32>>>(y);\n}\n", {}), "default_stream_launch");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].line, 2);
  EXPECT_EQ(fs[0].severity, Sev::Warning);
}

TEST(StaticCheck, CommentsAndStringsKeepLineNumbers) {
  const char* src =
      "/* a comment\n   over lines with fopen( */\n"
      "const char* s = \"popen(\\\" \\\" fork(\";\n"
      "const char* r = R\"x(system(\"ls\")\n)x\";\n"
      "int sep = 1'000'000; char c = '\"';\n"
      "void f() { fork(); }\n";
  auto fs = static_check(src, {});
  ASSERT_EQ(fs.size(), 1u) << format_findings(fs);
  EXPECT_EQ(fs[0].rule, "process_create");
  EXPECT_EQ(fs[0].line, 7);
}

TEST(StaticCheck, BlankingKeepsOffsets) {
  std::string src = "int a; // x\n\"str\" /* y */ 'c'\n";
  std::string b = blank_comments_and_strings(src, true);
  ASSERT_EQ(b.size(), src.size());
  EXPECT_EQ(b, "int a;     \n\"   \"         ' '\n");
  EXPECT_EQ(blank_comments_and_strings(src, false), "int a;     \n\"str\"         'c'\n");
}

TEST(StaticCheck, OneFindingPerRuleAndLineOrderedByLine) {
  auto fs = static_check("void f() {\n  cudaSetDevice(0); cudaSetDevice(1);\n  fork();\n}\n", {});
  ASSERT_EQ(fs.size(), 2u) << format_findings(fs);
  EXPECT_EQ(fs[0].line, 2);
  EXPECT_EQ(fs[1].line, 3);
  EXPECT_TRUE(has_unsafe(fs));
  std::string text = format_findings(fs);
  EXPECT_THAT(text, HasSubstr("line 2: unsafe: cudaSetDevice changes the device or context [device_change]"));
}

// A candidate cannot read a host file by naming it: the finding quotes the directive as the
// candidate wrote it, never anything of the file.
TEST(StaticCheck, HostFileIncludesAreUnsafeBeforeCompiling) {
  for (const char* src : {"#include \"/etc/passwd\"\n", "#include \"/dev/zero\"\n", "#include </etc/passwd>\n",
                          "#define P </etc/passwd>\n#include P\n", "%:include \"/etc/passwd\"\n",
                          "#inc\\\nlude \"/etc/passwd\"\n", "?" "?=include \"/etc/passwd\"\n"}) {
    auto fs = static_check(src, {});
    ASSERT_TRUE(has_unsafe(fs)) << src;
    EXPECT_EQ(with_rule(fs, "host_include").size(), 1u) << format_findings(fs);
    EXPECT_THAT(format_findings(fs), ::testing::Not(HasSubstr("root:")));
  }
}

// The rules are linear or bounded: 1 MiB inputs (the intake limit) of the shapes that made older
// scans quadratic (a regex per rule at every identifier: "x.y(" took 70 s on a CI runner; "asm("
// or "<<<" scanned to the end each time) or overflowed std::regex's recursion ("kevo_forward("
// then 1 MiB without ')') finish, and still find every line that offends. No clock here: the
// test's ctest timeout (scripts/test.sh) is what a regression to quadratic time runs into.
TEST(StaticCheck, OneMebibyteInputsFinishWithTheirFindings) {
  struct Big {
    std::string unit;
    const char* rule;  // flagged once per unit (once in all where the unit has no newline), or
                       // nullptr: nothing unsafe
  };
  const Big kBig[] = {{"kevo_forward(", nullptr}, {"a", nullptr},         {" ", nullptr},
                      {"#include <", "host_include"},    {"asm(", nullptr},      {"x.y(", nullptr},
                      {"<<<", nullptr},           {"half ", nullptr},     {"fork\n(", "process_create"},
                      {"std :: thread t;\n", "thread_create"},            {"cudaSetDevice(0);\n", "device_change"},
                      {"a::b::", nullptr}};
  for (const Big& b : kBig) {
    std::string s;
    size_t units = 0;
    for (; s.size() + b.unit.size() <= (1 << 20); ++units) s += b.unit;
    auto fs = static_check(s, {});
    if (!b.rule) {
      EXPECT_FALSE(has_unsafe(fs)) << "unit '" << b.unit << "'";
      continue;
    }
    const size_t lines = b.unit.find('\n') == std::string::npos ? 1 : units;
    EXPECT_EQ(with_rule(fs, b.rule).size(), lines) << "unit '" << b.unit << "'";
  }
}
