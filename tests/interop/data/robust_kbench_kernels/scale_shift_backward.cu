// scale_shift's backward in the kevo ABI (test data). Inputs x [B, F], grad_out [B, F], w [F];
// outputs grad_x = grad_out * w, grad_w = sum_i grad_out * x, grad_b = sum_i grad_out.
#include <kevo/kernel.h>

__global__ void grad_x(const float* g, const float* w, float* gx, int64_t n, int64_t f) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) gx[i] = g[i] * w[i % f];
}

__global__ void grad_wb(const float* x, const float* g, float* gw, float* gb, int64_t rows, int64_t f) {
  int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (j >= f) return;
  float sw = 0, sb = 0;
  for (int64_t i = 0; i < rows; ++i) {
    sw += g[i * f + j] * x[i * f + j];
    sb += g[i * f + j];
  }
  gw[j] = sw;
  gb[j] = sb;
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const float* x = static_cast<const float*>(a->inputs[0].data);
  const float* g = static_cast<const float*>(a->inputs[1].data);
  const float* w = static_cast<const float*>(a->inputs[2].data);
  int64_t n = kevo_numel(&a->inputs[0]), f = a->inputs[2].shape[0];
  grad_x<<<static_cast<unsigned>((n + 255) / 256), 256, 0, a->stream>>>(g, w, static_cast<float*>(a->outputs[0].data), n, f);
  grad_wb<<<static_cast<unsigned>((f + 255) / 256), 256, 0, a->stream>>>(
      x, g, static_cast<float*>(a->outputs[1].data), static_cast<float*>(a->outputs[2].data), n / f, f);
  return 0;
}
