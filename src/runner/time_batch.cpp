// Timed batches (proto::TimeBatchRequest). Every call of a batch looks like every other call a
// candidate ever gets, checked or timed: fresh input values drawn into the same buffers, outputs
// poisoned, the L2 flushed on its stream right before it. After each call trusted kernels
// summarise its outputs, so every timed call is checked against the baseline's (same call
// numbers, same inputs) and a call cannot know whether it counts.
#include <algorithm>
#include <cstring>

#include "runner/device_data.h"
#include "runner/interpose.h"
#include "runner/service.h"

namespace kevo::runner {
namespace {

void put(proto::DeviceState& s, const char* name, uint64_t v) { s.values.emplace_back(name, v); }

uint64_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

}  // namespace

// What a candidate could change to speed up later calls (its own, or anything timed after it in
// this process): device limits (the persisting-L2 set-aside), cache configuration, and the
// attributes of the stream kevo owns (an access-policy window keeps lines in L2 across the flush).
proto::DeviceState RunnerService::device_state() {
  kevo::guard::Trusted trusted;
  proto::DeviceState s;
  // Only what changes how fast later work runs: the stack size, printf and malloc heap limits are
  // resources the driver itself raises for kernels that need them.
  const std::pair<const char*, cudaLimit> limits[] = {
      {"limit_l2_fetch_granularity", cudaLimitMaxL2FetchGranularity},
      {"limit_persisting_l2", cudaLimitPersistingL2CacheSize}};
  for (auto [name, l] : limits) {
    size_t v = 0;
    put(s, name, cudaDeviceGetLimit(&v, l) == cudaSuccess ? v : ~uint64_t(0));
  }
  cudaFuncCache cc{};
  put(s, "cache_config", cudaDeviceGetCacheConfig(&cc) == cudaSuccess ? static_cast<uint64_t>(cc) : ~uint64_t(0));
  cudaStreamAttrValue w{};
  if (cudaStreamGetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &w) == cudaSuccess) {
    put(s, "stream_window_base", reinterpret_cast<uint64_t>(w.accessPolicyWindow.base_ptr));
    put(s, "stream_window_bytes", w.accessPolicyWindow.num_bytes);
    put(s, "stream_window_hit_ratio_bits", bits_of(w.accessPolicyWindow.hitRatio));
    put(s, "stream_window_hit_prop", static_cast<uint64_t>(w.accessPolicyWindow.hitProp));
    put(s, "stream_window_miss_prop", static_cast<uint64_t>(w.accessPolicyWindow.missProp));
  }
  cudaStreamAttrValue sp{};
  if (cudaStreamGetAttribute(stream_, cudaStreamAttributeSynchronizationPolicy, &sp) == cudaSuccess)
    put(s, "stream_sync_policy", static_cast<uint64_t>(sp.syncPolicy));
  int prio = 0;
  unsigned flags = 0;
  if (cudaStreamGetPriority(stream_, &prio) == cudaSuccess) put(s, "stream_priority", static_cast<uint64_t>(prio));
  if (cudaStreamGetFlags(stream_, &flags) == cudaSuccess) put(s, "stream_flags", flags);
  (void)cudaGetLastError();  // a query this device does not support is not the candidate's error
  return s;
}

