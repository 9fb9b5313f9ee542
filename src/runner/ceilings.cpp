// The device's measured ceilings: copy bandwidth and the arithmetic peaks of the trusted probe
// library (time/sol_probe.cu), for speed-of-light floors.
#include <dlfcn.h>

#include <algorithm>

#include "runner/service.h"

namespace kevo::runner {

// Device copy bandwidth: a large device-to-device copy, bytes read plus written per second.
Result<proto::BandwidthReply> RunnerService::bandwidth(const proto::BandwidthRequest& req) {
  init();
  const size_t bytes = req.bytes;
  void* a = buffer("bw/a", bytes, false);
  void* b = buffer("bw/b", bytes, false);
  CUDA_OR_FATAL(cudaMemset(a, 1, bytes));
  std::vector<double> gbps;
  for (int i = 0; i < 12; ++i) {
    CUDA_OR_FATAL(cudaEventRecord(ev0_, stream_));
    CUDA_OR_FATAL(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, stream_));
    CUDA_OR_FATAL(cudaEventRecord(ev1_, stream_));
    CUDA_OR_FATAL(cudaEventSynchronize(ev1_));
    float ms = 0;
    CUDA_OR_FATAL(cudaEventElapsedTime(&ms, ev0_, ev1_));
    if (i >= 2) gbps.push_back(2.0 * bytes / (ms * 1e-3) / 1e9);
  }
  std::sort(gbps.begin(), gbps.end());
  release("bw/a");
  release("bw/b");
  return proto::BandwidthReply{gbps.back(), gbps[gbps.size() / 2]};
}
// Arithmetic peaks: the probe library (trusted, shipped with kevo) exports
// int kevo_probe(int kind, cudaStream_t s, double* flops) and runs a fixed amount of work.
Result<proto::ProbeReply> RunnerService::probe(const proto::ProbeRequest& req) {
  init();
  void* h = dlopen(req.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) return fail("cannot load probe: {}", dlerror());
  using ProbeFn = int (*)(int, cudaStream_t, double*);
  auto fn = reinterpret_cast<ProbeFn>(dlsym(h, "kevo_probe"));
  if (!fn) return fail("probe has no kevo_probe");
  proto::ProbeReply out;
  for (int kind = 0;; ++kind) {
    double flops = 0, best = 0;
    if (fn(kind, stream_, &flops) != 0) break;  // past the last kind (also warms up)
    CUDA_OR_FATAL(cudaStreamSynchronize(stream_));
    for (int i = 0; i < 5; ++i) {
      CUDA_OR_FATAL(cudaEventRecord(ev0_, stream_));
      fn(kind, stream_, &flops);
      CUDA_OR_FATAL(cudaEventRecord(ev1_, stream_));
      CUDA_OR_FATAL(cudaEventSynchronize(ev1_));
      float ms = 0;
      CUDA_OR_FATAL(cudaEventElapsedTime(&ms, ev0_, ev1_));
      best = std::max(best, flops / (ms * 1e-3) / 1e12);
    }
    out.tflops[std::to_string(kind)] = best;
  }
  return out;
}
}  // namespace kevo::runner
