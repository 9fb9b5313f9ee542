// Baseline for conv2d_backward: two direct kernels. dx: one thread per input element, gathering
// dy * w over the output channels and the window (the forward's loop, transposed). dw: one block
// per weight element, its threads striding over the batch and the output positions (consecutive
// threads read consecutive ow), then a shared-memory tree sum.
#include <kevo/kernel.h>

constexpr int kBx = 16;        // kevo: tune kBx in {8, 16, 32}
constexpr int kBy = 16;        // kevo: tune kBy in {4, 8, 16}
constexpr int kThreads = 256;  // kevo: tune kThreads in {128, 256, 512}

__global__ void conv2d_dx_kernel(const float* __restrict__ dy, const float* __restrict__ w,
                                 float* __restrict__ dx, int C, int H, int W, int K, int R, int S,
                                 int P, int HO, int WO) {
  int iw = blockIdx.x * blockDim.x + threadIdx.x;
  int ih = blockIdx.y * blockDim.y + threadIdx.y;
  int n = blockIdx.z / C, c = blockIdx.z % C;
  if (ih >= H || iw >= W) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) {
    const float* g = dy + ((int64_t)n * K + k) * HO * WO;
    const float* wk = w + ((int64_t)k * C + c) * R * S;
    for (int r = 0; r < R; ++r) {
      int oh = ih - r + P;
      if (oh < 0 || oh >= HO) continue;
      for (int s = 0; s < S; ++s) {
        int ow = iw - s + P;
        if (ow >= 0 && ow < WO) acc += g[(int64_t)oh * WO + ow] * wk[r * S + s];
      }
    }
  }
  dx[(((int64_t)n * C + c) * H + ih) * W + iw] = acc;
}

__global__ void conv2d_dw_kernel(const float* __restrict__ x, const float* __restrict__ dy,
                                 float* __restrict__ dw, int N, int C, int H, int W, int K, int R,
                                 int S, int P, int HO, int WO) {
  __shared__ float sh[kThreads];
  int64_t e = blockIdx.x;  // ((k * C + c) * R + r) * S + s
  int s = (int)(e % S), r = (int)((e / S) % R);
  int c = (int)((e / ((int64_t)S * R)) % C), k = (int)(e / ((int64_t)S * R * C));
  int64_t plane = (int64_t)HO * WO;
  float acc = 0.f;
  for (int64_t p = threadIdx.x; p < (int64_t)N * plane; p += kThreads) {
    int n = (int)(p / plane);
    int oh = (int)((p % plane) / WO), ow = (int)(p % WO);
    int ih = oh + r - P, iw = ow + s - P;
    if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
    acc += dy[((int64_t)n * K + k) * plane + (int64_t)oh * WO + ow] *
           x[(((int64_t)n * C + c) * H + ih) * W + iw];
  }
  sh[threadIdx.x] = acc;
  __syncthreads();
  for (int h = kThreads / 2; h > 0; h >>= 1) {
    if (threadIdx.x < h) sh[threadIdx.x] += sh[threadIdx.x + h];
    __syncthreads();
  }
  if (threadIdx.x == 0) dw[e] = sh[0];
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const int64_t* d = a->dims;
  int N = (int)d[0], C = (int)d[1], H = (int)d[2], W = (int)d[3];
  int K = (int)d[4], R = (int)d[5], S = (int)d[6], P = (int)d[7];
  int HO = H + 2 * P - R + 1, WO = W + 2 * P - S + 1;
  const float* x = (const float*)a->inputs[0].data;
  const float* w = (const float*)a->inputs[1].data;
  const float* dy = (const float*)a->inputs[2].data;
  dim3 block(kBx, kBy);
  dim3 grid((W + kBx - 1) / kBx, (H + kBy - 1) / kBy, N * C);
  conv2d_dx_kernel<<<grid, block, 0, a->stream>>>(dy, w, (float*)a->outputs[0].data, C, H, W, K, R,
                                                  S, P, HO, WO);
  conv2d_dw_kernel<<<(unsigned)((int64_t)K * C * R * S), kThreads, 0, a->stream>>>(
      x, dy, (float*)a->outputs[1].data, N, C, H, W, K, R, S, P, HO, WO);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
