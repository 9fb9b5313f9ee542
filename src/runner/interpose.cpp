#include "runner/interpose.h"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string_view>
#include <utility>
#include <vector>

namespace kevo::guard {
namespace {

std::atomic<bool> g_armed{false};
std::atomic<bool> g_ever_armed{false};
std::atomic<bool> g_sealed{false};  // candidate code may run from here on (seal())
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

// The runner's own executable code: a call from there is the runner's (its flushes, poison, draws
// and copies), not the candidate's. Found once, before any candidate code runs (seal()).
std::vector<std::pair<uintptr_t, uintptr_t>> g_runner_code;

int collect_main_program(dl_phdr_info* info, size_t, void*) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
      g_runner_code.emplace_back(info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  return 1;  // the first object is the main program: stop there
}

bool from_runner(const void* caller) {
  const auto a = reinterpret_cast<uintptr_t>(caller);
  for (const auto& [lo, hi] : g_runner_code)
    if (a >= lo && a < hi) return true;
  return false;
}

// Work queued other than by a launch (a memset, a copy, an allocation on a stream, a graph): the
// same rule as launches, for the candidate's calls.
void check_enqueue(cudaStream_t s, const char* via, const void* caller) {
  if (!from_runner(caller)) check_launch(s, via);
}

// Host code the driver would run later on a thread of its own (a stream callback, a graph's host
// node): the candidate's code outside its call, on a thread that predates its confinement.
bool refuse_host_code(const char* via, const void* caller) {
  if (!g_sealed.load() || t_trusted > 0 || from_runner(caller)) return false;
  record("host_callback", std::string(via) + ": host code run by the driver later is not allowed");
  return true;
}

// Driver entry points a kernel may need (tensor maps for TMA, attributes, occupancy, errors);
// every other one (launches, copies, allocations, callbacks, streams) would bypass the guards.
bool driver_entry_allowed(const char* name) {
  static constexpr const char* kAllowed[] = {"cuTensorMapEncode", "cuTensorMapReplace", "cuGetErrorName",
                                             "cuGetErrorString", "cuDeviceGet",  "cuDriverGetVersion",
                                             "cuFuncGetAttribute", "cuFuncSetAttribute", "cuFuncSetCacheConfig",
                                             "cuKernelGetAttribute", "cuKernelSetAttribute", "cuKernelGetFunction",
                                             "cuOccupancy",  "cuCtxGetDevice"};
  if (!name) return false;
  const std::string_view n(name);
  for (const char* a : kAllowed)
    if (n.rfind(a, 0) == 0) return true;
  return false;
}

bool refuse_driver_entry(const char* name, const void* caller) {
  if (!g_sealed.load() || t_trusted > 0 || from_runner(caller) || driver_entry_allowed(name)) return false;
  record("driver_entry", std::string("cudaGetDriverEntryPoint(") + (name ? name : "null") +
                             "): driver entry points that queue work, copy, allocate or call back are not allowed");
  return true;
}

// An allocation the candidate makes while armed counts against its cap.
bool over_cap(size_t n, const char* via, const void* caller) {
  if (!g_armed.load() || from_runner(caller)) return false;
  if (g_allocated.load() + n <= g_alloc_limit.load()) {
    g_allocated += n;
    return false;
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s of %zu bytes exceeds the candidate limit of %zu", via, n, g_alloc_limit.load());
  record("alloc_limit", buf);
  return true;
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

void seal() {
  if (g_runner_code.empty()) dl_iterate_phdr(collect_main_program, nullptr);
  g_sealed = true;
}

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

// Where an interposed entry point was called from (runner code or the candidate's).
#define KEVO_CALLER __builtin_return_address(0)

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
  if (over_cap(n, "cudaMalloc", KEVO_CALLER)) return cudaErrorMemoryAllocation;
  return fn(p, n);
}

cudaError_t cudaMallocManaged(void** p, size_t n, unsigned flags) {
  static auto fn = real<cudaError_t (*)(void**, size_t, unsigned)>("cudaMallocManaged");
  if (over_cap(n, "cudaMallocManaged", KEVO_CALLER)) return cudaErrorMemoryAllocation;
  return fn(p, n, flags);
}

cudaError_t cudaMallocPitch(void** p, size_t* pitch, size_t w, size_t h) {
  static auto fn = real<cudaError_t (*)(void**, size_t*, size_t, size_t)>("cudaMallocPitch");
  if (over_cap(w * h, "cudaMallocPitch", KEVO_CALLER)) return cudaErrorMemoryAllocation;
  return fn(p, pitch, w, h);
}

cudaError_t cudaMallocAsync(void** p, size_t n, cudaStream_t s) {
  static auto fn = real<cudaError_t (*)(void**, size_t, cudaStream_t)>("cudaMallocAsync");
  check_enqueue(s, "cudaMallocAsync", KEVO_CALLER);
  if (over_cap(n, "cudaMallocAsync", KEVO_CALLER)) return cudaErrorMemoryAllocation;
  return fn(p, n, s);
}

cudaError_t cudaMallocFromPoolAsync(void** p, size_t n, cudaMemPool_t pool, cudaStream_t s) {
  static auto fn = real<cudaError_t (*)(void**, size_t, cudaMemPool_t, cudaStream_t)>("cudaMallocFromPoolAsync");
  check_enqueue(s, "cudaMallocFromPoolAsync", KEVO_CALLER);
  if (over_cap(n, "cudaMallocFromPoolAsync", KEVO_CALLER)) return cudaErrorMemoryAllocation;
  return fn(p, n, pool, s);
}

cudaError_t cudaFreeAsync(void* p, cudaStream_t s) {
  static auto fn = real<cudaError_t (*)(void*, cudaStream_t)>("cudaFreeAsync");
  check_enqueue(s, "cudaFreeAsync", KEVO_CALLER);
  return fn(p, s);
}

cudaError_t cudaMemsetAsync(void* p, int v, size_t n, cudaStream_t s) {
  static auto fn = real<cudaError_t (*)(void*, int, size_t, cudaStream_t)>("cudaMemsetAsync");
  check_enqueue(s, "cudaMemsetAsync", KEVO_CALLER);
  return fn(p, v, n, s);
}

cudaError_t cudaMemset2DAsync(void* p, size_t pitch, int v, size_t w, size_t h, cudaStream_t s) {
  static auto fn = real<cudaError_t (*)(void*, size_t, int, size_t, size_t, cudaStream_t)>("cudaMemset2DAsync");
  check_enqueue(s, "cudaMemset2DAsync", KEVO_CALLER);
  return fn(p, pitch, v, w, h, s);
}

cudaError_t cudaMemcpyAsync(void* d, const void* src, size_t n, cudaMemcpyKind k, cudaStream_t s) {
  static auto fn = real<cudaError_t (*)(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t)>("cudaMemcpyAsync");
  check_enqueue(s, "cudaMemcpyAsync", KEVO_CALLER);
  return fn(d, src, n, k, s);
}

cudaError_t cudaMemcpy2DAsync(void* d, size_t dp, const void* src, size_t sp, size_t w, size_t h, cudaMemcpyKind k,
                              cudaStream_t s) {
  static auto fn = real<cudaError_t (*)(void*, size_t, const void*, size_t, size_t, size_t, cudaMemcpyKind,
                                        cudaStream_t)>("cudaMemcpy2DAsync");
  check_enqueue(s, "cudaMemcpy2DAsync", KEVO_CALLER);
  return fn(d, dp, src, sp, w, h, k, s);
}

cudaError_t cudaMemcpyToSymbolAsync(const void* sym, const void* src, size_t n, size_t off, cudaMemcpyKind k,
                                    cudaStream_t s) {
  static auto fn = real<cudaError_t (*)(const void*, const void*, size_t, size_t, cudaMemcpyKind, cudaStream_t)>(
      "cudaMemcpyToSymbolAsync");
  check_enqueue(s, "cudaMemcpyToSymbolAsync", KEVO_CALLER);
  return fn(sym, src, n, off, k, s);
}

cudaError_t cudaMemcpyPeerAsync(void* d, int dd, const void* src, int sd, size_t n, cudaStream_t s) {
  static auto fn = real<cudaError_t (*)(void*, int, const void*, int, size_t, cudaStream_t)>("cudaMemcpyPeerAsync");
  check_enqueue(s, "cudaMemcpyPeerAsync", KEVO_CALLER);
  return fn(d, dd, src, sd, n, s);
}

cudaError_t cudaMemPrefetchAsync(const void* p, size_t n, cudaMemLocation loc, unsigned flags, cudaStream_t s) {
  static auto fn = real<cudaError_t (*)(const void*, size_t, cudaMemLocation, unsigned, cudaStream_t)>(
      "cudaMemPrefetchAsync");
  check_enqueue(s, "cudaMemPrefetchAsync", KEVO_CALLER);
  return fn(p, n, loc, flags, s);
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t g, cudaStream_t s) {
  static auto fn = real<cudaError_t (*)(cudaGraphExec_t, cudaStream_t)>("cudaGraphLaunch");
  check_enqueue(s, "cudaGraphLaunch", KEVO_CALLER);
  return fn(g, s);
}

cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t f, void* data) {
  static auto fn = real<cudaError_t (*)(cudaStream_t, cudaHostFn_t, void*)>("cudaLaunchHostFunc");
  if (refuse_host_code("cudaLaunchHostFunc", KEVO_CALLER)) return cudaErrorNotPermitted;
  return fn(s, f, data);
}

cudaError_t cudaStreamAddCallback(cudaStream_t s, cudaStreamCallback_t cb, void* data, unsigned flags) {
  static auto fn = real<cudaError_t (*)(cudaStream_t, cudaStreamCallback_t, void*, unsigned)>("cudaStreamAddCallback");
  if (refuse_host_code("cudaStreamAddCallback", KEVO_CALLER)) return cudaErrorNotPermitted;
  return fn(s, cb, data, flags);
}

cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps, size_t nd,
                                 const cudaHostNodeParams* p) {
  static auto fn = real<cudaError_t (*)(cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*, size_t,
                                        const cudaHostNodeParams*)>("cudaGraphAddHostNode");
  if (refuse_host_code("cudaGraphAddHostNode", KEVO_CALLER)) return cudaErrorNotPermitted;
  return fn(n, g, deps, nd, p);
}

cudaError_t cudaGetDriverEntryPoint(const char* sym, void** f, unsigned long long flags,
                                    cudaDriverEntryPointQueryResult* st) {
  static auto fn = real<cudaError_t (*)(const char*, void**, unsigned long long, cudaDriverEntryPointQueryResult*)>(
      "cudaGetDriverEntryPoint");
  if (refuse_driver_entry(sym, KEVO_CALLER)) {
    if (f) *f = nullptr;
    return cudaErrorNotPermitted;
  }
  return fn(sym, f, flags, st);
}

cudaError_t cudaGetDriverEntryPointByVersion(const char* sym, void** f, unsigned ver, unsigned long long flags,
                                             cudaDriverEntryPointQueryResult* st) {
  static auto fn = real<cudaError_t (*)(const char*, void**, unsigned, unsigned long long,
                                        cudaDriverEntryPointQueryResult*)>("cudaGetDriverEntryPointByVersion");
  if (refuse_driver_entry(sym, KEVO_CALLER)) {
    if (f) *f = nullptr;
    return cudaErrorNotPermitted;
  }
  return fn(sym, f, ver, flags, st);
}

// The per-thread default stream's twins (a candidate that defines CUDA_API_PER_THREAD_DEFAULT_STREAM
// calls these instead): the same guards, the null stream read as the per-thread one.
#define KEVO_PTS(s) ((s) == nullptr ? cudaStreamPerThread : (s))

cudaError_t cudaMemsetAsync_ptsz(void* p, int v, size_t n, cudaStream_t s) {
  static auto fn = real<cudaError_t (*)(void*, int, size_t, cudaStream_t)>("cudaMemsetAsync_ptsz");
  check_enqueue(KEVO_PTS(s), "cudaMemsetAsync", KEVO_CALLER);
  return fn(p, v, n, s);
}

cudaError_t cudaMemcpyAsync_ptsz(void* d, const void* src, size_t n, cudaMemcpyKind k, cudaStream_t s) {
  static auto fn =
      real<cudaError_t (*)(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t)>("cudaMemcpyAsync_ptsz");
  check_enqueue(KEVO_PTS(s), "cudaMemcpyAsync", KEVO_CALLER);
  return fn(d, src, n, k, s);
}

cudaError_t cudaMallocAsync_ptsz(void** p, size_t n, cudaStream_t s) {
  static auto fn = real<cudaError_t (*)(void**, size_t, cudaStream_t)>("cudaMallocAsync_ptsz");
  check_enqueue(KEVO_PTS(s), "cudaMallocAsync", KEVO_CALLER);
  if (over_cap(n, "cudaMallocAsync", KEVO_CALLER)) return cudaErrorMemoryAllocation;
  return fn(p, n, s);
}

cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t g, cudaStream_t s) {
  static auto fn = real<cudaError_t (*)(cudaGraphExec_t, cudaStream_t)>("cudaGraphLaunch_ptsz");
  check_enqueue(KEVO_PTS(s), "cudaGraphLaunch", KEVO_CALLER);
  return fn(g, s);
}

