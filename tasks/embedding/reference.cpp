// CPU reference for embedding: y[t, :] = weight[idx[t], :]; parallel over tokens.
#include <kevo/reference.h>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* idx = a->inputs[0].data;
  const double* w = a->inputs[1].data;
  double* y = a->outputs[0].data;
  const int64_t T = a->dims[0], D = a->dims[2];
  kevo_parallel(a, T, [&](int64_t t) {
    const double* row = w + static_cast<int64_t>(idx[t]) * D;
    for (int64_t d = 0; d < D; ++d) y[t * D + d] = row[d];
  });
}
