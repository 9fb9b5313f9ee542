// CPU reference for permute3d: y[c, a, b] = x[a, b, c]; parallel over a.
#include <kevo/reference.h>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  double* y = a->outputs[0].data;
  const int64_t A = a->dims[0], B = a->dims[1], C = a->dims[2];
  kevo_parallel(a, A, [&](int64_t ai) {
    for (int64_t b = 0; b < B; ++b)
      for (int64_t c = 0; c < C; ++c) y[(c * A + ai) * B + b] = x[(ai * B + b) * C + c];
  });
}
