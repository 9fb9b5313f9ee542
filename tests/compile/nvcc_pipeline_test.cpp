#include "compile/nvcc_pipeline.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "compile/nvcc.h"
#include "test_support.h"
#include "util/fs.h"
#include "util/subprocess.h"

using namespace kevo;
using kevo::test::TempDir;
using kevo::test::write_text;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

namespace {

// `nvcc -O3 -std=c++17 -shared ... -arch=sm_90 -o kernel.so kevo_src.cu --dryrun` from CUDA 13.0,
// shortened (long include and define lists cut), in the order nvcc lists it.
constexpr const char* kDryrun = R"(#$ _NVVM_BRANCH_=nvvm
#$ _SPACE_= 
#$ _CUDART_=cudart
#$ _HERE_=/usr/local/cuda/bin
#$ TOP=/usr/local/cuda/bin/..
#$ CICC_PATH=/usr/local/cuda/bin/../nvvm/bin
#$ NVVMIR_LIBRARY_DIR=/usr/local/cuda/bin/../nvvm/libdevice
#$ LD_LIBRARY_PATH=/usr/local/cuda/bin/../lib:
#$ PATH=/usr/local/cuda/bin/../nvvm/bin:/usr/local/cuda/bin:/usr/bin:/bin
#$ INCLUDES="-I/usr/local/cuda/bin/../targets/x86_64-linux/include"  
#$ SYSTEM_INCLUDES="-isystem" "/usr/local/cuda/bin/../targets/x86_64-linux/include/cccl"  
#$ LIBRARIES=  "-L/usr/local/cuda/bin/../targets/x86_64-linux/lib/stubs" "-L/usr/local/cuda/bin/../targets/x86_64-linux/lib"
#$ CUDAFE_FLAGS=
#$ PTXAS_FLAGS=
#$ gcc -std=c++17 -D__CUDA_ARCH_LIST__=900 -E -x c++ -D__CUDACC__ -D__NVCC__  -fPIC -O3 "kevo_src.cu" -o "/t/x-5_kevo_src.cpp4.ii" 
#$ cudafe++ --c++17 --static-host-stub --gnu_version=120200 --orig_src_file_name "kevo_src.cu" --allow_managed  --m64 --parse_templates --gen_c_file_name "/t/x-6_kevo_src.cudafe1.cpp" --stub_file_name "x-6_kevo_src.cudafe1.stub.c" --gen_module_id_file --module_id_file_name "/t/x-4_kevo_src.module_id" "/t/x-5_kevo_src.cpp4.ii" 
#$ gcc -std=c++17 -D__CUDA_ARCH__=900 -D__CUDA_ARCH_LIST__=900 -E -x c++  -DCUDA_DOUBLE_MATH_FUNCTIONS -D__CUDACC__ -D__NVCC__  -fPIC -O3 "kevo_src.cu" -o "/t/x-9_kevo_src.cpp1.ii" 
#$ "$CICC_PATH/cicc" --c++17 --static-host-stub -arch compute_90 -m64 --include_file_name "x-3_kevo_src.fatbin.c" -generate-line-info -tused --module_id_file_name "/t/x-4_kevo_src.module_id" --gen_c_file_name "/t/x-6_kevo_src.cudafe1.c" --stub_file_name "/t/x-6_kevo_src.cudafe1.stub.c" --gen_device_file_name "/t/x-6_kevo_src.cudafe1.gpu"  "/t/x-9_kevo_src.cpp1.ii" -o "/t/x-6_kevo_src.ptx"
#$ ptxas -arch=sm_90 -m64 -v  --generate-line-info "/t/x-6_kevo_src.ptx"  -o "/t/x-10_kevo_src.sm_90.cubin" 
#$ fatbinary -64 --ident="kevo_src.cu" "--image3=kind=elf,sm=90,file=/t/x-10_kevo_src.sm_90.cubin" "--image3=kind=ptx,sm=90,file=/t/x-6_kevo_src.ptx" --embedded-fatbin="/t/x-3_kevo_src.fatbin.c" 
#$ rm /t/x-3_kevo_src.fatbin
#$ gcc -std=c++17 -D__CUDA_ARCH__=900 -D__CUDA_ARCH_LIST__=900 -c -x c++  -DCUDA_DOUBLE_MATH_FUNCTIONS -fPIC -O3 -Wno-psabi -m64 "/t/x-6_kevo_src.cudafe1.cpp" -o "/t/x-11_kevo_src.o" 
#$ nvlink -m64  --shared --arch=sm_90 --register-link-binaries="/t/x-7_kernel_dlink.reg.c" -cpu-arch=X86_64 "/t/x-11_kevo_src.o"  -lcudadevrt  -o "/t/x-12_kernel_dlink.sm_90.cubin" --host-ccbin "gcc"
#$ fatbinary -64 --ident="kevo_src.cu " -link "--image3=kind=elf,sm=90,file=/t/x-12_kernel_dlink.sm_90.cubin" --embedded-fatbin="/t/x-8_kernel_dlink.fatbin.c" 
#$ rm /t/x-8_kernel_dlink.fatbin
#$ gcc -std=c++17 -D__CUDA_ARCH_LIST__=900 -c -x c++ -fPIC -O3 -Wno-psabi -m64 "/usr/local/cuda/bin/crt/link.stub" -o "/t/x-13_kernel_dlink.o" 
#$ g++ -D__CUDA_ARCH_LIST__=900 -fPIC -O3 -m64 -std=c++17 -Wl,--start-group "/t/x-13_kernel_dlink.o" "/t/x-11_kevo_src.o" -shared -Xlinker --no-undefined -lcudadevrt  -lcudart  -Wl,--end-group -o "kernel.so" 
)";

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
  return s;
}

}  // namespace

