// CPU reference for attention_backward, in double precision. Pass 1 (parallel over query rows):
// the softmax row P, dP = dO V^T, dS = P * (dP - rowsum(P * dP)), dQ = scale * dS K, and the row's
// log-sum-exp and rowsum. Pass 2 (parallel over key rows, which own their dK and dV rows):
// recompute P[i, j] and dS[i, j] from those statistics, dV = P^T dO, dK = scale * dS^T Q.
#include <kevo/reference.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace {
double dot(const double* a, const double* b, int64_t n) {
  double s = 0;
  for (int64_t d = 0; d < n; ++d) s += a[d] * b[d];
  return s;
}
}  // namespace

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* Q = a->inputs[0].data;
  const double* K = a->inputs[1].data;
  const double* V = a->inputs[2].data;
  const double* dO = a->inputs[3].data;
  double* dQ = a->outputs[0].data;
  double* dK = a->outputs[1].data;
  double* dV = a->outputs[2].data;
  const int64_t BH = a->dims[0], S = a->dims[1], D = a->dims[2];
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  std::vector<double> lse(static_cast<size_t>(BH * S)), delta(static_cast<size_t>(BH * S));
  kevo_parallel(a, BH * S, [&](int64_t row) {
    const int64_t h = row / S;
    std::vector<double> p(static_cast<size_t>(S)), dp(static_cast<size_t>(S));
    double m = -INFINITY;
    for (int64_t j = 0; j < S; ++j) {
      p[static_cast<size_t>(j)] = scale * dot(Q + row * D, K + (h * S + j) * D, D);
      m = std::max(m, p[static_cast<size_t>(j)]);
    }
    double sum = 0;
    for (auto& v : p) sum += (v = std::exp(v - m));
    double dl = 0;
    for (int64_t j = 0; j < S; ++j) {
      p[static_cast<size_t>(j)] /= sum;
      dp[static_cast<size_t>(j)] = dot(dO + row * D, V + (h * S + j) * D, D);
      dl += p[static_cast<size_t>(j)] * dp[static_cast<size_t>(j)];
    }
    for (int64_t d = 0; d < D; ++d) dQ[row * D + d] = 0;
    for (int64_t j = 0; j < S; ++j) {
      const double ds = p[static_cast<size_t>(j)] * (dp[static_cast<size_t>(j)] - dl);
      for (int64_t d = 0; d < D; ++d) dQ[row * D + d] += scale * ds * K[(h * S + j) * D + d];
    }
    lse[static_cast<size_t>(row)] = m + std::log(sum);
    delta[static_cast<size_t>(row)] = dl;
  });
  kevo_parallel(a, BH * S, [&](int64_t key) {
    const int64_t h = key / S;
    for (int64_t d = 0; d < D; ++d) dK[key * D + d] = dV[key * D + d] = 0;
    for (int64_t i = 0; i < S; ++i) {
      const int64_t row = h * S + i;
      const double p =
          std::exp(scale * dot(Q + row * D, K + key * D, D) - lse[static_cast<size_t>(row)]);
      const double ds = p * (dot(dO + row * D, V + key * D, D) - delta[static_cast<size_t>(row)]);
      for (int64_t d = 0; d < D; ++d) {
        dV[key * D + d] += p * dO[row * D + d];
        dK[key * D + d] += scale * ds * Q[row * D + d];
      }
    }
  });
}
