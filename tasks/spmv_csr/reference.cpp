// CPU reference for spmv_csr, in double precision. The row pointer is built by accumulating the
// row lengths 1 + (i mod P) (not from the closed form the baseline uses); a length mismatch with
// the declared NNZ leaves y at zero, which the check reports.
#include <kevo/reference.h>

#include <vector>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* values = a->inputs[0].data;
  const double* col = a->inputs[1].data;
  const double* x = a->inputs[2].data;
  double* y = a->outputs[0].data;
  const int64_t M = a->dims[0], P = a->dims[2];
  std::vector<int64_t> ptr(static_cast<size_t>(M + 1), 0);
  for (int64_t i = 0; i < M; ++i) ptr[i + 1] = ptr[i] + 1 + i % P;
  if (ptr[M] != a->inputs[0].shape[0]) return;
  const int64_t chunk = 4096;
  kevo_parallel(a, (M + chunk - 1) / chunk, [&](int64_t c) {
    for (int64_t i = c * chunk; i < M && i < (c + 1) * chunk; ++i) {
      double s = 0;
      for (int64_t k = ptr[i]; k < ptr[i + 1]; ++k)
        s += values[k] * x[static_cast<int64_t>(col[k])];
      y[i] = s;
    }
  });
}