TEST(NvccSteps, RunsTheTwoFrontEndsInParallelAndTheRestInOrder) {
  auto r =
      parallel_nvcc_script(std::string("nvcc warning : something the driver said\n") + kDryrun);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->module_id_path, "/t/x-4_kevo_src.module_id");
  EXPECT_EQ(r->driver_output, "nvcc warning : something the driver said\n");
  const std::string& s = r->script;
  // cicc reads the id the caller writes; cudafe++ no longer generates it.
  EXPECT_THAT(s, Not(HasSubstr("--gen_module_id_file")));
  EXPECT_THAT(
      s,
      HasSubstr("--module_id_file_name \"/t/x-4_kevo_src.module_id\" \"/t/x-5_kevo_src.cpp4.ii\""));
  // Plain settings are exported; nvcc's multi-word bookkeeping (not valid sh) is left out.
  EXPECT_THAT(s, HasSubstr("CICC_PATH=/usr/local/cuda/bin/../nvvm/bin\nexport CICC_PATH\n"));
  EXPECT_THAT(s, HasSubstr("export PATH\n"));
  EXPECT_THAT(s, Not(HasSubstr("LIBRARIES=")));
  EXPECT_THAT(s, Not(HasSubstr("INCLUDES=")));
  EXPECT_THAT(s, Not(HasSubstr("_SPACE_")));
  // Host chain: preprocess then cudafe++, one background job; device chain: the four steps.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      s, m,
      std::regex(
          R"(\( gcc [^\n]*-o "/t/x-5_kevo_src.cpp4.ii" && cudafe\+\+ [^\n]*\) > "\$TMPDIR/kevo_nvcc_host.log" 2>&1 &\n)")))
      << s;
  ASSERT_TRUE(std::regex_search(
      s, m,
      std::regex(
          R"(\( gcc [^\n]*cpp1.ii" && "\$CICC_PATH/cicc" [^\n]* && ptxas [^\n]* && fatbinary [^\n]*\) > "\$TMPDIR/kevo_nvcc_device.log" 2>&1 &\n)")))
      << s;
  // Both are waited for before the host compile, which needs cudafe++'s output and the fatbin.
  size_t waits = s.find("wait $dp"), host_cc = s.find("-c -x c++  -DCUDA_DOUBLE_MATH_FUNCTIONS");
  ASSERT_NE(waits, std::string::npos);
  ASSERT_NE(host_cc, std::string::npos);
  EXPECT_LT(waits, host_cc);
  // The host front end's errors come first, and alone when it fails, as with nvcc.
  EXPECT_LT(s.find("cat \"$TMPDIR/kevo_nvcc_host.log\""),
            s.find("cat \"$TMPDIR/kevo_nvcc_device.log\""));
  EXPECT_THAT(s, HasSubstr("[ $hrc -eq 0 ] || exit $hrc"));
  // Every later step stops the script on failure; a failed rm does not.
  EXPECT_THAT(s, HasSubstr("-o \"kernel.so\" || exit $?\n"));
  EXPECT_THAT(s, HasSubstr("rm /t/x-3_kevo_src.fatbin 2>/dev/null\n"));
  // No relocatable device code: nvcc's device link registers nothing and is left out, with its
  // object and libcudadevrt; the final link takes the host object and libcudart only.
  EXPECT_THAT(s, Not(HasSubstr("nvlink")));
  EXPECT_THAT(s, Not(HasSubstr("link.stub")));
  EXPECT_THAT(s, Not(HasSubstr("dlink")));
  EXPECT_THAT(s, HasSubstr("-Wl,--start-group \"/t/x-11_kevo_src.o\" -shared -Xlinker --no-undefined  -lcudart  "
                           "-Wl,--end-group -o \"kernel.so\" || exit $?\n"));
  EXPECT_THAT(s, HasSubstr("\ng++ -D__CUDA_ARCH_LIST__=900"));  // the linker g++ chooses
}

