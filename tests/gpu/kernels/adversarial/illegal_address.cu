// task: gelu
// Adversarial: a tiled kernel with a shift typo in the output tile base (<< 40 instead of << 10 for
// 1024-element tiles). Tile 0 is right; every other tile writes terabytes past the output, which is
// unmapped: an illegal address on the device.
#include <kevo/kernel.h>

constexpr int kTile = 1024;

__global__ void gelu_tiled(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t remaining = n - (int64_t)blockIdx.x * kTile;
  const float* xt = x + (int64_t)blockIdx.x * kTile;
  float* yt = y + ((int64_t)blockIdx.x << 40);  // tile start
  for (int t = threadIdx.x; t < kTile; t += blockDim.x) {
    if (t < remaining) {
      float v = xt[t];
      yt[t] = 0.5f * v * (1.0f + erff(v * 0.70710678f));
    }
  }
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t n = kevo_numel(&a->inputs[0]);
  gelu_tiled<<<(unsigned)((n + kTile - 1) / kTile), 256, 0, a->stream>>>(
      (const float*)a->inputs[0].data, (float*)a->outputs[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
