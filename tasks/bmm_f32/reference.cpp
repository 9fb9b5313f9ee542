// CPU reference for bmm_f32: per batch C = A * B in double, parallel over (batch, row).
#include <kevo/reference.h>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* A = a->inputs[0].data;
  const double* B = a->inputs[1].data;
  double* C = a->outputs[0].data;
  const int64_t BT = a->dims[0], M = a->dims[1], N = a->dims[2], K = a->dims[3];
  kevo_parallel(a, BT * M, [&](int64_t bi) {
    const int64_t b = bi / M;
    const double* ar = A + bi * K;
    const double* Bb = B + b * K * N;
    double* c = C + bi * N;
    for (int64_t j = 0; j < N; ++j) c[j] = 0;
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < N; ++j) c[j] += ar[k] * Bb[k * N + j];
  });
}
