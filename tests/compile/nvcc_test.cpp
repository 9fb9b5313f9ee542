#include "compile/nvcc.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "test_support.h"
#include "util/fs.h"
#include "util/subprocess.h"

using namespace kevo;
using namespace std::chrono_literals;
using kevo::test::TempDir;
using kevo::test::write_text;
using ::testing::Contains;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

constexpr const char* kRelu = R"(#include <kevo/kernel.h>

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

// Line 4 has the error.
constexpr const char* kBroken = R"(#include <kevo/kernel.h>
__global__ void k(float* y) {
  int i = threadIdx.x;
  y[i] = undefined_thing;
}
KEVO_EXPORT int kevo_forward(const kevo_args* a) { return 0; }
)";

constexpr const char* kCublas = R"(#include <kevo/kernel.h>
#include <cublas_v2.h>
KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  static cublasHandle_t h;
  if (!h) cublasCreate(&h);
  float one = 1, zero = 0;
  return (int)cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, (const float*)a->inputs[0].data, 4,
                          (const float*)a->inputs[1].data, 4, &zero, (float*)a->outputs[0].data, 4);
}
)";

CompileOptions options(const std::string& nvcc, const TempDir& t) {
  CompileOptions o;
  o.nvcc = nvcc;
  o.cache_dir = t.path / "cache";
  return o;
}

// A wrapper that counts real compiles (not --version) and then runs nvcc.
std::string counting_nvcc(const TempDir& t, const std::string& nvcc) {
  fs::path p = t.path / "nvcc-counting";
  write_text(p,
             "#!/bin/sh\n"
             "[ \"$1\" = --version ] || echo x >> " + (t.path / "count").string() + "\n"
             "exec " + nvcc + " \"$@\"\n",
             true);
  return p.string();
}

int count(const TempDir& t) {
  auto s = read_file(t.path / "count");
  return s ? static_cast<int>(std::count(s->begin(), s->end(), '\n')) : 0;
}

}  // namespace

TEST(NeedsSm90a, DetectsArchSpecificFeatures) {
  EXPECT_TRUE(needs_sm90a(R"(asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 ...");)"));
  EXPECT_TRUE(needs_sm90a(R"(asm volatile("setmaxnreg.inc.sync.aligned.u32 240;");)"));
  EXPECT_TRUE(needs_sm90a("// kevo: arch=sm_90a\n__global__ void k() {}"));
  EXPECT_TRUE(needs_sm90a("#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n#endif"));
  EXPECT_TRUE(needs_sm90a("using Mma = cute::SM90_64x64x16_F32BF16BF16_SS<cute::GMMA::Major::K>;"));
  EXPECT_FALSE(needs_sm90a(kRelu));
  EXPECT_FALSE(needs_sm90a("// kevo: arch=sm_90\nint wgmma_count;"));
}

TEST(Compile, CandidateToSharedObjectWithResources) {
  KEVO_REQUIRE_NVCC(nvcc);
  TempDir t;
  auto r = compile_cuda_shared(kRelu, "candidate.cu", options(nvcc, t));
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_TRUE(r->ok) << r->diagnostics << "\n" << r->log;
  EXPECT_FALSE(r->cache_hit);
  EXPECT_TRUE(fs::exists(r->so_path));
  EXPECT_EQ(r->arch_used, "sm_90");
  EXPECT_THAT(r->command, Contains("-arch=sm_90"));
  EXPECT_THAT(r->command, Contains("--no-undefined"));
  EXPECT_THAT(r->command, Contains("-lineinfo"));
  ASSERT_EQ(r->kernels.size(), 1u) << r->log;
  EXPECT_EQ(r->kernels[0].function, "relu_kernel(float const*, float*, long)");
  EXPECT_GT(r->kernels[0].registers, 0);
  EXPECT_EQ(r->kernels[0].arch, "sm_90");
  EXPECT_EQ(r->cache_key.size(), 64u);
  // The entry point is exported under its C name.
  auto nm = run_process({.argv = {"nm", "-D", "--defined-only", r->so_path.string()}});
  ASSERT_TRUE(nm);
  EXPECT_THAT(nm->out, HasSubstr(" T kevo_forward"));
}

