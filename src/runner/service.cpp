#include "runner/service.h"

#include <dirent.h>
#include <dlfcn.h>
#include <time.h>

#include <algorithm>
#include <cstdio>

#include "runner/device_data.h"
#include "runner/interpose.h"
#include "runner/seccomp.h"

namespace kevo::runner {

std::string cuda_err(cudaError_t e) { return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e); }

int count_threads() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++n;
    closedir(d);
  }
  return n;
}

double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

RunnerService::RunnerService() : arena_(kevo::Arena::adopt(kArenaFd)) {}

json RunnerService::handle(const json& req) {
  std::string cmd = req.value("cmd", "");
  if (cmd == "hello") return hello();
  if (cmd == "load") return load(req);
  if (cmd == "run") return run(req);
  if (cmd == "time_batch") return time_batch(req);
  if (cmd == "compare") return compare(req);
  if (cmd == "materialize") return materialize_for_export(req);
  if (cmd == "collect") return collect(req);
  if (cmd == "release") return release_prefixes(req);
  if (cmd == "bandwidth") return bandwidth(req);
  if (cmd == "probe") return probe(req);
  return {{"ok", false}, {"error", "unknown command '" + cmd + "'"}};
}

void RunnerService::init() {
  if (stream_) return;
  CUDA_OR_FATAL(cudaSetDeviceFlags(cudaDeviceScheduleSpin));  // see thread_cpu_ms
  CUDA_OR_FATAL(cudaFree(nullptr));
  // Non-blocking: work a candidate puts on the legacy default stream does not serialize with
  // ours, so it shows up in the host-clock cross-check instead of being silently absorbed.
  CUDA_OR_FATAL(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  CUDA_OR_FATAL(cudaEventCreate(&ev0_));
  CUDA_OR_FATAL(cudaEventCreate(&ev1_));
}

json RunnerService::hello() {
  init();
  cudaDeviceProp p{};
  CUDA_OR_FATAL(cudaGetDeviceProperties(&p, 0));
  int rt = 0, drv = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  size_t free_b = 0, total_b = 0;
  cudaMemGetInfo(&free_b, &total_b);
  char uuid[64];
  const auto* u = reinterpret_cast<const uint8_t*>(p.uuid.bytes);
  std::snprintf(uuid, sizeof uuid, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  return {{"ok", true},
          {"name", p.name},
          {"uuid", uuid},
          {"cc_major", p.major},
          {"cc_minor", p.minor},
          {"sm_count", p.multiProcessorCount},
          {"l2_bytes", p.l2CacheSize},
          {"smem_per_block_optin", p.sharedMemPerBlockOptin},
          {"total_mem", total_b},
          {"free_mem", free_b},
          {"runtime_version", rt},
          {"driver_version", drv}};
}

json RunnerService::load(const json& req) {
  init();
  std::string slot = req.at("slot"), path = req.at("path");
  // A candidate's library gets a process that can no longer start processes, trace or write
  // other processes, or make memory executable (runner/seccomp.h): installed before its static
  // constructors run, and never lifted.
  json sandbox = nullptr, state = nullptr;
  // The state a candidate could leave behind, before any of its code runs (its static constructors
  // included): the reference every later snapshot is compared with.
  if (req.value("untrusted", false)) state = device_state();
  if (req.value("untrusted", false) && !sandboxed_) {
    auto st = install_candidate_filter();
    sandbox = st.installed ? json(true) : json(st.error);
    sandboxed_ = st.installed;
  }
  // Threads are counted around dlopen too: one started by a static constructor would otherwise
  // be in every call's "before" count and never show up as left running.
  const int threads_before = count_threads();
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  const int threads_after = count_threads();
  if (!h) return {{"ok", false}, {"error", std::string("cannot load: ") + dlerror()}};
  auto fn = reinterpret_cast<ForwardFn>(dlsym(h, "kevo_forward"));
  if (!fn)
    return {{"ok", false},
            {"error", "the candidate does not export kevo_forward (use KEVO_EXPORT int "
                      "kevo_forward(const kevo_args* a))"}};
  fns_[slot] = fn;
  handles_[slot] = h;
  return {{"ok", true}, {"threads_before", threads_before}, {"threads_after", threads_after}, {"sandbox", sandbox},
          {"state", state}};
}

// Device buffers keyed by name; reused while the size matches so a candidate sees the same
// pointers with new values (defeats caches keyed on input pointers).
void* RunnerService::buffer(const std::string& key, size_t bytes, bool fresh) {
  DevBuf& b = bufs_[key];
  if (b.ptr && b.bytes == bytes && !fresh) return b.ptr;
  void* p = nullptr;
  // Shift new allocations so a fresh buffer never lands exactly where the old one was.
  void* shim = nullptr;
  if (fresh) CUDA_OR_FATAL(cudaMalloc(&shim, 4096 * (1 + (shift_++ % 7))));
  CUDA_OR_FATAL(cudaMalloc(&p, std::max<size_t>(bytes, 256)));
  if (b.ptr) CUDA_OR_FATAL(cudaFree(b.ptr));
  if (shim) CUDA_OR_FATAL(cudaFree(shim));
  b.ptr = p;
  b.bytes = bytes;
  return p;
}

void RunnerService::release(const std::string& key) {
  auto it = bufs_.find(key);
  if (it == bufs_.end()) return;
  cudaFree(it->second.ptr);
  bufs_.erase(it);
}

void RunnerService::release_prefix(const std::string& prefix) {
  for (auto it = bufs_.begin(); it != bufs_.end();)
    if (it->first.rfind(prefix, 0) == 0) {
      cudaFree(it->second.ptr);
      it = bufs_.erase(it);
    } else {
      ++it;
    }
}

kevo_tensor RunnerService::to_tensor(const json& d, void* ptr) {
  return to_tensor(d.get<proto::TensorDesc>(), ptr);
}

kevo_tensor RunnerService::to_tensor(const proto::TensorDesc& d, void* ptr) {
  kevo_tensor t{};
  t.data = ptr;
  t.dtype = static_cast<kevo_dtype>(d.dtype);
  t.ndim = static_cast<int>(d.shape.size());
  int64_t stride = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    t.shape[i] = d.shape[static_cast<size_t>(i)];
    t.stride[i] = stride;
    stride *= t.shape[i];
  }
  return t;
}

// An input's contents: drawn on the GPU from its "gen" spec (task/draw.h), or copied from the
// arena where the checker put it.
void RunnerService::materialize(const json& d, void* p) {
  size_t n = d.at("nbytes");
  if (d.contains("gen")) {
    kevo::guard::Trusted trusted;
    auto g = d["gen"].get<proto::Gen>();
    const kevo::DrawSpec ds = g.draw();
    int64_t numel = 1;
    for (const auto& x : d.at("shape")) numel *= x.get<int64_t>();
    CUDA_OR_FATAL(kevo::dev::fill(p, d.at("dtype").get<int>(), numel, ds, stream_));
    CUDA_OR_FATAL(cudaStreamSynchronize(stream_));
    return;
  }
  CUDA_OR_FATAL(cudaMemcpy(p, arena_.data() + d.at("offset").get<size_t>(), n, cudaMemcpyHostToDevice));
}

// CUDA IPC handles travel as hex: the oracle's runner opens the candidate's buffers to compare
// them where they lie (it only reads them; nothing of the oracle's is ever exported).
std::string RunnerService::export_ipc(void* p) {
  cudaIpcMemHandle_t h;
  CUDA_OR_FATAL(cudaIpcGetMemHandle(&h, p));
  static const char* hx = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < sizeof h.reserved; ++i) {
    auto c = static_cast<unsigned char>(h.reserved[i]);
    s += hx[c >> 4];
    s += hx[c & 15];
  }
  return s;
}

}  // namespace kevo::runner
