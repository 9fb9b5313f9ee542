#include <cuda.h>
#include <fmt/format.h>

#include <cmath>

#include "runner/device_data.h"
#include "runner/interpose.h"
#include "runner/service.h"

namespace kevo::runner {
namespace {

unsigned char poison_byte(int poison) { return poison == 0 ? 0xFF : 0x7F; }

}  // namespace

namespace {

// The size of the allocation `p` lies in, as this process's driver maps it (cuMemGetAddressRange,
// reached through the runtime: the runner does not link libcuda itself); 0 when it cannot say.
size_t mapped_bytes(void* p) {
  using Fn = CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr);
  static Fn fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &f, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      f = nullptr;
    (void)cudaGetLastError();
    return reinterpret_cast<Fn>(f);
  }();
  CUdeviceptr base = 0;
  size_t size = 0;
  if (!fn || fn(&base, &size, reinterpret_cast<CUdeviceptr>(p)) != CUDA_SUCCESS) return 0;
  return size - static_cast<size_t>(reinterpret_cast<CUdeviceptr>(p) - base);
}

}  // namespace

void* RunnerService::open_ipc(const proto::IpcBuffer& b, size_t bytes, std::string& out_of_bounds) {
  auto at = [&](OpenIpc& o) -> void* {
    if (b.offset > o.bytes || bytes > o.bytes - b.offset) {
      out_of_bounds = fmt::format("{} bytes at offset {} of an allocation of {}", bytes, b.offset, o.bytes);
      return nullptr;
    }
    return static_cast<char*>(o.ptr) + b.offset;
  };
  for (auto it = ipc_open_.begin(); it != ipc_open_.end(); ++it)
    if (it->hex == b.handle) {
      ipc_open_.splice(ipc_open_.begin(), ipc_open_, it);
      return at(ipc_open_.front());
    }
  cudaIpcMemHandle_t h{};
  if (b.handle.size() != 2 * sizeof h.reserved ||
      b.handle.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
    out_of_bounds = "not an IPC handle";
    return nullptr;
  }
  for (size_t i = 0; i < sizeof h.reserved; ++i)
    h.reserved[i] = static_cast<char>(std::stoi(b.handle.substr(2 * i, 2), nullptr, 16));
  void* ptr = nullptr;
  auto open = [&] {
    OpTrace::Scope t(trace_, OpTrace::kOpen);
    return cudaIpcOpenMemHandle(&ptr, h, cudaIpcMemLazyEnablePeerAccess);
  };
  cudaError_t e = open();
  if (e == cudaErrorAlreadyMapped) {  // its allocation holds a kept buffer too: keep none, map it alone
    (void)cudaGetLastError();
    close_ipc();
    e = open();
  }
  if (e != cudaSuccess) throw Fatal{"cudaIpcOpenMemHandle: " + cuda_err(e), e};
  const size_t mapped = mapped_bytes(ptr);
  if (!mapped) {
    cudaIpcCloseMemHandle(ptr);
    throw Fatal{"cuMemGetAddressRange: the size of a mapped IPC allocation is unknown"};
  }
  size_t kept = 0;
  for (const auto& o : ipc_open_) kept += o.bytes;
  while (!ipc_open_.empty() && (ipc_open_.size() >= kOpenIpcKept || kept > kOpenIpcBytes)) {
    kept -= ipc_open_.back().bytes;
    OpTrace::Scope t(trace_, OpTrace::kClose);
    cudaIpcCloseMemHandle(ipc_open_.back().ptr);
    ipc_open_.pop_back();
  }
  ipc_open_.push_front({b.handle, ptr, mapped});
  return at(ipc_open_.front());
}

void RunnerService::close_ipc() {
  for (const auto& o : ipc_open_) {
    OpTrace::Scope t(trace_, OpTrace::kClose);
    cudaIpcCloseMemHandle(o.ptr);
  }
  ipc_open_.clear();
}

std::string RunnerService::check_arena(uint64_t arena_size) {
  auto st = arena_.map(arena_size);
  if (!st) return st.error().message;
  return {};
}

// The L2 flush every call gets right before it, correctness and timed calls alike (a call cannot
// tell the two apart by the state of its stream): a memset larger than L2, on the call's stream.
void RunnerService::flush_l2() {
  if (!flush_bytes_) return;
  kevo::guard::Trusted trusted;
  void* f = buffer("flush", flush_bytes_, false);
  CUDA_OR_FATAL(cudaMemsetAsync(f, static_cast<int>(round_++ & 0xff), flush_bytes_, stream_));
}

