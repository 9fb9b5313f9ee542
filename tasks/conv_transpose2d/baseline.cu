// Baseline for conv_transpose2d: gather form, one thread per output element; for each tap (r, s)
// the thread checks whether an input pixel maps onto its output position.
#include <kevo/kernel.h>

__global__ void convt_kernel(const float* __restrict__ x, const float* __restrict__ w,
                             float* __restrict__ y, int C, int H, int W, int K, int R, int S, int T,
                             int P, int HO, int WO) {
  int ow = blockIdx.x * blockDim.x + threadIdx.x;
  int oh = blockIdx.y * blockDim.y + threadIdx.y;
  int n = blockIdx.z / K, k = blockIdx.z % K;
  if (oh >= HO || ow >= WO) return;
  float acc = 0.f;
  for (int c = 0; c < C; ++c) {
    const float* xc = x + ((int64_t)n * C + c) * H * W;
    const float* wck = w + ((int64_t)c * K + k) * R * S;
    for (int r = 0; r < R; ++r) {
      int th = oh + P - r;
      if (th < 0 || th % T != 0) continue;
      int ih = th / T;
      if (ih >= H) continue;
      for (int s = 0; s < S; ++s) {
        int tw = ow + P - s;
        if (tw < 0 || tw % T != 0) continue;
        int iw = tw / T;
        if (iw >= W) continue;
        acc += xc[(int64_t)ih * W + iw] * wck[r * S + s];
      }
    }
  }
  y[(((int64_t)n * K + k) * HO + oh) * WO + ow] = acc;
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const int64_t* d = a->dims;
  int N = (int)d[0], C = (int)d[1], H = (int)d[2], W = (int)d[3], K = (int)d[4];
  int R = (int)d[5], S = (int)d[6], T = (int)d[7], P = (int)d[8];
  int HO = (H - 1) * T - 2 * P + R, WO = (W - 1) * T - 2 * P + S;
  dim3 block(16, 16);
  dim3 grid((WO + 15) / 16, (HO + 15) / 16, N * K);
  convt_kernel<<<grid, block, 0, a->stream>>>(
      (const float*)a->inputs[0].data, (const float*)a->inputs[1].data, (float*)a->outputs[0].data,
      C, H, W, K, R, S, T, P, HO, WO);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
