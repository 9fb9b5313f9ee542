// kevo-runner's request handler: the only code that loads candidate libraries. It talks to the
// checker over fds 3 (shared arena), 4 (requests) and 5 (replies); its stdout goes to stderr so a
// candidate's printf cannot corrupt the protocol. It never sees reference outputs of its own
// candidate: it returns what the candidate wrote (or its summaries), and the checker decides.
// Everything it reports after a candidate was loaded is untrusted: the checker confirms it from
// outside (check/outside_clock.h, check/output_sums.h). Single-threaded.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <kevo/kernel.h>

#include "run/channel.h"
#include "run/protocol.h"
#include "runner/op_trace.h"
#include "runner/slab.h"

namespace kevo::runner {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using ForwardFn = int (*)(const kevo_args*);

constexpr int kArenaFd = 3, kRequestFd = 4, kReplyFd = 5;

// A sticky CUDA error: the context is gone; the runner replies (proto::ErrorReply) and exits.
struct Fatal {
  std::string what;
  cudaError_t cuda = cudaSuccess;  // what CUDA said, sent as a number; cudaSuccess: not CUDA's
};

std::string cuda_err(cudaError_t e);

#define CUDA_OR_FATAL(call)                                                          \
  do {                                                                               \
    cudaError_t e_ = (call);                                                         \
    if (e_ != cudaSuccess) throw ::kevo::runner::Fatal{#call ": " + ::kevo::runner::cuda_err(e_), e_}; \
  } while (0)

int count_threads();
// A Python slot's explanation of a non-zero return code ("" for a native slot or rc 0): the
// candidate process's own word, which only explains a failure the checker sees anyway.
std::string python_error(ForwardFn fn, int rc);
// CPU time of this thread. The runner waits for the device by spinning (cudaDeviceScheduleSpin),
// so a device-wide wait that burns little CPU time was the host being descheduled (a loaded
// machine), not the device being busy with hidden work.
double thread_cpu_ms();
double ms_since(Clock::time_point t0);

struct DevBuf {
  void* ptr = nullptr;
  size_t bytes = 0;
  size_t alloc = 0;  // what cudaMalloc was asked for (>= bytes)
  bool exported = false;  // asked for as one, or its IPC handle given out: never a spare
  bool in_slab = false;   // placed in the slab (ptr - slab base is its offset there)
};

class RunnerService {
 public:
  RunnerService();
  // One request (run/protocol.h) to its reply, or an ErrorReply for a request it cannot serve
  // (an unknown command, a malformed request, a handler's refusal). A Fatal escapes to main.
  json handle(const json& req);

 private:
  // Decodes the request for `h`, runs it, and encodes its reply with "ok": true.
  template <class Req, class Rep>
  json serve(const json& req, Result<Rep> (RunnerService::*h)(const Req&));

  // service.cpp: set-up, loading, buffers
  void init();
  Result<proto::HelloReply> hello(const proto::HelloRequest& req);
  Result<proto::ConfineReply> confine(const proto::ConfineRequest& req);
  Result<proto::LoadReply> load(const proto::LoadRequest& req);
  Result<proto::PythonReply> python(const proto::PythonRequest& req);
  Result<proto::LoadReply> load_python(const proto::LoadRequest& req);
  // The device buffer under `key`, of `bytes` (a new one when the size changes or `fresh`). One
  // another process maps (exported through CUDA IPC) is allocated in whole kIpcAlloc units: the
  // driver packs smaller allocations together, and a process may map such an allocation only once
  // (cudaErrorAlreadyMapped), so the importer could not keep them mapped (open_ipc).
  void* buffer(const std::string& key, size_t bytes, bool fresh, bool exported = false);
  static constexpr size_t kIpcAlloc = size_t(2) << 20;
  void release(const std::string& key);
  void release_prefix(const std::string& prefix);
  // A runner that never loaded a candidate (the trusted one: oracle and baseline) keeps what it
  // releases and hands it out again for the same size, and does not move its buffers for a
  // `fresh` request: moving defeats a candidate's pointer-keyed caches, and no candidate code runs
  // here. Its buffers are poisoned or drawn before every use like any. This keeps the kept trusted
  // runner's ~10 allocations per evaluation (~4 ms each while another runner makes its CUDA
  // context) off every later evaluation. A candidate's runner frees as before.
  void* dev_alloc(size_t alloc);
  void drop(DevBuf& b);
  void free_spares();
  bool keeps_spares() const { return !untrusted_loaded_; }
  // The slab (proto::ConfineRequest::reserve_bytes): one allocation made and exported before the
  // candidate is loaded, where buffer() places everything it can from then on.
  void reserve_slab(uint64_t bytes);
  static kevo_tensor to_tensor(const proto::TensorDesc& d, void* ptr);
  void materialize(const proto::TensorDesc& d, void* p);
  proto::IpcBuffer export_ipc(void* p);
  std::string ipc_handle(void* p);  // the allocation's handle, as hex

  // data_plane.cpp: correctness calls and the comparisons of the oracle's runner
  struct Call {
    int rc = 0;
    double span_ms = 0, wall_ms = 0, after_stream_ms = 0, after_stream_cpu_ms = 0;
    int threads_before = 0, threads_after = 0;
    std::string launch_error;
  };
  Call call_once(ForwardFn fn, const kevo_args& a);
  kevo_args make_args(const std::vector<double>& scalars, const std::vector<int64_t>& dims,
                      std::vector<kevo_tensor>& ins, std::vector<kevo_tensor>& outs, void* ws, size_t wsb);
  Result<proto::RunReply> run(const proto::RunRequest& req);
  Result<proto::CompareReply> compare(const proto::CompareRequest& req);
  Result<proto::MaterializeReply> materialize_for_export(const proto::MaterializeRequest& req);
  Result<proto::CollectReply> collect(const proto::CollectRequest& req);
  Result<proto::ReleaseReply> release_prefixes(const proto::ReleaseRequest& req);
  std::string check_arena(uint64_t arena_size);
  void flush_l2();
  // Another process's buffer through CUDA IPC: its allocation mapped, plus the buffer's offset
  // there. The mapping stays for the next comparisons (the same slab or buffers come back for
  // every draw of a config; opening one costs ~1 ms, a GiB-sized one more, and waits for any CUDA
  // context another process is creating): at most kOpenIpcKept allocations and kOpenIpcBytes beside
  // the one just opened (a mapping keeps memory its process has freed alive), all closed by any
  // release request. Exporters allocate in kIpcAlloc units or slabs; one that does not (a hostile
  // runner's packed buffers) gets cudaErrorAlreadyMapped, and then nothing stays mapped but the
  // allocation asked for. nullptr, with `out_of_bounds` saying why, when offset + bytes does not lie
  // inside the mapped allocation (the exporter lied; nothing is read).
  void* open_ipc(const proto::IpcBuffer& b, size_t bytes, std::string& out_of_bounds);
  void close_ipc();
  static constexpr size_t kOpenIpcKept = 32, kOpenIpcBytes = size_t(8) << 30;
  // The driver calls of the request being served (runner/op_trace.h).
  OpTrace trace_;

  // time_batch.cpp: timed batches (see proto::TimeBatchRequest)
  Result<proto::TimeBatchReply> time_batch(const proto::TimeBatchRequest& req);
  proto::DeviceState device_state();

  // ceilings.cpp: the device's measured ceilings
  Result<proto::BandwidthReply> bandwidth(const proto::BandwidthRequest& req);
  Result<proto::ProbeReply> probe(const proto::ProbeRequest& req);

  kevo::Arena arena_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ev0_ = nullptr, ev1_ = nullptr;
  std::map<std::string, ForwardFn> fns_;
  std::map<std::string, void*> handles_;
  std::map<std::string, DevBuf> bufs_;
  std::vector<cudaEvent_t> events_;  // time_batch's, reused
  struct OpenIpc {
    std::string hex;
    void* ptr = nullptr;
    size_t bytes = 0;  // the mapped allocation's size (the driver's, not the exporter's word)
  };
  std::list<OpenIpc> ipc_open_;  // the last used first
  size_t alloc_limit_ = size_t(8) << 30;
  size_t flush_bytes_ = 0;  // the L2 flush before every call (run and time_batch alike)
  uint64_t shift_ = 0, round_ = 0;
  bool confined_ = false;     // confine ran, and the process gave up root if it had it
  int library_fd_ = -1;       // confine's copy of the candidate's library
  std::string library_path_;  // where confine read it
  bool untrusted_loaded_ = false;
  std::optional<Slab> slab_;
  void* slab_base_ = nullptr;
  std::string slab_handle_;  // its IPC handle, exported before the candidate was loaded
  std::multimap<size_t, void*> spares_;  // released buffers by allocation size (keeps_spares())
  size_t spare_bytes_ = 0;
  static constexpr size_t kSpareBytes = size_t(16) << 30;
};

}  // namespace kevo::runner
