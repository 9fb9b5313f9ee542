// CPU reference for matmul_scale_residual: y = alpha * A B + R in double, parallel over rows.
#include <kevo/reference.h>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* A = a->inputs[0].data;
  const double* B = a->inputs[1].data;
  const double* R = a->inputs[2].data;
  double* y = a->outputs[0].data;
  const double alpha = a->scalars[0];
  const int64_t M = a->dims[0], N = a->dims[1], K = a->dims[2];
  kevo_parallel(a, M, [&](int64_t i) {
    double* c = y + i * N;
    for (int64_t j = 0; j < N; ++j) c[j] = 0;
    for (int64_t k = 0; k < K; ++k) {
      const double aik = A[i * K + k];
      for (int64_t j = 0; j < N; ++j) c[j] += aik * B[k * N + j];
    }
    for (int64_t j = 0; j < N; ++j) c[j] = alpha * c[j] + R[i * N + j];
  });
}
