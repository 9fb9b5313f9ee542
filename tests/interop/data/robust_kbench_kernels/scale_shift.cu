// scale_shift's forward in the kevo ABI (test data): y[i, f] = x[i, f] * w[f] + b[f].
#include <kevo/kernel.h>

__global__ void scale_shift(const float* x, const float* w, const float* b, float* y, int64_t n, int64_t f) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = x[i] * w[i % f] + b[i % f];
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t n = kevo_numel(&a->inputs[0]), f = a->inputs[1].shape[0];
  scale_shift<<<static_cast<unsigned>((n + 255) / 256), 256, 0, a->stream>>>(
      static_cast<const float*>(a->inputs[0].data), static_cast<const float*>(a->inputs[1].data),
      static_cast<const float*>(a->inputs[2].data), static_cast<float*>(a->outputs[0].data), n, f);
  return 0;
}
