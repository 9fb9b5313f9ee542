// Baseline for attention: one block per query row (h, i). Scores q.k_j/sqrt(D) go to shared memory
// (dynamic, S floats), then a block max and sum, then each thread accumulates output dims d.
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

__global__ void attention_kernel(const float* __restrict__ Q, const float* __restrict__ K,
                                 const float* __restrict__ V, float* __restrict__ O, int S, int D,
                                 float scale) {
  extern __shared__ float scores[];  // S floats
  __shared__ float red[kThreads];
  int64_t row = blockIdx.x;  // h * S + i
  int64_t h = row / S;
  const float* q = Q + row * D;
  const float* Kh = K + h * S * D;
  const float* Vh = V + h * S * D;
  float m = -INFINITY;
  for (int j = threadIdx.x; j < S; j += kThreads) {
    const float* k = Kh + (int64_t)j * D;
    float s = 0.f;
    for (int d = 0; d < D; ++d) s += q[d] * k[d];
    s *= scale;
    scores[j] = s;
    m = fmaxf(m, s);
  }
  m = block_reduce(m, red, true);
  float sum = 0.f;
  for (int j = threadIdx.x; j < S; j += kThreads) {
    float e = expf(scores[j] - m);
    scores[j] = e;
    sum += e;
  }
  float inv = 1.f / block_reduce(sum, red, false);  // also orders the scores[] writes
  for (int d = threadIdx.x; d < D; d += kThreads) {
    float acc = 0.f;
    for (int j = 0; j < S; ++j) acc += scores[j] * Vh[(int64_t)j * D + d];
    O[row * D + d] = acc * inv;
  }
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int BH = (int)a->dims[0], S = (int)a->dims[1], D = (int)a->dims[2];
  size_t smem = (size_t)S * sizeof(float);
  if (smem > 48 * 1024 &&
      cudaFuncSetAttribute(attention_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           (int)smem) != cudaSuccess)
    return 1;
  attention_kernel<<<(unsigned)((int64_t)BH * S), kThreads, smem, a->stream>>>(
      (const float*)a->inputs[0].data, (const float*)a->inputs[1].data,
      (const float*)a->inputs[2].data, (float*)a->outputs[0].data, S, D, 1.f / sqrtf((float)D));
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
