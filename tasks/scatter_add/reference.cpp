// CPU reference for scatter_add, in double precision. Each task owns a block of output rows and
// scans all indices, so no two tasks write the same row.
#include <kevo/reference.h>

#include <algorithm>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* idx = a->inputs[0].data;
  const double* src = a->inputs[1].data;
  double* y = a->outputs[0].data;
  const int64_t T = a->dims[0], V = a->dims[1], D = a->dims[2];
  const int64_t parts = std::min<int64_t>(V, 64), rows = (V + parts - 1) / parts;
  kevo_parallel(a, parts, [&](int64_t p) {
    const int64_t lo = p * rows, hi = std::min(V, lo + rows);
    for (int64_t v = lo * D; v < hi * D; ++v) y[v] = 0;
    for (int64_t t = 0; t < T; ++t) {
      const int64_t v = static_cast<int64_t>(idx[t]);
      if (v < lo || v >= hi) continue;
      for (int64_t d = 0; d < D; ++d) y[v * D + d] += src[t * D + d];
    }
  });
}
