// kevo CPU reference ABI (trusted task code, not candidates). A task's reference.cpp defines
//
//   KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a);
//
// Every tensor arrives as a contiguous row-major array of double (integers converted exactly);
// outputs are zero-filled before the call. Compute in double precision.
#pragma once
#include <stddef.h>
#include <stdint.h>

#define KEVO_REFERENCE extern "C" __attribute__((visibility("default")))
#define KEVO_REF_MAX_DIMS 8

typedef struct {
  double* data;
  int ndim;
  int64_t shape[KEVO_REF_MAX_DIMS];
} kevo_ref_tensor;

typedef struct {
  const kevo_ref_tensor* inputs; int num_inputs;
  kevo_ref_tensor* outputs;      int num_outputs;
  const double* scalars;         int num_scalars;
  const int64_t* dims;           int num_dims;
  // Runs fn(ctx, i) for i in [0, n) on all cores; the reference may use it for its outer loop.
  void (*parallel_for)(int64_t n, void* ctx, void (*fn)(void* ctx, int64_t i));
} kevo_ref_args;

#ifdef __cplusplus
// Convenience: kevo_parallel(a, n, [&](int64_t i) { ... });
template <class F>
static inline void kevo_parallel(const kevo_ref_args* a, int64_t n, F&& f) {
  a->parallel_for(n, &f, [](void* ctx, int64_t i) { (*static_cast<F*>(ctx))(i); });
}
#endif
