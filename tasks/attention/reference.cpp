// CPU reference for attention (softmax(Q K^T / sqrt(D)) V per head), in double precision; parallel
// over query rows.
#include <kevo/reference.h>

#include <algorithm>
#include <cmath>
#include <vector>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* Q = a->inputs[0].data;
  const double* K = a->inputs[1].data;
  const double* V = a->inputs[2].data;
  double* O = a->outputs[0].data;
  const int64_t BH = a->dims[0], S = a->dims[1], D = a->dims[2];
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  kevo_parallel(a, BH * S, [&](int64_t row) {
    const int64_t h = row / S;
    const double* q = Q + row * D;
    std::vector<double> p(static_cast<size_t>(S));
    double m = -INFINITY;
    for (int64_t j = 0; j < S; ++j) {
      double s = 0;
      for (int64_t d = 0; d < D; ++d) s += q[d] * K[(h * S + j) * D + d];
      p[static_cast<size_t>(j)] = s * scale;
      m = std::max(m, s * scale);
    }
    double sum = 0;
    for (auto& v : p) sum += (v = std::exp(v - m));
    double* o = O + row * D;
    for (int64_t d = 0; d < D; ++d) o[d] = 0;
    for (int64_t j = 0; j < S; ++j) {
      const double w = p[static_cast<size_t>(j)] / sum;
      for (int64_t d = 0; d < D; ++d) o[d] += w * V[(h * S + j) * D + d];
    }
  });
}
