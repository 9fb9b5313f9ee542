// Baseline for gemm_bias_relu_backward: dz = dy * (y > 0) into the workspace (y the forward's
// saved output), then linear_backward's kernels on dz: dx = dz W and dW = dz^T x (one strided
// tiled kernel) and db as a column sum, one thread per column.
#include <kevo/kernel.h>

constexpr int kTile = 32;

// C[r, c] = sum_t A[r, t] * B[t, c] for R x C outputs over T terms; A(r, t) = A[r*ars + t*ats],
// B(t, c) = B[t*bts + c*bcs]. C is contiguous [R, C].
__global__ void matmul_strided(const float* __restrict__ A, int64_t ars, int64_t ats,
                               const float* __restrict__ B, int64_t bts, int64_t bcs,
                               float* __restrict__ C, int R, int Cn, int T) {
  __shared__ float As[kTile][kTile + 1];
  __shared__ float Bs[kTile][kTile + 1];
  int r = blockIdx.y * kTile + threadIdx.y, c = blockIdx.x * kTile + threadIdx.x;
  float acc = 0.f;
  for (int t0 = 0; t0 < T; t0 += kTile) {
    int ta = t0 + threadIdx.x, tb = t0 + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = (r < R && ta < T) ? A[r * ars + ta * ats] : 0.f;
    Bs[threadIdx.y][threadIdx.x] = (tb < T && c < Cn) ? B[tb * bts + c * bcs] : 0.f;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTile; ++kk) acc += As[threadIdx.y][kk] * Bs[kk][threadIdx.x];
    __syncthreads();
  }
  if (r < R && c < Cn) C[(int64_t)r * Cn + c] = acc;
}

// dz[i] = dy[i] if y[i] > 0, else 0.
__global__ void relu_mask(const float* __restrict__ y, const float* __restrict__ dy,
                          float* __restrict__ dz, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) dz[i] = y[i] > 0.f ? dy[i] : 0.f;
}

__global__ void column_sums(const float* __restrict__ dy, float* __restrict__ db, int M, int N) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= N) return;
  float s = 0.f;
  for (int i = 0; i < M; ++i) s += dy[(int64_t)i * N + j];
  db[j] = s;
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int M = (int)a->dims[0], N = (int)a->dims[1], K = (int)a->dims[2];
  const float* x = (const float*)a->inputs[0].data;
  const float* W = (const float*)a->inputs[1].data;
  const float* y = (const float*)a->inputs[2].data;
  float* dy = (float*)a->workspace;  // dz: the incoming gradient masked by the ReLU
  float* dx = (float*)a->outputs[0].data;
  float* dW = (float*)a->outputs[1].data;
  float* db = (float*)a->outputs[2].data;
  dim3 block(kTile, kTile);
  const int64_t mn = (int64_t)M * N;
  relu_mask<<<(unsigned)((mn + 255) / 256), 256, 0, a->stream>>>(y, (const float*)a->inputs[3].data, dy, mn);
  // dx[M, K] = dz[M, N] * W[N, K]
  matmul_strided<<<dim3((K + kTile - 1) / kTile, (M + kTile - 1) / kTile), block, 0, a->stream>>>(
      dy, N, 1, W, K, 1, dx, M, K, N);
  // dW[N, K] = dz^T[N, M] * x[M, K]
  matmul_strided<<<dim3((K + kTile - 1) / kTile, (N + kTile - 1) / kTile), block, 0, a->stream>>>(
      dy, 1, N, x, K, 1, dW, N, K, M);
  column_sums<<<(N + 255) / 256, 256, 0, a->stream>>>(dy, db, M, N);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