RunnerService::Call RunnerService::call_once(ForwardFn fn, const kevo_args& a) {
  Call c;
  c.threads_before = count_threads();
  auto t0 = Clock::now();
  CUDA_OR_FATAL(cudaEventRecord(ev0_, stream_));
  kevo::guard::arm(stream_, alloc_limit_);
  c.rc = fn(&a);
  kevo::guard::disarm();
  cudaError_t le = cudaGetLastError();
  if (le != cudaSuccess) c.launch_error = cuda_err(le);
  if (c.launch_error.empty()) c.launch_error = python_error(fn, c.rc);
  CUDA_OR_FATAL(cudaEventRecord(ev1_, stream_));
  CUDA_OR_FATAL(cudaStreamSynchronize(stream_));
  auto t_stream = Clock::now();
  double cpu0 = thread_cpu_ms();
  float span = 0;
  CUDA_OR_FATAL(cudaEventElapsedTime(&span, ev0_, ev1_));
  // Device-wide: anything the candidate left running elsewhere finishes before this returns.
  // Time spent here, after our stream is idle, is work outside the given stream (other
  // processes' work is not waited for, so GPU sharing does not show up as hidden work).
  CUDA_OR_FATAL(cudaDeviceSynchronize());
  c.wall_ms = ms_since(t0);
  c.after_stream_ms = ms_since(t_stream);
  c.after_stream_cpu_ms = thread_cpu_ms() - cpu0;
  c.span_ms = span;
  c.threads_after = count_threads();
  return c;
}

kevo_args RunnerService::make_args(const std::vector<double>& scalars, const std::vector<int64_t>& dims,
                                   std::vector<kevo_tensor>& ins, std::vector<kevo_tensor>& outs, void* ws,
                                   size_t wsb) {
  kevo_args a{};
  a.abi_version = KEVO_ABI_VERSION;
  a.inputs = ins.data();
  a.num_inputs = static_cast<int>(ins.size());
  a.outputs = outs.data();
  a.num_outputs = static_cast<int>(outs.size());
  a.scalars = scalars.data();
  a.num_scalars = static_cast<int>(scalars.size());
  a.dims = dims.data();
  a.num_dims = static_cast<int>(dims.size());
  a.workspace = ws;
  a.workspace_bytes = wsb;
  a.stream = stream_;
  return a;
}

Result<proto::RunReply> RunnerService::run(const proto::RunRequest& req) {
  init();
  if (auto e = check_arena(req.arena_size); !e.empty()) return fail("{}", e);
  auto it = fns_.find(req.slot);
  if (it == fns_.end()) return fail("slot not loaded: {}", req.slot);
  const bool fresh = req.placement != 0;
  alloc_limit_ = req.alloc_limit;
  std::string pfx = req.slot + (fresh ? "/moved/" : "/");
  std::vector<kevo_tensor> ins, outs;
  const bool exported = req.keep && req.export_ipc;
  for (const auto& d : req.inputs) {
    void* p = buffer(pfx + "in/" + d.name, d.nbytes, fresh, exported);
    materialize(d, p);
    ins.push_back(to_tensor(d, p));
  }
  for (const auto& d : req.outputs) {
    void* p = buffer(pfx + "out/" + d.name, d.nbytes, fresh, exported);
    CUDA_OR_FATAL(cudaMemset(p, poison_byte(req.poison), d.nbytes));
    outs.push_back(to_tensor(d, p));
  }
  const size_t wsb = req.workspace_bytes;
  void* ws = wsb ? buffer(pfx + "workspace", wsb, fresh) : nullptr;
  if (ws) CUDA_OR_FATAL(cudaMemset(ws, poison_byte(req.poison), wsb));
  CUDA_OR_FATAL(cudaDeviceSynchronize());
  flush_bytes_ = req.flush_bytes.value_or(flush_bytes_);
  flush_l2();
  kevo_args a = make_args(req.scalars, req.dims, ins, outs, ws, wsb);
  Call c = call_once(it->second, a);
  proto::RunReply reply;
  reply.rc = c.rc;
  reply.span_ms = c.span_ms;
  reply.wall_ms = c.wall_ms;
  reply.after_stream_ms = c.after_stream_ms;
  reply.after_stream_cpu_ms = c.after_stream_cpu_ms;
  reply.threads_before = c.threads_before;
  reply.threads_after = c.threads_after;
  reply.launch_error = c.launch_error;
  reply.violations = kevo::guard::take();
  // Device data: outputs stay on the GPU for the oracle's runner to compare (through IPC).
  if (req.keep) {
    if (req.export_ipc) {
      for (auto& t : outs) reply.outputs_ipc.push_back(export_ipc(t.data));
      for (auto& t : ins) reply.inputs_ipc.push_back(export_ipc(t.data));
    }
    return reply;
  }
  for (size_t k = 0; k < req.outputs.size(); ++k)
    CUDA_OR_FATAL(cudaMemcpy(arena_.data() + req.outputs[k].offset, outs[k].data, req.outputs[k].nbytes,
                             cudaMemcpyDeviceToHost));
  for (size_t k = 0; k < req.inputs_after.size() && k < ins.size(); ++k)
    CUDA_OR_FATAL(cudaMemcpy(arena_.data() + req.inputs_after[k].offset, ins[k].data, req.inputs_after[k].nbytes,
                             cudaMemcpyDeviceToHost));
  return reply;
}

