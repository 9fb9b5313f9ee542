// CPU reference for gather_dim1: y[b, k] = x[b, idx[b, k]]; parallel over rows.
#include <kevo/reference.h>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  const double* idx = a->inputs[1].data;
  double* y = a->outputs[0].data;
  const int64_t B = a->dims[0], N = a->dims[1], K = a->dims[2];
  kevo_parallel(a, B, [&](int64_t b) {
    for (int64_t k = 0; k < K; ++k) y[b * K + k] = x[b * N + static_cast<int64_t>(idx[b * K + k])];
  });
}
