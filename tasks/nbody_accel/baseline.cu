// Baseline for nbody_accel: one thread per body, a loop over all bodies read through the cache.
#include <kevo/kernel.h>

__global__ void nbody_kernel(const float* __restrict__ pos, const float* __restrict__ mass,
                             float* __restrict__ acc, int n, float eps2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float xi = pos[3 * i], yi = pos[3 * i + 1], zi = pos[3 * i + 2];
  float ax = 0.f, ay = 0.f, az = 0.f;
  for (int j = 0; j < n; ++j) {
    float dx = pos[3 * j] - xi, dy = pos[3 * j + 1] - yi, dz = pos[3 * j + 2] - zi;
    float r2 = dx * dx + dy * dy + dz * dz + eps2;
    float inv = rsqrtf(r2);
    float f = mass[j] * inv * inv * inv;
    ax += f * dx;
    ay += f * dy;
    az += f * dz;
  }
  acc[3 * i] = ax;
  acc[3 * i + 1] = ay;
  acc[3 * i + 2] = az;
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int n = (int)a->dims[0];
  nbody_kernel<<<(n + 127) / 128, 128, 0, a->stream>>>(
      (const float*)a->inputs[0].data, (const float*)a->inputs[1].data, (float*)a->outputs[0].data,
      n, (float)a->scalars[0]);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
