// CPU reference for transpose.
#include <kevo/reference.h>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  double* y = a->outputs[0].data;
  const int64_t M = a->dims[0], N = a->dims[1];
  kevo_parallel(a, N, [&](int64_t j) {
    for (int64_t i = 0; i < M; ++i) y[j * M + i] = x[i * N + j];
  });
}
