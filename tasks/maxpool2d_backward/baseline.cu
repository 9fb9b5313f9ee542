// Baseline for maxpool2d_backward: one thread per input element gathers the dy of every window
// it wins, re-finding each window's argmax (first largest, row-major: the forward's tie rule).
// Gathering needs no atomics and no zeroing pass, and the sum order is fixed.
#include <kevo/kernel.h>

// The first largest in-bounds position (row * W + col) of window (oh, ow) of plane xc.
__device__ int64_t window_argmax(const float* __restrict__ xc, int oh, int ow, int H, int W, int KS,
                                 int T, int P) {
  int64_t best = -1;
  float m = 0.f;
  for (int r = 0; r < KS; ++r) {
    int ih = oh * T - P + r;
    if (ih < 0 || ih >= H) continue;
    for (int s = 0; s < KS; ++s) {
      int iw = ow * T - P + s;
      if (iw < 0 || iw >= W) continue;
      float v = xc[(int64_t)ih * W + iw];
      if (best < 0 || v > m) best = (int64_t)ih * W + iw, m = v;
    }
  }
  return best;
}

// First output index whose window [o*T - P, o*T - P + KS) contains input i.
__device__ int first_window(int i, int KS, int T, int P) {
  int lo = i + P - KS + 1;
  return lo <= 0 ? 0 : (lo + T - 1) / T;
}

__global__ void maxpool2d_backward_kernel(const float* __restrict__ x, const float* __restrict__ dy,
                                          float* __restrict__ dx, int64_t total, int H, int W,
                                          int KS, int T, int P, int HO, int WO) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= total) return;
  int iw = (int)(i % W);
  int ih = (int)((i / W) % H);
  int64_t nc = i / ((int64_t)W * H);
  const float* xc = x + nc * H * W;
  const float* dyc = dy + nc * HO * WO;
  int64_t self = (int64_t)ih * W + iw;
  int oh_end = min((ih + P) / T + 1, HO), ow_end = min((iw + P) / T + 1, WO);
  float acc = 0.f;
  for (int oh = first_window(ih, KS, T, P); oh < oh_end; ++oh)
    for (int ow = first_window(iw, KS, T, P); ow < ow_end; ++ow)
      if (window_argmax(xc, oh, ow, H, W, KS, T, P) == self) acc += dyc[(int64_t)oh * WO + ow];
  dx[i] = acc;
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const int64_t* d = a->dims;
  int64_t N = d[0], C = d[1];
  int H = (int)d[2], W = (int)d[3], KS = (int)d[4], T = (int)d[5], P = (int)d[6];
  int HO = (H + 2 * P - KS) / T + 1, WO = (W + 2 * P - KS) / T + 1;
  int64_t total = N * C * H * W;
  maxpool2d_backward_kernel<<<(unsigned)((total + 255) / 256), 256, 0, a->stream>>>(
      (const float*)a->inputs[0].data, (const float*)a->inputs[1].data, (float*)a->outputs[0].data,
      total, H, W, KS, T, P, HO, WO);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
