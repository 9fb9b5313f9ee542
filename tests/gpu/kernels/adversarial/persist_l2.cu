// task: gelu
// Adversarial: computes correctly (the baseline's kernel) but, on its first call, leaves state
// behind that outlives the call: a persisting-L2 set-aside of half the L2
// (cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize)) and an access-policy window on a->stream,
// the stream kevo owns, marking the input as persisting so it can survive the L2 flush between
// calls. Neither is ever reset. The checker snapshots device limits and the stream's attributes
// around the candidate's calls: unsafe, device_state. No static rule covers these calls.
#include <kevo/kernel.h>

#include <algorithm>

__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
  }
}

static void keep_input_in_l2(const void* x, size_t x_bytes, cudaStream_t s) {
  int dev = 0, l2 = 0, max_persist = 0, max_window = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&max_persist, cudaDevAttrMaxPersistingL2CacheSize, dev) !=
          cudaSuccess ||
      cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, dev) !=
          cudaSuccess ||
      max_persist <= 0 || max_window <= 0) {
    (void)cudaGetLastError();
    return;
  }
  const size_t set_aside = std::min<size_t>((size_t)l2 / 2, (size_t)max_persist);
  (void)cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, set_aside);
  cudaStreamAttrValue v = {};
  v.accessPolicyWindow.base_ptr = const_cast<void*>(x);
  v.accessPolicyWindow.num_bytes = std::min<size_t>(x_bytes, (size_t)max_window);
  v.accessPolicyWindow.hitRatio =
      std::min(1.0f, (float)set_aside / (float)v.accessPolicyWindow.num_bytes);
  v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  (void)cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v);
  (void)cudaGetLastError();  // unsupported (e.g. MIG): the call still computes correctly
}

static bool g_state_set = false;

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const kevo_tensor* x = &a->inputs[0];
  int64_t n = kevo_numel(x);
  if (!g_state_set) {
    keep_input_in_l2(x->data, (size_t)n * sizeof(float), a->stream);
    g_state_set = true;
  }
  const int threads = 256;
  unsigned blocks = (unsigned)((n + threads - 1) / threads);
  gelu_kernel<<<blocks, threads, 0, a->stream>>>((const float*)x->data, (float*)a->outputs[0].data,
                                                 n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
