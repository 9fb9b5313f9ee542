// task: gelu
// Good: launched through cudaLaunchKernelEx with a thread block cluster of 2 (sm_90), on the given
// stream; each block of a cluster takes half of a tile. Must pass.
#include <kevo/kernel.h>

#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void __cluster_dims__(2, 1, 1) gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  cg::cluster_group cluster = cg::this_cluster();
  const int64_t tile = (int64_t)blockIdx.x / 2 * 2 * blockDim.x;
  const int64_t i = tile + (int64_t)cluster.block_rank() * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678f));
  }
  cluster.sync();
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const int64_t n = kevo_numel(&a->inputs[0]);
  const int threads = 256;
  int64_t blocks = (n + threads - 1) / threads;
  blocks = (blocks + 1) / 2 * 2;  // whole clusters
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3((unsigned)blocks);
  cfg.blockDim = dim3(threads);
  cfg.stream = a->stream;
  const float* x = (const float*)a->inputs[0].data;
  float* y = (float*)a->outputs[0].data;
  if (cudaLaunchKernelEx(&cfg, gelu_kernel, x, y, n) != cudaSuccess) return 1;
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
