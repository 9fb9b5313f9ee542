// CPU reference for kl_div (batchmean KL(softmax(p) || softmax(q))), in double precision.
#include <kevo/reference.h>

#include <algorithm>
#include <cmath>
#include <vector>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* p = a->inputs[0].data;
  const double* q = a->inputs[1].data;
  const int64_t B = a->dims[0], C = a->dims[1];
  std::vector<double> kl(static_cast<size_t>(B), 0.0);
  auto lse = [C](const double* r) {
    double m = r[0];
    for (int64_t c = 1; c < C; ++c) m = std::max(m, r[c]);
    double s = 0;
    for (int64_t c = 0; c < C; ++c) s += std::exp(r[c] - m);
    return m + std::log(s);
  };
  kevo_parallel(a, B, [&](int64_t b) {
    const double* pr = p + b * C;
    const double* qr = q + b * C;
    const double lp = lse(pr), lq = lse(qr);
    double s = 0;
    for (int64_t c = 0; c < C; ++c) s += std::exp(pr[c] - lp) * ((pr[c] - lp) - (qr[c] - lq));
    kl[static_cast<size_t>(b)] = s;
  });
  double total = 0;
  for (double v : kl) total += v;
  a->outputs[0].data[0] = total / static_cast<double>(B);
}