TEST(Compile, Sm90aChosenWhenTheSourceAsks) {
  KEVO_REQUIRE_NVCC(nvcc);
  TempDir t;
  std::string src = std::string("// kevo: arch=sm_90a\n") + kRelu;
  auto r = compile_cuda_shared(src, "candidate.cu", options(nvcc, t));
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_TRUE(r->ok) << r->diagnostics;
  EXPECT_EQ(r->arch_used, "sm_90a");
  EXPECT_THAT(r->command, Contains("-gencode=arch=compute_90a,code=sm_90a"));
  ASSERT_EQ(r->kernels.size(), 1u);
  EXPECT_EQ(r->kernels[0].arch, "sm_90a");

  CompileOptions o = options(nvcc, t);
  o.allow_sm90a_auto = false;
  auto r2 = compile_cuda_shared(src, "candidate.cu", o);
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->arch_used, "sm_90");
  EXPECT_NE(r2->cache_key, r->cache_key);
}

// C++17's special math functions are left out of every CUDA compile (their templates were most of
// cudafe++'s time); the rest of <cmath> is there as usual.
TEST(Compile, SpecialMathFunctionsAreLeftOut) {
  KEVO_REQUIRE_NVCC(nvcc);
  TempDir t;
  const std::string plain = std::string("#include <cmath>\nfloat host_erf(float x) { return std::erf(x); }\n") + kRelu;
  auto r = compile_cuda_shared(plain, "candidate.cu", options(nvcc, t));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->ok) << r->diagnostics;
  EXPECT_THAT(r->command, Contains(std::string(kNoSpecialMathFlag)));
  const std::string special =
      std::string("#include <cmath>\ndouble host_zeta(double x) { return std::riemann_zeta(x); }\n") + kRelu;
  auto z = compile_cuda_shared(special, "candidate.cu", options(nvcc, t));
  ASSERT_TRUE(z) << z.error().message;
  EXPECT_FALSE(z->ok);
  EXPECT_THAT(z->diagnostics, HasSubstr("riemann_zeta"));
}

TEST(Compile, ErrorIsAResultWithTrimmedDiagnostics) {
  KEVO_REQUIRE_NVCC(nvcc);
  TempDir t;
  auto r = compile_cuda_shared(kBroken, "candidate.cu", options(nvcc, t));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->ok);
  EXPECT_FALSE(r->timed_out);
  EXPECT_TRUE(r->so_path.empty());
  EXPECT_THAT(r->diagnostics, HasSubstr("candidate.cu(4): error: identifier \"undefined_thing\" is undefined"));
  EXPECT_THAT(r->diagnostics, HasSubstr("y[i] = undefined_thing;"));
  EXPECT_THAT(r->diagnostics, ::testing::Not(HasSubstr("kevo_src")));
  EXPECT_THAT(r->log, HasSubstr("undefined_thing"));
  // Failures are cached too, and the cached diagnostics use the caller's name for the file.
  auto again = compile_cuda_shared(kBroken, "attempt3.cu", options(nvcc, t));
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->cache_hit);
  EXPECT_FALSE(again->ok);
  EXPECT_THAT(again->diagnostics, HasSubstr("attempt3.cu(4): error"));
}

