// Baseline for stencil3d_7pt: one thread per cell, zero outside the grid.
#include <kevo/kernel.h>

__global__ void stencil_kernel(const float* __restrict__ x, float* __restrict__ y, int D, int H,
                               int W, float c0, float c1) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z;
  if (c >= W || r >= H) return;
  int64_t plane = (int64_t)H * W;
  int64_t i = z * plane + (int64_t)r * W + c;
  float s = 0.f;
  if (z > 0) s += x[i - plane];
  if (z + 1 < D) s += x[i + plane];
  if (r > 0) s += x[i - W];
  if (r + 1 < H) s += x[i + W];
  if (c > 0) s += x[i - 1];
  if (c + 1 < W) s += x[i + 1];
  y[i] = c0 * x[i] + c1 * s;
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int D = (int)a->dims[0], H = (int)a->dims[1], W = (int)a->dims[2];
  dim3 block(32, 8);
  dim3 grid((W + 31) / 32, (H + 7) / 8, D);
  stencil_kernel<<<grid, block, 0, a->stream>>>((const float*)a->inputs[0].data,
                                                (float*)a->outputs[0].data, D, H, W,
                                                (float)a->scalars[0], (float)a->scalars[1]);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
