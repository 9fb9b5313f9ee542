// CPU reference for gemm_bias_relu_backward: dz = dy * (y > 0) with y the forward's saved
// output, dx = dz W, dW = dz^T x, db = column sums of dz, in double.
#include <kevo/reference.h>

#include <vector>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  const double* W = a->inputs[1].data;
  const double* y = a->inputs[2].data;
  const double* dy = a->inputs[3].data;
  double* dx = a->outputs[0].data;
  double* dW = a->outputs[1].data;
  double* db = a->outputs[2].data;
  const int64_t M = a->dims[0], N = a->dims[1], K = a->dims[2];
  std::vector<double> dz(static_cast<size_t>(M * N));
  kevo_parallel(a, M, [&](int64_t i) {
    for (int64_t j = 0; j < N; ++j) {
      const double g = y[i * N + j] > 0 ? dy[i * N + j] : 0.0;
      dz[static_cast<size_t>(i * N + j)] = g;
      for (int64_t k = 0; k < K; ++k) dx[i * K + k] += g * W[j * K + k];
    }
  });
  kevo_parallel(a, N, [&](int64_t j) {
    for (int64_t i = 0; i < M; ++i) {
      const double g = dz[static_cast<size_t>(i * N + j)];
      db[j] += g;
      for (int64_t k = 0; k < K; ++k) dW[j * K + k] += g * x[i * K + k];
    }
  });
}
