// Baseline for transpose: one thread per element, reads coalesced along rows of x, writes strided.
#include <kevo/kernel.h>

constexpr int kBx = 32;  // kevo: tune kBx in {16, 32, 64}
constexpr int kBy = 8;   // kevo: tune kBy in {1, 4, 8, 16}

__global__ void transpose_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t M,
                                 int64_t N) {
  int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;  // column of x
  int64_t i = blockIdx.y * (int64_t)blockDim.y + threadIdx.y;  // row of x
  if (i < M && j < N) y[j * M + i] = x[i * N + j];
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t M = a->dims[0], N = a->dims[1];
  dim3 block(kBx, kBy);
  dim3 grid((unsigned)((N + kBx - 1) / kBx), (unsigned)((M + kBy - 1) / kBy));
  transpose_kernel<<<grid, block, 0, a->stream>>>((const float*)a->inputs[0].data,
                                                  (float*)a->outputs[0].data, M, N);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
