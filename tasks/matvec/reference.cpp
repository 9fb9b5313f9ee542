// CPU reference for matvec, in double precision; parallel over rows.
#include <kevo/reference.h>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* A = a->inputs[0].data;
  const double* x = a->inputs[1].data;
  double* y = a->outputs[0].data;
  const int64_t M = a->dims[0], K = a->dims[1];
  kevo_parallel(a, M, [&](int64_t i) {
    double s = 0;
    for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * x[k];
    y[i] = s;
  });
}
