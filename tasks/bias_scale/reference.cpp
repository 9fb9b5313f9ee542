// CPU reference for bias_scale, in double precision; parallel over rows.
#include <kevo/reference.h>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  const double* bias = a->inputs[1].data;
  const double* scale = a->inputs[2].data;
  double* y = a->outputs[0].data;
  const int64_t B = a->dims[0], N = a->dims[1];
  kevo_parallel(a, B, [&](int64_t b) {
    for (int64_t i = 0; i < N; ++i) y[b * N + i] = (x[b * N + i] + bias[i]) * scale[i];
  });
}
