// CPU reference for cumsum_exclusive (along rows), in double precision.
#include <kevo/reference.h>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  double* y = a->outputs[0].data;
  const int64_t B = a->dims[0], N = a->dims[1];
  kevo_parallel(a, B, [&](int64_t b) {
    double s = 0;
    for (int64_t i = 0; i < N; ++i) {
      y[b * N + i] = s;
      s += x[b * N + i];
    }
  });
}
