// CPU reference for linear: y = x W^T + b in double, parallel over rows.
#include <kevo/reference.h>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  const double* W = a->inputs[1].data;
  const double* b = a->inputs[2].data;
  double* y = a->outputs[0].data;
  const int64_t M = a->dims[0], N = a->dims[1], K = a->dims[2];
  kevo_parallel(a, M, [&](int64_t i) {
    const double* xr = x + i * K;
    for (int64_t j = 0; j < N; ++j) {
      const double* wr = W + j * K;
      double s = b[j];
      for (int64_t k = 0; k < K; ++k) s += xr[k] * wr[k];
      y[i * N + j] = s;
    }
  });
}
