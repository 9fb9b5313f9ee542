// Baseline for conv1d: direct convolution, one thread per output element; blockIdx.y = (n, k).
#include <kevo/kernel.h>

__global__ void conv1d_kernel(const float* __restrict__ x, const float* __restrict__ w,
                              float* __restrict__ y, int C, int L, int K, int R, int P, int LO) {
  int o = blockIdx.x * blockDim.x + threadIdx.x;
  int n = blockIdx.y / K, k = blockIdx.y % K;
  if (o >= LO) return;
  const float* xn = x + (int64_t)n * C * L;
  const float* wk = w + (int64_t)k * C * R;
  float acc = 0.f;
  for (int c = 0; c < C; ++c)
    for (int r = 0; r < R; ++r) {
      int i = o + r - P;
      if (i >= 0 && i < L) acc += xn[(int64_t)c * L + i] * wk[c * R + r];
    }
  y[((int64_t)n * K + k) * LO + o] = acc;
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const int64_t* d = a->dims;
  int N = (int)d[0], C = (int)d[1], L = (int)d[2], K = (int)d[3], R = (int)d[4], P = (int)d[5];
  int LO = L + 2 * P - R + 1;
  dim3 grid((LO + 255) / 256, N * K);
  conv1d_kernel<<<grid, 256, 0, a->stream>>>((const float*)a->inputs[0].data,
                                             (const float*)a->inputs[1].data,
                                             (float*)a->outputs[0].data, C, L, K, R, P, LO);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
