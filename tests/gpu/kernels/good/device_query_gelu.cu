// task: gelu
// Good: asks the device what it is before launching (properties, free memory, occupancy), sets
// its own kernel's attributes (dynamic shared memory, carveout), and sizes the grid from the
// answers. Unusual for a kernel, but nothing a confined runner refuses: must pass.
#include <kevo/kernel.h>

__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  extern __shared__ float scratch[];
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += stride) {
    float v = x[i];
    scratch[threadIdx.x] = v;
    y[i] = 0.5f * scratch[threadIdx.x] * (1.0f + erff(v * 0.70710678f));
  }
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  static int blocks_per_sm = 0, sms = 0;
  const int threads = 256;
  const size_t smem = threads * sizeof(float);
  if (sms == 0) {
    int dev = 0;
    cudaDeviceProp p{};
    size_t free_b = 0, total_b = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&p, dev) != cudaSuccess ||
        cudaMemGetInfo(&free_b, &total_b) != cudaSuccess || free_b == 0)
      return 1;
    if (cudaFuncSetAttribute(gelu_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) != cudaSuccess ||
        cudaFuncSetAttribute(gelu_kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 50) != cudaSuccess)
      return 1;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, gelu_kernel, threads, smem) != cudaSuccess ||
        blocks_per_sm < 1)
      return 1;
    sms = p.multiProcessorCount;
  }
  int64_t n = kevo_numel(&a->inputs[0]);
  int64_t want = (n + threads - 1) / threads, cap = (int64_t)blocks_per_sm * sms * 4;
  unsigned blocks = (unsigned)(want < cap ? (want < 1 ? 1 : want) : cap);
  gelu_kernel<<<blocks, threads, smem, a->stream>>>((const float*)a->inputs[0].data, (float*)a->outputs[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
