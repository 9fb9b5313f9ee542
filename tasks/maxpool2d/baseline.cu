// Baseline for maxpool2d: one thread per output element.
#include <kevo/kernel.h>

__global__ void maxpool2d_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t total,
                                 int H, int W, int KS, int T, int P, int HO, int WO) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= total) return;
  int ow = (int)(i % WO);
  int oh = (int)((i / WO) % HO);
  int64_t nc = i / ((int64_t)WO * HO);
  const float* xc = x + nc * H * W;
  float m = -INFINITY;
  for (int r = 0; r < KS; ++r) {
    int ih = oh * T - P + r;
    if (ih < 0 || ih >= H) continue;
    for (int s = 0; s < KS; ++s) {
      int iw = ow * T - P + s;
      if (iw >= 0 && iw < W) m = fmaxf(m, xc[(int64_t)ih * W + iw]);
    }
  }
  y[i] = m;
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const int64_t* d = a->dims;
  int64_t N = d[0], C = d[1];
  int H = (int)d[2], W = (int)d[3], KS = (int)d[4], T = (int)d[5], P = (int)d[6];
  int HO = (H + 2 * P - KS) / T + 1, WO = (W + 2 * P - KS) / T + 1;
  int64_t total = N * C * HO * WO;
  maxpool2d_kernel<<<(unsigned)((total + 255) / 256), 256, 0, a->stream>>>(
      (const float*)a->inputs[0].data, (float*)a->outputs[0].data, total, H, W, KS, T, P, HO, WO);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
