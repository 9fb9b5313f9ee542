// CPU reference for cross_entropy_backward: dlogits = dloss / B * (softmax(logits) - onehot(target)),
// in double precision, parallel over rows.
#include <kevo/reference.h>

#include <algorithm>
#include <cmath>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  const double* tgt = a->inputs[1].data;
  const double scale = a->inputs[2].data[0] / static_cast<double>(a->dims[0]);
  double* dx = a->outputs[0].data;
  const int64_t B = a->dims[0], C = a->dims[1];
  kevo_parallel(a, B, [&](int64_t b) {
    const double* xr = x + b * C;
    double m = xr[0];
    for (int64_t c = 1; c < C; ++c) m = std::max(m, xr[c]);
    double s = 0;
    for (int64_t c = 0; c < C; ++c) s += std::exp(xr[c] - m);
    for (int64_t c = 0; c < C; ++c) dx[b * C + c] = scale * std::exp(xr[c] - m) / s;
    dx[b * C + static_cast<int64_t>(tgt[b])] -= scale;
  });
}
