// CPU reference for swiglu_bf16 (inputs arrive as exact doubles of the bf16 values).
#include <kevo/reference.h>

#include <cmath>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  double* y = a->outputs[0].data;
  const int64_t M = a->dims[0], N = a->dims[1];
  kevo_parallel(a, M, [&](int64_t m) {
    const double* g = x + m * 2 * N;
    const double* u = g + N;
    for (int64_t n = 0; n < N; ++n) y[m * N + n] = g[n] / (1.0 + std::exp(-g[n])) * u[n];
  });
}
