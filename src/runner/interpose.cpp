#include "runner/interpose.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <mutex>

namespace kevo::guard {
namespace {

std::atomic<bool> g_armed{false};
std::atomic<bool> g_ever_armed{false};
std::atomic<cudaStream_t> g_stream{nullptr};
std::atomic<size_t> g_alloc_limit{0};
std::atomic<size_t> g_allocated{0};
std::mutex g_mu;
std::vector<Violation> g_violations;
thread_local int t_trusted = 0;  // > 0 inside a Trusted scope of this thread

void record(const char* kind, std::string detail) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_violations.size() < 32) g_violations.push_back({kind, std::move(detail)});
}

// After the first armed call every launch must use the given stream; a launch while disarmed
// comes from a thread or callback the candidate left running.
void check_launch(cudaStream_t s, const char* via) {
  if (t_trusted > 0) return;
  if (g_armed.load()) {
    if (s != g_stream.load()) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "kernel launched via %s on stream %p, not the stream given (%p)",
                    via, static_cast<void*>(s), static_cast<void*>(g_stream.load()));
      record("foreign_stream", buf);
    }
  } else if (g_ever_armed.load()) {
    record("hidden_work", std::string("kernel launched via ") + via +
                              " outside the candidate's call (from a thread or callback)");
  }
}

template <class F>
F real(const char* name) {
  void* p = dlsym(RTLD_NEXT, name);
  if (!p) {
    std::fprintf(stderr, "kevo-runner: cannot resolve %s\n", name);
    std::abort();
  }
  return reinterpret_cast<F>(p);
}

}  // namespace

void arm(cudaStream_t stream, size_t alloc_limit_bytes) {
  g_stream = stream;
  g_alloc_limit = alloc_limit_bytes;
  g_ever_armed = true;
  g_armed = true;
}

void disarm() { g_armed = false; }

Trusted::Trusted() { ++t_trusted; }
Trusted::~Trusted() { --t_trusted; }

std::vector<Violation> take() {
  std::lock_guard<std::mutex> lock(g_mu);
  std::vector<Violation> v;
  v.swap(g_violations);
  return v;
}

size_t allocated_bytes() { return g_allocated.load(); }

}  // namespace kevo::guard

using namespace kevo::guard;

// --- interposed entry points (C linkage, exported from the executable with -rdynamic) ---
extern "C" {

cudaError_t __cudaLaunchKernel(cudaKernel_t k, dim3 g, dim3 b, void** args, size_t shm,
                               cudaStream_t s) {
  static auto fn = real<cudaError_t (*)(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t)>(
      "__cudaLaunchKernel");
  check_launch(s, "<<<>>>");
  return fn(k, g, b, args, shm, s);
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t k, dim3 g, dim3 b, void** args, size_t shm,
                                    cudaStream_t s) {
  static auto fn = real<cudaError_t (*)(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t)>(
      "__cudaLaunchKernel_ptsz");
  check_launch(s == nullptr ? cudaStreamPerThread : s, "<<<>>> (per-thread default stream)");
  return fn(k, g, b, args, shm, s);
}

cudaError_t cudaLaunchKernel(const void* f, dim3 g, dim3 b, void** args, size_t shm,
                             cudaStream_t s) {
  static auto fn = real<cudaError_t (*)(const void*, dim3, dim3, void**, size_t, cudaStream_t)>(
      "cudaLaunchKernel");
  check_launch(s, "cudaLaunchKernel");
  return fn(f, g, b, args, shm, s);
}

cudaError_t cudaLaunchCooperativeKernel(const void* f, dim3 g, dim3 b, void** args, size_t shm,
                                        cudaStream_t s) {
  static auto fn = real<cudaError_t (*)(const void*, dim3, dim3, void**, size_t, cudaStream_t)>(
      "cudaLaunchCooperativeKernel");
  check_launch(s, "cudaLaunchCooperativeKernel");
  return fn(f, g, b, args, shm, s);
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* cfg, const void* f, void** args) {
  static auto fn = real<cudaError_t (*)(const cudaLaunchConfig_t*, const void*, void**)>(
      "cudaLaunchKernelExC");
  check_launch(cfg ? cfg->stream : nullptr, "cudaLaunchKernelEx");
  return fn(cfg, f, args);
}

cudaError_t cudaStreamCreate(cudaStream_t* s) {
  static auto fn = real<cudaError_t (*)(cudaStream_t*)>("cudaStreamCreate");
  if (g_armed.load()) record("stream_created", "cudaStreamCreate called during the candidate's call");
  return fn(s);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned flags) {
  static auto fn = real<cudaError_t (*)(cudaStream_t*, unsigned)>("cudaStreamCreateWithFlags");
  if (g_armed.load())
    record("stream_created", "cudaStreamCreateWithFlags called during the candidate's call");
  return fn(s, flags);
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t* s, unsigned flags, int prio) {
  static auto fn =
      real<cudaError_t (*)(cudaStream_t*, unsigned, int)>("cudaStreamCreateWithPriority");
  if (g_armed.load())
    record("stream_created", "cudaStreamCreateWithPriority called during the candidate's call");
  return fn(s, flags, prio);
}

cudaError_t cudaMalloc(void** p, size_t n) {
  static auto fn = real<cudaError_t (*)(void**, size_t)>("cudaMalloc");
  if (g_armed.load()) {
    if (g_allocated.load() + n > g_alloc_limit.load()) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "cudaMalloc of %zu bytes exceeds the candidate limit of %zu",
                    n, g_alloc_limit.load());
      record("alloc_limit", buf);
      return cudaErrorMemoryAllocation;
    }
    cudaError_t e = fn(p, n);
    if (e == cudaSuccess) g_allocated += n;
    return e;
  }
  return fn(p, n);
}

}  // extern "C"
