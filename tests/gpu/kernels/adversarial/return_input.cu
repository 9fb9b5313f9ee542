// task: gelu
// Adversarial: returns the input unchanged ("GELU is close to identity for large x").
#include <kevo/kernel.h>

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  size_t bytes = (size_t)kevo_numel(&a->inputs[0]) * sizeof(float);
  cudaMemcpyAsync(a->outputs[0].data, a->inputs[0].data, bytes, cudaMemcpyDeviceToDevice,
                  a->stream);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