TEST(Compile, CacheHitRunsNoCompiler) {
  KEVO_REQUIRE_NVCC(real);
  TempDir t;
  CompileOptions o = options(counting_nvcc(t, real), t);
  o.sandbox = SandboxMode::Off;  // the counter writes outside the build directory
  auto a = compile_cuda_shared(kRelu, "candidate.cu", o);
  ASSERT_TRUE(a) << a.error().message;
  ASSERT_TRUE(a->ok) << a->diagnostics;
  EXPECT_EQ(count(t), 1);

  auto b = compile_cuda_shared(kRelu, "candidate.cu", o);
  ASSERT_TRUE(b);
  EXPECT_TRUE(b->cache_hit);
  EXPECT_EQ(count(t), 1) << "a cache hit must not run nvcc";
  EXPECT_EQ(b->so_path, a->so_path);
  EXPECT_EQ(b->cache_key, a->cache_key);
  ASSERT_EQ(b->kernels.size(), a->kernels.size());
  EXPECT_EQ(b->kernels[0].registers, a->kernels[0].registers);
  EXPECT_EQ(b->command, a->command);
  EXPECT_LT(b->seconds, a->seconds);

  // Layout: cache/compile/<key[0:2]>/<key>/{kernel.so,result.json}
  fs::path entry = o.cache_dir / "compile" / a->cache_key.substr(0, 2) / a->cache_key;
  EXPECT_EQ(a->so_path, entry / "kernel.so");
  EXPECT_TRUE(fs::exists(entry / "result.json"));

  // A changed flag is a different key.
  CompileOptions o2 = o;
  o2.extra_flags = {"-DKEVO_TEST_FLAG=1"};
  auto c = compile_cuda_shared(kRelu, "candidate.cu", o2);
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->cache_hit);
  EXPECT_NE(c->cache_key, a->cache_key);
  EXPECT_EQ(count(t), 2);

  // use_cache=false compiles again and refreshes the entry.
  CompileOptions o3 = o;
  o3.use_cache = false;
  auto d = compile_cuda_shared(kRelu, "candidate.cu", o3);
  ASSERT_TRUE(d);
  EXPECT_TRUE(d->ok);
  EXPECT_FALSE(d->cache_hit);
  EXPECT_EQ(count(t), 3);
  EXPECT_TRUE(fs::exists(d->so_path));

  // An incomplete entry (shared object gone) is rebuilt, not returned.
  fs::remove(entry / "kernel.so");
  auto e = compile_cuda_shared(kRelu, "candidate.cu", o);
  ASSERT_TRUE(e);
  EXPECT_FALSE(e->cache_hit);
  EXPECT_TRUE(fs::exists(e->so_path));
  EXPECT_EQ(count(t), 4);
}

TEST(Compile, HeaderContentIsPartOfTheKey) {
  KEVO_REQUIRE_NVCC(real);
  TempDir t;
  CompileOptions o = options(counting_nvcc(t, real), t);
  o.sandbox = SandboxMode::Off;  // the counter writes outside the build directory
  write_text(t.path / "inc" / "mine.cuh", "#define SCALE 1.0f\n");
  o.include_dirs = {(t.path / "inc").string()};
  std::string src = std::string("#include <mine.cuh>\n") + kRelu;
  auto a = compile_cuda_shared(src, "candidate.cu", o);
  ASSERT_TRUE(a) << a.error().message;
  ASSERT_TRUE(a->ok) << a->diagnostics;
  write_text(t.path / "inc" / "mine.cuh", "#define SCALE 2.0f\n");
  auto b = compile_cuda_shared(src, "candidate.cu", o);
  ASSERT_TRUE(b);
  EXPECT_NE(a->cache_key, b->cache_key);
  EXPECT_FALSE(b->cache_hit);
  EXPECT_EQ(count(t), 2);

  // kevo's own header (kevo_home()/include/kevo/kernel.h) counts the same way.
  fs::path home = t.path / "home";
  fs::create_directories(home / "include");
  fs::copy(kevo_home() / "include" / "kevo", home / "include" / "kevo", fs::copy_options::recursive);
  const char* old = getenv("KEVO_HOME");
  std::string saved = old ? old : "";
  setenv("KEVO_HOME", home.c_str(), 1);
  auto c = compile_cuda_shared(kRelu, "candidate.cu", o);
  {
    std::ofstream(home / "include" / "kevo" / "kernel.h", std::ios::app) << "// changed\n";
  }
  auto d = compile_cuda_shared(kRelu, "candidate.cu", o);
  if (old) setenv("KEVO_HOME", saved.c_str(), 1); else unsetenv("KEVO_HOME");
  ASSERT_TRUE(c && d);
  EXPECT_TRUE(c->ok) << c->diagnostics;
  EXPECT_NE(c->cache_key, d->cache_key);
  EXPECT_FALSE(d->cache_hit);
}

