#include "runner/service.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "runner/device_data.h"
#include "runner/interpose.h"
#include "runner/confine.h"
#include "runner/python_host.h"
#include "run/python_codes.h"

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

template <class Req, class Rep>
json RunnerService::serve(const json& req, Result<Rep> (RunnerService::*h)(const Req&)) {
  auto q = proto::decode<Req>(req, (std::string(Req::kCmd) + " request").c_str());
  if (!q) return proto::ErrorReply{.error = q.error().message};
  trace_.reset();
  const auto t0 = Clock::now();
  auto r = (this->*h)(*q);
  if (!r) return proto::ErrorReply{.error = r.error().message};
  json out = *r;
  out["ok"] = true;
  if (OpTrace::enabled()) out["trace"] = trace_.to_json(ms_since(t0));
  return out;
}

json RunnerService::handle(const json& req) {
  auto c = req.is_object() ? req.find("cmd") : req.end();
  const std::string cmd = c != req.end() && c->is_string() ? c->get<std::string>() : "";
  using namespace proto;
  if (cmd == HelloRequest::kCmd) return serve(req, &RunnerService::hello);
  if (cmd == ConfineRequest::kCmd) return serve(req, &RunnerService::confine);
  if (cmd == LoadRequest::kCmd) return serve(req, &RunnerService::load);
  if (cmd == PythonRequest::kCmd) return serve(req, &RunnerService::python);
  if (cmd == RunRequest::kCmd) return serve(req, &RunnerService::run);
  if (cmd == TimeBatchRequest::kCmd) return serve(req, &RunnerService::time_batch);
  if (cmd == CompareRequest::kCmd) return serve(req, &RunnerService::compare);
  if (cmd == MaterializeRequest::kCmd) return serve(req, &RunnerService::materialize_for_export);
  if (cmd == CollectRequest::kCmd) return serve(req, &RunnerService::collect);
  if (cmd == ReleaseRequest::kCmd) return serve(req, &RunnerService::release_prefixes);
  if (cmd == BandwidthRequest::kCmd) return serve(req, &RunnerService::bandwidth);
  if (cmd == ProbeRequest::kCmd) return serve(req, &RunnerService::probe);
  return ErrorReply{.error = "unknown command '" + cmd + "'"};
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

Result<proto::HelloReply> RunnerService::hello(const proto::HelloRequest&) {
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
  proto::HelloReply h;
  h.name = p.name;
  h.uuid = uuid;
  h.cc_major = p.major;
  h.cc_minor = p.minor;
  h.sm_count = p.multiProcessorCount;
  h.l2_bytes = static_cast<uint64_t>(p.l2CacheSize);
  h.smem_per_block_optin = p.sharedMemPerBlockOptin;
  h.total_mem = total_b;
  h.free_mem = free_b;
  h.runtime_version = rt;
  h.driver_version = drv;
  return h;
}

// The candidate's library, read into a sealed memfd: what `load` loads is these bytes, whatever
// later happens to the file, and the confined process needs no access to the compile cache.
static Result<int> library_copy(const std::string& path) {
  int in = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return fail("cannot open the library {}: {}", path, std::strerror(errno));
  int mfd = static_cast<int>(memfd_create("kevo-candidate.so", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  bool ok = mfd >= 0;
  char buf[1 << 16];
  for (ssize_t n; ok && (n = read(in, buf, sizeof buf)) != 0;)
    ok = n > 0 && write(mfd, buf, static_cast<size_t>(n)) == n;
  close(in);
  if (ok) ok = fcntl(mfd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) == 0;
  if (!ok) {
    if (mfd >= 0) close(mfd);
    return fail("cannot copy the library {} into memory: {}", path, std::strerror(errno));
  }
  return mfd;
}

Result<proto::ConfineReply> RunnerService::confine(const proto::ConfineRequest& req) {
  if (!library_path_.empty() || !fns_.empty()) return fail("confine: once per runner, before any load");
  init();
  auto fd = library_copy(req.path);
  if (!fd) return fd.unexpected();
  library_fd_ = *fd;
  library_path_ = req.path;
  proto::ConfineReply rep;
  // The state a candidate could leave behind, before any of its code runs (its static constructors
  // included): the reference every later snapshot is compared with.
  rep.state = device_state();
  // From here on this process is the candidate's: no spares are reused.
  untrusted_loaded_ = true;
  free_spares();
  if (req.reserve_bytes && !slab_) reserve_slab(req.reserve_bytes);
  // KEVO_RUNNER_KEEP_ROOT=1: a machine where root cannot give up its identity and keep the GPU
  // (the verdict says the candidate ran as root).
  const bool keep_root = std::getenv("KEVO_RUNNER_KEEP_ROOT") != nullptr;
  rep.isolation = confine_process({.drop_identity = !keep_root, .identity_only = req.under_tool,
                                   .read_dirs = req.read_dirs});
  guard::seal();
  confined_ = geteuid() != 0 || keep_root;  // root that could not give up its identity loads nothing
  if (!confined_) return fail("the candidate's runner could not give up root: {}", rep.isolation.error);
  return rep;
}

Result<proto::LoadReply> RunnerService::load(const proto::LoadRequest& req) {
  init();
  proto::LoadReply rep;
  // A candidate's library only into a confined process, and only the bytes confine read.
  if (req.untrusted && (!confined_ || req.path != library_path_))
    return fail("an untrusted library is loaded only after confine, of the same path");
  if (req.untrusted || req.slot == "cand") {
    untrusted_loaded_ = true;
    free_spares();
  }
  if (!req.python_entry.empty()) return load_python(req);
  const std::string where = req.untrusted ? "/proc/self/fd/" + std::to_string(library_fd_) : req.path;
  // Threads are counted around dlopen too: one started by a static constructor would otherwise
  // be in every call's "before" count and never show up as left running.
  rep.threads_before = count_threads();
  void* h = dlopen(where.c_str(), RTLD_NOW | RTLD_LOCAL);
  rep.threads_after = count_threads();
  if (!h) return fail("cannot load: {}", dlerror());
  auto fn = reinterpret_cast<ForwardFn>(dlsym(h, "kevo_forward"));
  if (!fn)
    return fail("the candidate does not export kevo_forward (use KEVO_EXPORT int kevo_forward(const kevo_args* a))");
  fns_[req.slot] = fn;
  handles_[req.slot] = h;
  return rep;
}

// The interpreter starts in the runner's own thread while the process is still the runner's:
// torch's imports and its CUDA state happen here, before any candidate code and the sandbox.
Result<proto::PythonReply> RunnerService::python(const proto::PythonRequest& req) {
  if (untrusted_loaded_ || confined_) return fail("python: before confine and before any candidate");
  init();
  proto::PythonReply rep;
  rep.threads_before = count_threads();
  auto h = PythonHost::start({req.libpython, req.sys_path, req.meta, "cuda"});
  rep.threads_after = count_threads();
  if (!h) return h.unexpected();
  rep.versions = (*h)->versions();
  return rep;
}

// A Python slot: the candidate's module (confine's sealed copy) or the problem's own Model.
Result<proto::LoadReply> RunnerService::load_python(const proto::LoadRequest& req) {
  PythonHost* h = PythonHost::get();
  if (!h) return fail("load of a Python slot before the python request");
  proto::LoadReply rep;
  const int fd = req.untrusted ? library_fd_ : -1;
  if (req.python_entry != "Model" && fd < 0) return fail("a Python candidate is loaded only from confine's copy");
  rep.threads_before = count_threads();
  auto st = h->load(fd, req.untrusted ? "solution.py" : req.path, req.python_entry);
  rep.threads_after = count_threads();
  if (!st) return fail("the Python module did not load: {}", st.error().message);
  fns_[req.slot] = &PythonHost::forward;
  return rep;
}

std::string python_error(ForwardFn fn, int rc) {
  if (rc == 0 || fn != &PythonHost::forward) return "";
  const char* name = proto::python_rc_name(rc);
  std::string msg = PythonHost::get()->last_error();
  if (msg.size() > 1500) msg.resize(1500);
  return fmt::format("python runtime code {} ({}): {}", rc, name ? name : "unknown", msg);
}

// Device buffers keyed by name; reused while the size matches so a candidate sees the same
// pointers with new values (defeats caches keyed on input pointers).
void* RunnerService::buffer(const std::string& key, size_t bytes, bool fresh, bool exported) {
  DevBuf& b = bufs_[key];
  if (keeps_spares() && !exported) fresh = false;  // see keeps_spares()
  if (b.ptr && b.bytes == bytes && !fresh) return b.ptr;
  // Shift new allocations so a fresh buffer never lands exactly where the old one was.
  const size_t shift = fresh ? 4096 * (1 + (shift_++ % 7)) : 0;
  if (slab_)  // the old buffer is still held: the new one cannot land where it was
    if (auto at = slab_->take(bytes, shift)) {
      if (b.ptr) drop(b);
      b = DevBuf{static_cast<char*>(slab_base_) + *at, bytes, 0, exported, true};
      return b.ptr;
    }
  void* shim = nullptr;
  const size_t alloc = exported ? (std::max<size_t>(bytes, 1) + kIpcAlloc - 1) / kIpcAlloc * kIpcAlloc
                                : std::max<size_t>(bytes, 256);
  void* p = nullptr;
  {
    OpTrace::Scope t(trace_, OpTrace::kAlloc);
    if (fresh) CUDA_OR_FATAL(cudaMalloc(&shim, shift));
    p = dev_alloc(alloc);
  }
  if (b.ptr || shim) {
    OpTrace::Scope t(trace_, OpTrace::kFree);
    if (b.ptr) drop(b);
    if (shim) CUDA_OR_FATAL(cudaFree(shim));
  }
  b = DevBuf{p, bytes, alloc, exported, false};
  return p;
}

// Made before the candidate's code runs (its load), so where the slab lies and what it holds are
// the runner's choice. No slab when the device cannot spare it: every buffer is then its own
// allocation, as without one.
void RunnerService::reserve_slab(uint64_t bytes) {
  const uint64_t size = (bytes + kIpcAlloc - 1) / kIpcAlloc * kIpcAlloc;
  size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess || size > free_b / 2) return (void)cudaGetLastError();
  void* p = nullptr;
  {
    OpTrace::Scope t(trace_, OpTrace::kAlloc);
    if (cudaMalloc(&p, size) != cudaSuccess) return (void)cudaGetLastError();
  }
  slab_base_ = p;
  slab_handle_ = ipc_handle(p);
  slab_.emplace(size, 256);
}

void* RunnerService::dev_alloc(size_t alloc) {
  if (auto it = spares_.find(alloc); it != spares_.end()) {
    void* p = it->second;
    spare_bytes_ -= alloc;
    spares_.erase(it);
    return p;
  }
  void* p = nullptr;
  if (cudaMalloc(&p, alloc) != cudaSuccess && !spares_.empty()) {
    (void)cudaGetLastError();  // out of memory with spares held: give them back and try again
    free_spares();
    p = nullptr;
  }
  if (!p) CUDA_OR_FATAL(cudaMalloc(&p, alloc));
  return p;
}

void RunnerService::free_spares() {
  for (auto& [n, p] : spares_) cudaFree(p);
  spares_.clear();
  spare_bytes_ = 0;
}

// A buffer this process no longer names: kept as a spare (keeps_spares()), else freed. Exported
// ones are always freed: another process may hold a mapping of them.
void RunnerService::drop(DevBuf& b) {
  if (!b.ptr) return;
  if (b.in_slab) {
    slab_->give(static_cast<uint64_t>(static_cast<char*>(b.ptr) - static_cast<char*>(slab_base_)));
  } else if (keeps_spares() && !b.exported && b.alloc && spare_bytes_ + b.alloc <= kSpareBytes) {
    spares_.emplace(b.alloc, b.ptr);
    spare_bytes_ += b.alloc;
  } else {
    cudaFree(b.ptr);  // as before: a failed free leaves a sticky error the next call reports
  }
  b.ptr = nullptr;
}

void RunnerService::release(const std::string& key) {
  auto it = bufs_.find(key);
  if (it == bufs_.end()) return;
  OpTrace::Scope t(trace_, OpTrace::kFree);
  drop(it->second);
  bufs_.erase(it);
}

void RunnerService::release_prefix(const std::string& prefix) {
  for (auto it = bufs_.begin(); it != bufs_.end();)
    if (it->first.rfind(prefix, 0) == 0) {
      OpTrace::Scope t(trace_, OpTrace::kFree);
      drop(it->second);
      it = bufs_.erase(it);
    } else {
      ++it;
    }
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
void RunnerService::materialize(const proto::TensorDesc& d, void* p) {
  if (d.gen) {
    kevo::guard::Trusted trusted;
    const kevo::DrawSpec ds = d.gen->draw();
    int64_t numel = 1;
    for (auto x : d.shape) numel *= x;
    CUDA_OR_FATAL(kevo::dev::fill(p, d.dtype, numel, ds, stream_));
    CUDA_OR_FATAL(cudaStreamSynchronize(stream_));
    return;
  }
  CUDA_OR_FATAL(cudaMemcpy(p, arena_.data() + d.offset, d.nbytes, cudaMemcpyHostToDevice));
}

// CUDA IPC handles travel as hex: the oracle's runner opens the candidate's buffers to compare
// them where they lie (it only reads them), and the PyTorch bridge opens the trusted runner's
// transfer buffers (materialize_for_export).
std::string RunnerService::ipc_handle(void* p) {
  cudaIpcMemHandle_t h;
  {
    OpTrace::Scope t(trace_, OpTrace::kExport);
    CUDA_OR_FATAL(cudaIpcGetMemHandle(&h, p));
  }
  static const char* hx = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < sizeof h.reserved; ++i) {
    auto c = static_cast<unsigned char>(h.reserved[i]);
    s += hx[c >> 4];
    s += hx[c & 15];
  }
  return s;
}

proto::IpcBuffer RunnerService::export_ipc(void* p) {
  // Another process may keep it mapped: it is freed when released, never kept as a spare (the
  // same allocation handed out again would export the same handle, which that process may still
  // hold open).
  for (auto& [key, b] : bufs_)
    if (b.ptr == p) {
      b.exported = true;
      if (b.in_slab)
        return {slab_handle_, static_cast<uint64_t>(static_cast<char*>(p) - static_cast<char*>(slab_base_))};
    }
  return {ipc_handle(p), 0};
}

}  // namespace kevo::runner