Result<proto::CompareReply> RunnerService::compare(const proto::CompareRequest& req) {
  init();
  kevo::guard::Trusted trusted;
  auto result = [](const kevo::dev::CompareResult& c) {
    return proto::CompareCounts{c.count,     c.mismatches, c.unwritten,   c.nonfinite,  c.first_bad,
                                c.first_got, c.first_want, c.max_abs_err, c.max_rel_err};
  };
  auto ref = [&](const std::string& key, size_t bytes) -> void* {
    auto it = bufs_.find(key);
    if (it == bufs_.end() || !it->second.ptr || it->second.bytes != bytes)
      throw Fatal{"compare: no reference buffer '" + key + "' of " + std::to_string(bytes) + " bytes"};
    return it->second.ptr;
  };
  proto::CompareReply rep;
  // Opened one at a time (a new mapping may close older ones); a reference outside its
  // allocation ends the comparison with nothing read there, and the checker believes none of it.
  for (const auto& d : req.outputs) {
    void* got = open_ipc(d.ipc, d.nbytes, rep.out_of_bounds);
    if (!got) return rep;
    const int rdt = d.ref_dtype.value_or(d.dtype);
    kevo::dev::CompareResult c, cr;
    CUDA_OR_FATAL(kevo::dev::compare(got, d.dtype, ref(d.ref, d.ref_nbytes), rdt, d.numel, req.atol, req.rtol,
                                     d.check_poison, stream_, &c));
    proto::CompareOutputResult o{result(c), std::nullopt};
    if (d.runs_ref) {
      CUDA_OR_FATAL(kevo::dev::compare(got, d.dtype, ref(*d.runs_ref, d.nbytes), d.dtype, d.numel, req.atol,
                                       req.rtol, false, stream_, &cr));
      o.runs = result(cr);
    }
    if (d.snapshot) {
      void* snap = buffer(*d.snapshot, d.nbytes, false);
      CUDA_OR_FATAL(cudaMemcpyAsync(snap, got, d.nbytes, cudaMemcpyDeviceToDevice, stream_));
      CUDA_OR_FATAL(cudaStreamSynchronize(stream_));
    }
    rep.outputs.push_back(o);
  }
  for (const auto& d : req.inputs) {
    void* got = open_ipc(d.ipc, d.nbytes, rep.out_of_bounds);
    if (!got) return rep;
    uint64_t diff = 0;
    CUDA_OR_FATAL(kevo::dev::count_differing_bytes(got, ref(d.ref, d.nbytes), d.nbytes, stream_, &diff));
    rep.inputs.push_back({diff});
  }
  return rep;
}

Result<proto::MaterializeReply> RunnerService::materialize_for_export(const proto::MaterializeRequest& req) {
  init();
  kevo::guard::Trusted trusted;
  release_prefix("xfer/");
  proto::MaterializeReply rep;
  for (const auto& d : req.inputs) {
    void* p = buffer("base/in/" + d.name, d.nbytes, false);
    materialize(d, p);
    void* x = buffer("xfer/in/" + d.name, d.nbytes, false);
    CUDA_OR_FATAL(cudaMemcpy(x, p, d.nbytes, cudaMemcpyDeviceToDevice));
    rep.inputs_ipc.push_back(export_ipc(x).handle);  // the trusted runner has no slab: offset 0
  }
  for (const auto& d : req.outputs) {
    void* x = buffer("xfer/out/" + d.name, d.nbytes, false);
    CUDA_OR_FATAL(cudaMemset(x, 0xFF, d.nbytes));
    rep.outputs_ipc.push_back(export_ipc(x).handle);
  }
  CUDA_OR_FATAL(cudaDeviceSynchronize());
  return rep;
}

Result<proto::CollectReply> RunnerService::collect(const proto::CollectRequest& req) {
  init();
  for (const auto& d : req.outputs) {
    auto it = bufs_.find("xfer/out/" + d.name);
    if (it == bufs_.end() || it->second.bytes != d.nbytes) {
      release_prefix("xfer/");
      return fail("collect: no exported output '{}' of {} bytes", d.name, d.nbytes);
    }
    CUDA_OR_FATAL(cudaMemcpy(buffer("base/out/" + d.name, d.nbytes, false), it->second.ptr, d.nbytes,
                             cudaMemcpyDeviceToDevice));
  }
  CUDA_OR_FATAL(cudaDeviceSynchronize());
  release_prefix("xfer/");
  return proto::CollectReply{};
}

Result<proto::ReleaseReply> RunnerService::release_prefixes(const proto::ReleaseRequest& req) {
  close_ipc();  // the other process's buffers, too, may be freed now: keep none of them mapped
  for (const auto& p : req.prefixes) release_prefix(p);
  return proto::ReleaseReply{};
}

}  // namespace kevo::runner