TEST(Compile, TimeoutIsAResultAndNotCached) {
  TempDir t;
  fs::path fake = t.path / "slow-nvcc";
  write_text(fake,
             "#!/bin/sh\n"
             "[ \"$1\" = --version ] && { echo 'fake nvcc 0.0'; exit 0; }\n"
             "echo x >> " + (t.path / "count").string() + "\n"
             "sleep 30\n",
             true);
  CompileOptions o = options(fake.string(), t);
  o.sandbox = SandboxMode::Off;  // the fake writes its count outside the build directory
  o.timeout = 300ms;
  auto r = compile_cuda_shared(kRelu, "candidate.cu", o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->ok);
  EXPECT_TRUE(r->timed_out);
  EXPECT_LT(r->seconds, 10.0);
  EXPECT_THAT(r->diagnostics, HasSubstr("timed out"));
  auto again = compile_cuda_shared(kRelu, "candidate.cu", o);
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->cache_hit);
  EXPECT_EQ(count(t), 2);
  // No build directories are left behind.
  EXPECT_TRUE(fs::is_empty(o.cache_dir / "compile" / "tmp"));
}

TEST(Compile, InfrastructureFailuresAreErrors) {
  TempDir t;
  CompileOptions o = options((t.path / "no-such-nvcc").string(), t);
  auto r = compile_cuda_shared(kRelu, "candidate.cu", o);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("not found"));

  KEVO_REQUIRE_NVCC(nvcc);
  write_text(t.path / "a-file", "x");
  CompileOptions o2 = options(nvcc, t);
  o2.cache_dir = t.path / "a-file";  // a cache dir that cannot be created
  auto r2 = compile_cuda_shared(kRelu, "candidate.cu", o2);
  ASSERT_FALSE(r2);
  EXPECT_THAT(r2.error().message, HasSubstr("cache"));
}

TEST(Compile, CublasWithoutTheLibraryFailsToLink) {
  KEVO_REQUIRE_NVCC(nvcc);
  TempDir t;
  auto r = compile_cuda_shared(kCublas, "candidate.cu", options(nvcc, t));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->ok);
  EXPECT_THAT(r->diagnostics, HasSubstr("undefined reference to `cublas"));
  EXPECT_THAT(r->diagnostics, HasSubstr("kevo_forward"));

  // The same source links when the task allows cuBLAS: the failure is the link policy.
  CompileOptions o = options(nvcc, t);
  o.link_libs = {"cublas"};
  auto ok = compile_cuda_shared(kCublas, "candidate.cu", o);
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_TRUE(ok->ok) << ok->diagnostics;
}

TEST(Compile, HostReference) {
  TempDir t;
  CompileOptions o;
  o.cache_dir = t.path / "cache";
  const char* ref = R"(#include <kevo/reference.h>
KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  for (int64_t i = 0; i < a->inputs[0].shape[0]; ++i) a->outputs[0].data[i] = a->inputs[0].data[i] * 2;
}
)";
  auto r = compile_host_shared(ref, "reference.cpp", o);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_TRUE(r->ok) << r->diagnostics;
  EXPECT_EQ(r->arch_used, "host");
  EXPECT_TRUE(fs::exists(r->so_path));
  EXPECT_TRUE(r->kernels.empty());
  auto again = compile_host_shared(ref, "reference.cpp", o);
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->cache_hit);

  auto bad = compile_host_shared("int f() {\n  return nope;\n}\n", "reference.cpp", o);
  ASSERT_TRUE(bad);
  EXPECT_FALSE(bad->ok);
  EXPECT_THAT(bad->diagnostics, HasSubstr("reference.cpp(2): error"));
}