Result<proto::TimeBatchReply> RunnerService::time_batch(const proto::TimeBatchRequest& req) {
  init();
  ForwardFn fn = nullptr;
  if (!req.slot.empty()) {
    auto it = fns_.find(req.slot);
    if (it == fns_.end()) return fail("slot not loaded: {}", req.slot);
    fn = it->second;
  }
  if (req.calls < 1 || req.calls > 100000) return fail("time_batch: calls out of range");
  for (const auto& d : req.inputs)
    if (!d.gen) return fail("time_batch: input '{}' has no draw (gen)", d.name);
  alloc_limit_ = req.alloc_limit;
  flush_bytes_ = req.flush_bytes;
  const std::string pfx = "tb/" + (req.slot.empty() ? std::string("none") : req.slot) + "/";
  std::vector<kevo_tensor> ins, outs;
  for (const auto& d : req.inputs) ins.push_back(to_tensor(d, buffer(pfx + "in/" + d.name, d.nbytes, false)));
  for (const auto& d : req.outputs)
    outs.push_back(to_tensor(d, buffer(pfx + "out/" + d.name, d.nbytes, false, !req.slot.empty())));
  void* ws = req.workspace_bytes ? buffer(pfx + "workspace", req.workspace_bytes, false) : nullptr;
  const size_t nsums = static_cast<size_t>(req.calls) * outs.size();
  // One fixed-size block for every batch: a buffer resized between batches of k and 2k calls would
  // cost a cudaFree/cudaMalloc (and their implicit synchronization) inside the measured span.
  constexpr size_t kSumsBytes = size_t(4) << 20;
  if (nsums * sizeof(dev::OutputSums) > kSumsBytes) return fail("time_batch: too many calls x outputs");
  auto* sums = static_cast<dev::OutputSums*>(buffer("tb/sums", kSumsBytes, false));
  // Events for at least kReserveCalls calls at once: creating them costs the checker's clock, so
  // the first batch of a new size would otherwise pay for them inside its measured wall.
  constexpr size_t kReserveCalls = 64;
  while (events_.size() < 4 * std::max(static_cast<size_t>(req.calls), kReserveCalls) + 2) {
    cudaEvent_t e;
    CUDA_OR_FATAL(cudaEventCreate(&e));
    events_.push_back(e);
  }
  proto::TimeBatchReply rep;
  rep.ok = true;
  if (req.state) rep.state_before = device_state();
  rep.threads_before = count_threads();
  CUDA_OR_FATAL(cudaMemsetAsync(sums, 0, std::max<size_t>(1, nsums) * sizeof(dev::OutputSums), stream_));
  CUDA_OR_FATAL(cudaDeviceSynchronize());
  kevo_args a = make_args(req.scalars, req.dims, ins, outs, ws, req.workspace_bytes);
  CUDA_OR_FATAL(cudaEventRecord(events_[0], stream_));
  for (int i = 0; i < req.calls; ++i) {
    cudaEvent_t* ev = &events_[2 + 4 * static_cast<size_t>(i)];
    {
      kevo::guard::Trusted trusted;
      const uint64_t call = req.first_call + static_cast<uint64_t>(i);
      for (size_t k = 0; k < ins.size(); ++k) {
        const auto& g = *req.inputs[k].gen;
        kevo::DrawSpec ds = g.draw();
        ds.base = draw_call_base(g.base, call), ds.timed = true;
        CUDA_OR_FATAL(dev::fill(ins[k].data, req.inputs[k].dtype, req.inputs[k].numel, ds, stream_));
      }
      for (size_t k = 0; k < outs.size(); ++k) CUDA_OR_FATAL(cudaMemsetAsync(outs[k].data, 0xFF, req.outputs[k].nbytes, stream_));
      if (ws) CUDA_OR_FATAL(cudaMemsetAsync(ws, 0xFF, req.workspace_bytes, stream_));
      CUDA_OR_FATAL(cudaEventRecord(ev[0], stream_));
      flush_l2();
      CUDA_OR_FATAL(cudaEventRecord(ev[1], stream_));
    }
    CUDA_OR_FATAL(cudaEventRecord(ev[2], stream_));
    int rc = 0;
    if (fn) {
      kevo::guard::arm(stream_, alloc_limit_);
      rc = fn(&a);
      kevo::guard::disarm();
      if (cudaError_t le = cudaGetLastError(); le != cudaSuccess && rep.launch_error.empty()) rep.launch_error = cuda_err(le);
      if (rep.launch_error.empty()) rep.launch_error = python_error(fn, rc);
    }
    CUDA_OR_FATAL(cudaEventRecord(ev[3], stream_));
    rep.rc.push_back(rc);
    kevo::guard::Trusted trusted;
    for (size_t k = 0; k < outs.size(); ++k)
      CUDA_OR_FATAL(dev::sums(outs[k].data, req.outputs[k].dtype, req.outputs[k].numel, req.sums_key,
                              sums + static_cast<size_t>(i) * outs.size() + k, stream_));
  }
  CUDA_OR_FATAL(cudaEventRecord(events_[1], stream_));
  CUDA_OR_FATAL(cudaStreamSynchronize(stream_));
  auto t_stream = Clock::now();
  double cpu0 = thread_cpu_ms();
  // Device-wide: work the candidate left running elsewhere ends before the reply (and shows here).
  CUDA_OR_FATAL(cudaDeviceSynchronize());
  rep.after_stream_ms = ms_since(t_stream);
  rep.after_stream_cpu_ms = thread_cpu_ms() - cpu0;
  rep.threads_after = count_threads();
  float span = 0;
  CUDA_OR_FATAL(cudaEventElapsedTime(&span, events_[0], events_[1]));
  rep.span_ms = span;
  for (int i = 0; i < req.calls; ++i) {
    cudaEvent_t* ev = &events_[2 + 4 * static_cast<size_t>(i)];
    float f = 0, c = 0;
    CUDA_OR_FATAL(cudaEventElapsedTime(&f, ev[0], ev[1]));
    CUDA_OR_FATAL(cudaEventElapsedTime(&c, ev[2], ev[3]));
    rep.flush_ms.push_back(f);
    rep.call_ms.push_back(c);
  }
  std::vector<dev::OutputSums> host(nsums);
  if (nsums) CUDA_OR_FATAL(cudaMemcpy(host.data(), sums, nsums * sizeof(dev::OutputSums), cudaMemcpyDeviceToHost));
  for (int i = 0; i < req.calls; ++i) {
    std::vector<proto::Sums> row;
    for (size_t k = 0; k < outs.size(); ++k) {
      const auto& h = host[static_cast<size_t>(i) * outs.size() + k];
      row.push_back({req.outputs[k].numel, static_cast<int64_t>(h.nonfinite), h.sum_sq, h.signed0, h.signed1});
    }
    rep.sums.push_back(std::move(row));
  }
  for (auto& v : kevo::guard::take()) rep.violations.push_back(std::move(v));
  if (req.export_outputs)
    for (auto& t : outs) rep.outputs_ipc.push_back(export_ipc(t.data));
  if (req.state) rep.state_after = device_state();
  return rep;
}

}  // namespace kevo::runner