cudaError_t cudaLaunchKernel_ptsz(const void* f, dim3 g, dim3 b, void** args, size_t shm, cudaStream_t s) {
  static auto fn =
      real<cudaError_t (*)(const void*, dim3, dim3, void**, size_t, cudaStream_t)>("cudaLaunchKernel_ptsz");
  check_launch(KEVO_PTS(s), "cudaLaunchKernel");
  return fn(f, g, b, args, shm, s);
}

cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* cfg, const void* f, void** args) {
  static auto fn = real<cudaError_t (*)(const cudaLaunchConfig_t*, const void*, void**)>("cudaLaunchKernelExC_ptsz");
  check_launch(KEVO_PTS(cfg ? cfg->stream : nullptr), "cudaLaunchKernelEx");
  return fn(cfg, f, args);
}

cudaError_t cudaLaunchCooperativeKernel_ptsz(const void* f, dim3 g, dim3 b, void** args, size_t shm, cudaStream_t s) {
  static auto fn =
      real<cudaError_t (*)(const void*, dim3, dim3, void**, size_t, cudaStream_t)>("cudaLaunchCooperativeKernel_ptsz");
  check_launch(KEVO_PTS(s), "cudaLaunchCooperativeKernel");
  return fn(f, g, b, args, shm, s);
}

cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t s, cudaHostFn_t f, void* data) {
  static auto fn = real<cudaError_t (*)(cudaStream_t, cudaHostFn_t, void*)>("cudaLaunchHostFunc_ptsz");
  if (refuse_host_code("cudaLaunchHostFunc", KEVO_CALLER)) return cudaErrorNotPermitted;
  return fn(s, f, data);
}

cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t s, cudaStreamCallback_t cb, void* data, unsigned flags) {
  static auto fn =
      real<cudaError_t (*)(cudaStream_t, cudaStreamCallback_t, void*, unsigned)>("cudaStreamAddCallback_ptsz");
  if (refuse_host_code("cudaStreamAddCallback", KEVO_CALLER)) return cudaErrorNotPermitted;
  return fn(s, cb, data, flags);
}

cudaError_t cudaGetDriverEntryPoint_ptsz(const char* sym, void** f, unsigned long long flags,
                                         cudaDriverEntryPointQueryResult* st) {
  static auto fn = real<cudaError_t (*)(const char*, void**, unsigned long long, cudaDriverEntryPointQueryResult*)>(
      "cudaGetDriverEntryPoint_ptsz");
  if (refuse_driver_entry(sym, KEVO_CALLER)) {
    if (f) *f = nullptr;
    return cudaErrorNotPermitted;
  }
  return fn(sym, f, flags, st);
}

}  // extern "C"
