// Baseline for histogram: zero the counts; a grid-stride loop bins values into a per-block
// shared-memory histogram (dynamic, NB ints), which is then added to the global counts.
#include <kevo/kernel.h>

constexpr int kThreads = 256;  // kevo: tune kThreads in {128, 256, 512, 1024}
constexpr int kMaxBlocks = 2048;  // kevo: tune kMaxBlocks in {264, 528, 1056, 2048, 4096}

__global__ void zero_kernel(int* __restrict__ counts, int64_t nb) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < nb) counts[i] = 0;
}

__global__ void histogram_kernel(const float* __restrict__ x, int* __restrict__ counts, int64_t n,
                                 int nb) {
  extern __shared__ int local[];
  for (int b = threadIdx.x; b < nb; b += kThreads) local[b] = 0;
  __syncthreads();
  for (int64_t i = blockIdx.x * (int64_t)kThreads + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * kThreads) {
    int b = (int)floorf(32.f * x[i]) + nb / 2;
    b = min(max(b, 0), nb - 1);
    atomicAdd(&local[b], 1);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < nb; b += kThreads)
    if (local[b]) atomicAdd(&counts[b], local[b]);
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t n = a->dims[0];
  int nb = (int)a->dims[1];
  int* counts = (int*)a->outputs[0].data;
  zero_kernel<<<(unsigned)((nb + 255) / 256), 256, 0, a->stream>>>(counts, nb);
  int64_t want = (n + kThreads - 1) / kThreads;
  int blocks = (int)(want < kMaxBlocks ? want : kMaxBlocks);
  size_t smem = (size_t)nb * sizeof(int);
  if (smem > 48 * 1024 &&
      cudaFuncSetAttribute(histogram_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           (int)smem) != cudaSuccess)
    return 1;
  histogram_kernel<<<blocks, kThreads, smem, a->stream>>>((const float*)a->inputs[0].data, counts,
                                                          n, nb);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
