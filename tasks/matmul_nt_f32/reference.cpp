// CPU reference for matmul_nt_f32: C[i, j] = dot(A[i, :], B[j, :]) in double, parallel over rows.
#include <kevo/reference.h>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* A = a->inputs[0].data;
  const double* B = a->inputs[1].data;
  double* C = a->outputs[0].data;
  const int64_t M = a->dims[0], N = a->dims[1], K = a->dims[2];
  kevo_parallel(a, M, [&](int64_t i) {
    const double* ar = A + i * K;
    for (int64_t j = 0; j < N; ++j) {
      const double* br = B + j * K;
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += ar[k] * br[k];
      C[i * N + j] = s;
    }
  });
}
