// CPU reference for cross_entropy (mean over rows of logsumexp - logit[target]), in double.
#include <kevo/reference.h>

#include <algorithm>
#include <cmath>
#include <vector>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  const double* tgt = a->inputs[1].data;
  const int64_t B = a->dims[0], C = a->dims[1];
  std::vector<double> loss(static_cast<size_t>(B), 0.0);
  kevo_parallel(a, B, [&](int64_t b) {
    const double* xr = x + b * C;
    double m = xr[0];
    for (int64_t c = 1; c < C; ++c) m = std::max(m, xr[c]);
    double s = 0;
    for (int64_t c = 0; c < C; ++c) s += std::exp(xr[c] - m);
    loss[static_cast<size_t>(b)] = m + std::log(s) - xr[static_cast<int64_t>(tgt[b])];
  });
  double total = 0;
  for (double l : loss) total += l;
  a->outputs[0].data[0] = total / static_cast<double>(B);
}
