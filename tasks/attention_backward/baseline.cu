// Baseline for attention_backward: two kernels of a block per row, like the forward's baseline.
// Rows: for query row i, the scores and dP = dO_i . V_j go to shared memory (2*S floats), then the
// softmax, delta_i = sum_j P_ij dP_ij and dQ_i = scale * sum_j P_ij (dP_ij - delta_i) K_j; the
// row's log-sum-exp and delta go to the workspace. Columns: for key row j, P_ij and dS_ij are
// recomputed from those for every query i into shared memory, then dV_j = sum_i P_ij dO_i and
// dK_j = scale * sum_i dS_ij Q_i. No S x S matrix is written.
#include <kevo/kernel.h>

constexpr int kThreads = 128;

__device__ float block_reduce(float v, float* sh, bool is_max) {
  sh[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      sh[threadIdx.x] = is_max ? fmaxf(sh[threadIdx.x], sh[threadIdx.x + s])
                               : sh[threadIdx.x] + sh[threadIdx.x + s];
    __syncthreads();
  }
  float r = sh[0];
  __syncthreads();
  return r;
}

__device__ float dot(const float* __restrict__ a, const float* __restrict__ b, int D) {
  float s = 0.f;
  for (int d = 0; d < D; ++d) s += a[d] * b[d];
  return s;
}

// One block per query row (h, i): dQ_i, and lse_i and delta_i into stats[2 * row + {0, 1}].
__global__ void attention_dq_kernel(const float* __restrict__ Q, const float* __restrict__ K,
                                    const float* __restrict__ V, const float* __restrict__ dO,
                                    float* __restrict__ dQ, float* __restrict__ stats, int S, int D,
                                    float scale) {
  extern __shared__ float smem[];  // 2*S floats
  float* p = smem;
  float* dp = smem + S;
  __shared__ float red[kThreads];
  int64_t row = blockIdx.x;  // h * S + i
  int64_t h = row / S;
  const float* q = Q + row * D;
  const float* g = dO + row * D;
  const float* Kh = K + h * S * D;
  const float* Vh = V + h * S * D;
  float m = -INFINITY;
  for (int j = threadIdx.x; j < S; j += kThreads) {
    p[j] = dot(q, Kh + (int64_t)j * D, D) * scale;
    dp[j] = dot(g, Vh + (int64_t)j * D, D);
    m = fmaxf(m, p[j]);
  }
  m = block_reduce(m, red, true);
  float sum = 0.f;
  for (int j = threadIdx.x; j < S; j += kThreads) sum += (p[j] = expf(p[j] - m));
  sum = block_reduce(sum, red, false);
  float inv = 1.f / sum, delta = 0.f;
  for (int j = threadIdx.x; j < S; j += kThreads) delta += (p[j] *= inv) * dp[j];
  delta = block_reduce(delta, red, false);  // also orders the p[] writes
  for (int d = threadIdx.x; d < D; d += kThreads) {
    float acc = 0.f;
    for (int j = 0; j < S; ++j) acc += p[j] * (dp[j] - delta) * Kh[(int64_t)j * D + d];
    dQ[row * D + d] = acc * scale;
  }
  if (threadIdx.x == 0) {
    stats[2 * row] = m + logf(sum);
    stats[2 * row + 1] = delta;
  }
}

// One block per key row (h, j): dK_j and dV_j from the query rows' statistics.
__global__ void attention_dkv_kernel(const float* __restrict__ Q, const float* __restrict__ K,
                                     const float* __restrict__ V, const float* __restrict__ dO,
                                     const float* __restrict__ stats, float* __restrict__ dK,
                                     float* __restrict__ dV, int S, int D, float scale) {
  extern __shared__ float smem[];  // 2*S floats
  float* p = smem;
  float* ds = smem + S;
  int64_t key = blockIdx.x;  // h * S + j
  int64_t h = key / S;
  const float* k = K + key * D;
  const float* v = V + key * D;
  const float* Qh = Q + h * S * D;
  const float* dOh = dO + h * S * D;
  const float* st = stats + 2 * h * S;
  for (int i = threadIdx.x; i < S; i += kThreads) {
    float pi = expf(dot(Qh + (int64_t)i * D, k, D) * scale - st[2 * i]);
    p[i] = pi;
    ds[i] = pi * (dot(dOh + (int64_t)i * D, v, D) - st[2 * i + 1]);
  }
  __syncthreads();
  for (int d = threadIdx.x; d < D; d += kThreads) {
    float av = 0.f, ak = 0.f;
    for (int i = 0; i < S; ++i) {
      av += p[i] * dOh[(int64_t)i * D + d];
      ak += ds[i] * Qh[(int64_t)i * D + d];
    }
    dV[key * D + d] = av;
    dK[key * D + d] = ak * scale;
  }
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int BH = (int)a->dims[0], S = (int)a->dims[1], D = (int)a->dims[2];
  const float* Q = (const float*)a->inputs[0].data;
  const float* K = (const float*)a->inputs[1].data;
  const float* V = (const float*)a->inputs[2].data;
  const float* dO = (const float*)a->inputs[3].data;
  float* stats = (float*)a->workspace;  // 2*BH*S floats: lse and delta per query row
  size_t smem = 2 * (size_t)S * sizeof(float);
  if (smem > 48 * 1024 &&
      (cudaFuncSetAttribute(attention_dq_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)smem) != cudaSuccess ||
       cudaFuncSetAttribute(attention_dkv_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)smem) != cudaSuccess))
    return 1;
  float scale = 1.f / sqrtf((float)D);
  unsigned rows = (unsigned)((int64_t)BH * S);
  attention_dq_kernel<<<rows, kThreads, smem, a->stream>>>(Q, K, V, dO, (float*)a->outputs[0].data,
                                                           stats, S, D, scale);
  attention_dkv_kernel<<<rows, kThreads, smem, a->stream>>>(
      Q, K, V, dO, stats, (float*)a->outputs[1].data, (float*)a->outputs[2].data, S, D, scale);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