TEST(NvccSteps, TheFinalLinkUsesTheLinkerAskedFor) {
  auto r = parallel_nvcc_script(kDryrun, {"gold"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_THAT(r->script, HasSubstr("\ng++ -fuse-ld=gold -D__CUDA_ARCH_LIST__=900 -fPIC"));
  // Its failure has its own exit status: the caller then lets plain nvcc link.
  EXPECT_THAT(r->script, HasSubstr(fmt::format("-o \"kernel.so\" || exit {}\n", kLinkerFailedExit)));
  // Only the final link: the host compile keeps its own command.
  EXPECT_THAT(r->script, Not(HasSubstr("gcc -fuse-ld")));
}

TEST(NvccSteps, RelocatableDeviceCodeKeepsNvccsDeviceLink) {
  const std::string rdc =
      replace_all(kDryrun, "--c++17 --static-host-stub -arch", "--c++17 --static-host-stub --device-c -arch");
  auto r = parallel_nvcc_script(rdc);
  ASSERT_TRUE(r) << r.error().message;
  const std::string& s = r->script;
  EXPECT_THAT(s, HasSubstr("rm /t/x-8_kernel_dlink.fatbin 2>/dev/null\n"));
  EXPECT_LT(s.find("nvlink"), s.find("link.stub"));
  EXPECT_LT(s.find("link.stub"), s.find("-o \"kernel.so\""));
  EXPECT_THAT(s, HasSubstr("\"/t/x-13_kernel_dlink.o\" \"/t/x-11_kevo_src.o\" -shared -Xlinker --no-undefined -lcudadevrt"));
}

TEST(NvccSteps, UnfamiliarStepListsAreRefusedWithTheReason) {
  EXPECT_THAT(parallel_nvcc_script("").error().message, HasSubstr("no commands"));
  // Two architectures: two cicc and ptxas runs.
  std::string two = kDryrun;
  std::string cicc_line = two.substr(two.find("#$ \"$CICC_PATH/cicc\""));
  cicc_line = cicc_line.substr(0, cicc_line.find('\n') + 1);
  two.insert(two.find("#$ rm /t/x-3"), cicc_line);
  EXPECT_THAT(parallel_nvcc_script(two).error().message, HasSubstr("2 cicc commands"));
  // No module id generation (an nvcc that links the front ends otherwise).
  EXPECT_THAT(
      parallel_nvcc_script(replace_all(kDryrun, " --gen_module_id_file", "")).error().message,
      HasSubstr("module id"));
  EXPECT_THAT(
      parallel_nvcc_script(
          replace_all(kDryrun, "--module_id_file_name \"/t/x-4_kevo_src.module_id\" --gen_c",
                      "--module_id_file_name \"/t/other\" --gen_c"))
          .error()
          .message,
      HasSubstr("do not share a module id"));
  // Steps in another order.
  std::string swapped = kDryrun;
  std::string ptxas_line = swapped.substr(swapped.find("#$ ptxas"));
  ptxas_line = ptxas_line.substr(0, ptxas_line.find('\n') + 1);
  swapped.erase(swapped.find("#$ ptxas"), ptxas_line.size());
  swapped.insert(swapped.find("#$ nvlink"), ptxas_line);
  EXPECT_THAT(parallel_nvcc_script(swapped).error().message, HasSubstr("order"));
}

TEST(NvccSteps, ModuleIdHasNvccsShape) {
  std::string id = nvcc_module_id("kevo_src.cu", 0x1387f9fddb7f178bull);
  EXPECT_EQ(id, "_1387f9fd_11_kevo_src_cu_db7f178b");
  EXPECT_NE(nvcc_module_id("kevo_src.cu", 1), nvcc_module_id("kevo_src.cu", 2));
}

namespace {

struct Both {
  CompileResult plain, steps;
};

// Compiles `src` with plain nvcc and with nvcc's steps (separate caches).
Both compile_both(const std::string& nvcc, const TempDir& t, const std::string& src) {
  Both b;
  for (bool parallel : {false, true}) {
    CompileOptions o;
    o.nvcc = nvcc;
    o.cache_dir = t.path / (parallel ? "cache-steps" : "cache-plain");
    o.parallel_front_ends = parallel;
    auto r = compile_cuda_shared(src, "candidate.cu", o);
    EXPECT_TRUE(r) << r.error().message;
    if (r) (parallel ? b.steps : b.plain) = *r;
  }
  return b;
}

constexpr const char* kGood = R"(#include <kevo/kernel.h>
namespace {
__global__ void scale(const float* x, float* y, int64_t n) {  // internal linkage: uses the module id
  __shared__ float s[128];
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  s[threadIdx.x % 128] = i < n ? x[i] : 0.f;
  __syncthreads();
  if (i < n) y[i] = 2.f * s[threadIdx.x % 128];
}
}
KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t n = kevo_numel(&a->inputs[0]);
  scale<<<(unsigned)((n + 127) / 128), 128, 0, a->stream>>>((const float*)a->inputs[0].data,
                                                            (float*)a->outputs[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
)";

}  // namespace

TEST(NvccSteps, SameResultAsNvccForAGoodCandidate) {
  KEVO_REQUIRE_NVCC(nvcc);
  TempDir t;
  Both b = compile_both(nvcc, t, kGood);
  ASSERT_TRUE(b.plain.ok) << b.plain.log;
  ASSERT_TRUE(b.steps.ok) << b.steps.log;
  EXPECT_EQ(b.plain.driver, "nvcc");
  EXPECT_EQ(b.steps.driver, "nvcc-steps") << "fell back to plain nvcc";
  EXPECT_EQ(b.plain.cache_key, b.steps.cache_key);  // the same artifact, so the same entry
  ASSERT_EQ(b.steps.kernels.size(), 1u) << b.steps.log;
  ASSERT_EQ(b.plain.kernels.size(), 1u);
  EXPECT_EQ(b.steps.kernels[0].function, b.plain.kernels[0].function);
  EXPECT_EQ(b.steps.kernels[0].registers, b.plain.kernels[0].registers);
  EXPECT_EQ(b.steps.kernels[0].shared_bytes, 512);
  EXPECT_EQ(b.steps.diagnostics, b.plain.diagnostics);
  // The same functions, exported and internal, and the same undefined references; no intermediates
  // left in the cache entry. Only the linker's own symbols may differ (gold adds _end and the like,
  // and nm shows bfd's undefined ones with their versions), and nvcc's device link adds an empty
  // fatbin (fatbinData) that the steps leave out.
  auto syms = [](const fs::path& so) {
    auto r = run_process({.argv = {"nm", "-C", so.string()}});
    std::string kept, line;
    std::istringstream in(r ? r->out : "");
    std::regex sym(R"(^(?:[0-9a-f]{16})?\s+([TtU]) ([^@]+)(@.*)?$)");
    std::smatch m;
    while (std::getline(in, line))
      if (std::regex_match(line, m, sym)) kept += m[1].str() + " " + m[2].str() + "\n";
    return kept;
  };
  std::string ps = syms(b.plain.so_path), ss = syms(b.steps.so_path);
  EXPECT_THAT(ss, HasSubstr("T kevo_forward"));
  // Internal names carry the (random) module id; compare with it masked.
  std::regex id("_[0-9a-f]{8}_[0-9]+_kevo_src_cu_[0-9a-f]{8}");
  EXPECT_EQ(std::regex_replace(ss, id, "ID"), std::regex_replace(ps, id, "ID"));
  for (const auto& e : fs::directory_iterator(b.steps.so_path.parent_path()))
    EXPECT_THAT(e.path().filename().string(), Not(HasSubstr("nvcc-steps")));
}

// gold failing on its own account (an ld.gold of its own making here, first in PATH) is not the
// candidate's compile error: plain nvcc, which links with ld.bfd, decides.
TEST(NvccSteps, AGoldThatFailsLeavesTheLinkToPlainNvcc) {
  KEVO_REQUIRE_NVCC(nvcc);
  if (!find_program("ld.gold")) GTEST_SKIP() << "no ld.gold here: the steps link with g++'s default linker";
  TempDir t;
  fs::path bin = t.path / "bin";
  fs::create_directories(bin);
  write_text(bin / "ld.gold", "#!/bin/sh\necho 'ld.gold: fatal error: simulated failure' >&2\nexit 1\n");
  fs::permissions(bin / "ld.gold", fs::perms::owner_all);
  const std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  setenv("PATH", (bin.string() + ":" + old_path).c_str(), 1);
  CompileOptions o;
  o.nvcc = nvcc;
  o.cache_dir = t.path / "cache";
  auto r = compile_cuda_shared(kGood, "candidate.cu", o);
  setenv("PATH", old_path.c_str(), 1);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->ok) << r->log;
  EXPECT_EQ(r->driver, "nvcc") << "a gold failure must not decide: " << r->log;
}

TEST(NvccSteps, SameDiagnosticsAsNvccForEveryKindOfFailure) {
  KEVO_REQUIRE_NVCC(nvcc);
  TempDir t;
  struct Case {
    const char* what;
    std::string src;
  };
  std::vector<Case> cases = {
      {"syntax (host front end)",
       "#include <kevo/kernel.h>\n__global__ void k(float* y) { y[0] = oops; }\n"
       "KEVO_EXPORT int kevo_forward(const kevo_args*) { return 0; }\n"},
      {"device code only (cicc)",
       "#include <kevo/kernel.h>\n__global__ void k(float* y) {\n#ifdef __CUDA_ARCH__\n y[0] = "
       "oops_dev;\n#endif\n}\n"
       "KEVO_EXPORT int kevo_forward(const kevo_args*) { return 0; }\n"},
      {"ptxas (too much shared memory)",
       "#include <kevo/kernel.h>\n__global__ void k(float* y) { __shared__ float s[1 << 20]; "
       "s[threadIdx.x] = 1; "
       "__syncthreads(); y[threadIdx.x] = s[threadIdx.x ^ 1]; }\n"
       "KEVO_EXPORT int kevo_forward(const kevo_args* a) { k<<<1, 32, 0, "
       "a->stream>>>((float*)a->outputs[0].data); "
       "return 0; }\n"},
      {"link (undefined symbol)",
       "#include <kevo/kernel.h>\nextern \"C\" int not_defined_anywhere(void);\n"
       "KEVO_EXPORT int kevo_forward(const kevo_args*) { return not_defined_anywhere(); }\n"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    Both b = compile_both(nvcc, t, c.src);
    EXPECT_FALSE(b.plain.ok);
    EXPECT_FALSE(b.steps.ok);
    // A link that fails with gold is left to plain nvcc (compile/nvcc_pipeline.h).
    const bool gold_link = find_program("ld.gold") && std::string(c.what).rfind("link", 0) == 0;
    EXPECT_EQ(b.steps.driver, gold_link ? "nvcc" : "nvcc-steps");
    EXPECT_FALSE(b.steps.diagnostics.empty());
    EXPECT_EQ(b.steps.diagnostics, b.plain.diagnostics) << "plain log:\n"
                                                        << b.plain.log << "\nsteps log:\n"
                                                        << b.steps.log;
  }
}

TEST(NvccSteps, AnNvccWhoseStepListIsUnfamiliarIsRunPlain) {
  KEVO_REQUIRE_NVCC(nvcc);
  TempDir t;
  // A wrapper whose --dryrun lists something else; the compile itself is nvcc's.
  fs::path wrapper = t.path / "nvcc-odd";
  write_text(
      wrapper,
      "#!/bin/sh\n"
      "for a in \"$@\"; do [ \"$a\" = --dryrun ] && { echo '#$ cicc --odd' >&2; exit 0; }; done\n"
      "exec " +
          nvcc + " \"$@\"\n",
      true);
  CompileOptions o;
  o.nvcc = wrapper.string();
  o.cache_dir = t.path / "cache";
  auto r = compile_cuda_shared(kGood, "candidate.cu", o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->ok) << r->log;
  EXPECT_EQ(r->driver, "nvcc");
}
