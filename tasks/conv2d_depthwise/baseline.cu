// Baseline for conv2d_depthwise: one thread per output element (16x16 output tiles per block, one
// block column per (n, c)); inputs and weights are read through the caches.
#include <kevo/kernel.h>

__global__ void dwconv_kernel(const float* __restrict__ x, const float* __restrict__ w,
                              float* __restrict__ y, int C, int H, int W, int R, int S, int P,
                              int HO, int WO) {
  int ow = blockIdx.x * blockDim.x + threadIdx.x;
  int oh = blockIdx.y * blockDim.y + threadIdx.y;
  int nc = blockIdx.z, c = nc % C;
  if (oh >= HO || ow >= WO) return;
  const float* xc = x + (int64_t)nc * H * W;
  const float* wc = w + (int64_t)c * R * S;
  float acc = 0.f;
  for (int r = 0; r < R; ++r) {
    int ih = oh + r - P;
    if (ih < 0 || ih >= H) continue;
    for (int s = 0; s < S; ++s) {
      int iw = ow + s - P;
      if (iw >= 0 && iw < W) acc += xc[(int64_t)ih * W + iw] * wc[r * S + s];
    }
  }
  y[((int64_t)nc * HO + oh) * WO + ow] = acc;
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const int64_t* d = a->dims;
  int N = (int)d[0], C = (int)d[1], H = (int)d[2], W = (int)d[3];
  int R = (int)d[4], S = (int)d[5], P = (int)d[6];
  int HO = H + 2 * P - R + 1, WO = W + 2 * P - S + 1;
  dim3 block(16, 16);
  dim3 grid((WO + 15) / 16, (HO + 15) / 16, N * C);
  dwconv_kernel<<<grid, block, 0, a->stream>>>(
      (const float*)a->inputs[0].data, (const float*)a->inputs[1].data, (float*)a->outputs[0].data,
      C, H, W, R, S, P, HO, WO);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
