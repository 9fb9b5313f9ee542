// Baseline for conv2d: direct convolution, one thread per output element (kBx x kBy output tiles per
// block, one block column per (n, k)); inputs and weights are read through the caches.
#include <kevo/kernel.h>

constexpr int kBx = 16;  // kevo: tune kBx in {8, 16, 32}
constexpr int kBy = 16;  // kevo: tune kBy in {4, 8, 16}

__global__ void conv2d_kernel(const float* __restrict__ x, const float* __restrict__ w,
                              float* __restrict__ y, int C, int H, int W, int K, int R, int S,
                              int P, int HO, int WO) {
  int ow = blockIdx.x * blockDim.x + threadIdx.x;
  int oh = blockIdx.y * blockDim.y + threadIdx.y;
  int n = blockIdx.z / K, k = blockIdx.z % K;
  if (oh >= HO || ow >= WO) return;
  const float* xn = x + (int64_t)n * C * H * W;
  const float* wk = w + (int64_t)k * C * R * S;
  float acc = 0.f;
  for (int c = 0; c < C; ++c) {
    const float* xc = xn + (int64_t)c * H * W;
    const float* wc = wk + (int64_t)c * R * S;
    for (int r = 0; r < R; ++r) {
      int ih = oh + r - P;
      if (ih < 0 || ih >= H) continue;
      for (int s = 0; s < S; ++s) {
        int iw = ow + s - P;
        if (iw < 0 || iw >= W) continue;
        acc += xc[(int64_t)ih * W + iw] * wc[r * S + s];
      }
    }
  }
  y[(((int64_t)n * K + k) * HO + oh) * WO + ow] = acc;
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const int64_t* d = a->dims;
  int N = (int)d[0], C = (int)d[1], H = (int)d[2], W = (int)d[3];
  int K = (int)d[4], R = (int)d[5], S = (int)d[6], P = (int)d[7];
  int HO = H + 2 * P - R + 1, WO = W + 2 * P - S + 1;
  dim3 block(kBx, kBy);
  dim3 grid((WO + kBx - 1) / kBx, (HO + kBy - 1) / kBy, N * K);
  conv2d_kernel<<<grid, block, 0, a->stream>>>(
      (const float*)a->inputs[0].data, (const float*)a->inputs[1].data, (float*)a->outputs[0].data,
      C, H, W, K, R, S, P, HO, WO);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
