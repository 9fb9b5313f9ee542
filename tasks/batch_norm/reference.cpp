// CPU reference for batch_norm (inference mode), in double precision; parallel over (n, c).
#include <kevo/reference.h>

#include <cmath>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  const double* mean = a->inputs[1].data;
  const double* var = a->inputs[2].data;
  const double* w = a->inputs[3].data;
  const double* bias = a->inputs[4].data;
  double* y = a->outputs[0].data;
  const int64_t N = a->dims[0], C = a->dims[1], HW = a->dims[2] * a->dims[3];
  const double eps = a->scalars[0];
  kevo_parallel(a, N * C, [&](int64_t nc) {
    const int64_t c = nc % C;
    const double k = w[c] / std::sqrt(var[c] + eps);
    for (int64_t i = nc * HW; i < (nc + 1) * HW; ++i) y[i] = (x[i] - mean[c]) * k + bias[c];
  });
}
