// Compiling a candidate (.cu, with nvcc) or a trusted CPU reference (.cpp, with g++) to a shared
// object, through the content-addressed cache (compile/cache.h) so a repeated source costs nothing.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "compile/ptxas.h"
#include "compile/sandbox.h"
#include "util/result.h"

namespace kevo {

// Every CUDA compile leaves out C++17's mathematical special functions (<cmath>'s std::beta,
// std::riemann_zeta, ...: host-only, no use to a kernel) by defining libstdc++'s include guard
// for them. Their templates were 70% of cudafe++'s time and a third of a cold compile's critical
// path (docs/measurements/2026-11-28-cpu-specfun-compile.md).
inline constexpr const char* kNoSpecialMathFlag = "-D_GLIBCXX_BITS_SPECFUN_H";

struct CompileOptions {
  std::string nvcc = "nvcc";
  std::string cxx = "g++";  // for compile_host_shared
  std::string arch = "sm_90";  // from the device; "sm_90a" forces the arch-specific target
  bool allow_sm90a_auto = true;  // sm_90 -> sm_90a when the source needs it (needs_sm90a)
  // Added after kevo's own include dir (kevo_home()/include), which is always first.
  std::vector<std::string> include_dirs;
  std::vector<std::string> extra_flags;
  std::vector<std::string> link_libs;  // e.g. "cublas" when the task allows it
  std::chrono::milliseconds timeout{180000};
  std::filesystem::path cache_dir;  // empty: kevo::cache_dir()
  bool use_cache = true;  // false: always compile (the result still replaces the cache entry)
  // Run nvcc's host and device front ends in parallel (compile/nvcc_pipeline.h); plain nvcc when
  // false, when the environment sets KEVO_NVCC_SERIAL=1, or when nvcc's step list is unfamiliar.
  bool parallel_front_ends = true;
  // The compiler's file sandbox (compile/sandbox.h): Auto takes the first kind that works here.
  // Off only for stand-in compilers in tests that write outside their build directory.
  SandboxMode sandbox = SandboxMode::Auto;
};

struct CompileResult {
  bool ok = false;
  std::filesystem::path so_path;  // in the cache entry; empty unless ok
  std::string cache_key;
  bool cache_hit = false;
  double seconds = 0;  // wall time of this call (a hit costs milliseconds)
  std::string arch_used;  // "sm_90", "sm_90a"; "host" for compile_host_shared
  std::vector<std::string> command;  // run in the build directory: "-o kernel.so kevo_src.cu"
  std::string diagnostics;  // trimmed (compile/diagnostics.h), naming the file as shown_name
  std::string log;  // full compiler stdout+stderr
  std::vector<KernelResources> kernels;
  bool timed_out = false;
  // How it was compiled: "nvcc", "nvcc-steps" (nvcc's own steps, front ends in parallel), "g++";
  // "refused": not compiled, the source could make the compiler read a host file
  // (compile/include_rules.h; the diagnostics name the line and the rule).
  std::string driver;
};

// True when the source uses sm_90a-only features (wgmma, setmaxnreg, ...) or asks for them with
// "// kevo: arch=sm_90a".
bool needs_sm90a(std::string_view source);

// The compiler's `--version` output; run once per program path and remembered.
Result<std::string> compiler_version(const std::string& compiler);

// Errors are infrastructure failures only (compiler missing, cache unwritable, disk full). A
// compile error or timeout is ok=false with diagnostics. Compile errors are cached; timeouts and
// compilers killed by a signal are not (they depend on the machine's load).
Result<CompileResult> compile_cuda_shared(std::string_view source, std::string_view shown_name,
                                          const CompileOptions& opts);

// g++ -O2 -std=c++17 -shared -fPIC for trusted CPU references (reference.cpp); same cache.
Result<CompileResult> compile_host_shared(std::string_view source, std::string_view shown_name,
                                          const CompileOptions& opts);

}  // namespace kevo
