// CPU reference for matmul_f16: C = A * B in double, i-k-j order, parallel over rows; the inputs
// arrive as exact doubles of the f16 values.
#include <kevo/reference.h>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* A = a->inputs[0].data;
  const double* B = a->inputs[1].data;
  double* C = a->outputs[0].data;
  const int64_t M = a->dims[0], N = a->dims[1], K = a->dims[2];
  kevo_parallel(a, M, [&](int64_t i) {
    double* c = C + i * N;
    for (int64_t j = 0; j < N; ++j) c[j] = 0;
    for (int64_t k = 0; k < K; ++k) {
      const double aik = A[i * K + k];
      const double* b = B + k * N;
      for (int64_t j = 0; j < N; ++j) c[j] += aik * b[j];
    }
  });
}
