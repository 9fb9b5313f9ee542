// Lint test fixture: the weight w is multiplied by zero (input_unused for w)
#include <kevo/reference.h>

#include <cmath>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  double* y = a->outputs[0].data;
  const int64_t n = a->outputs[0].shape[0] * (a->outputs[0].ndim > 1 ? a->outputs[0].shape[1] : 1);
  const int64_t cols = a->outputs[0].shape[a->outputs[0].ndim - 1];
  (void)x;
  (void)cols;
  for (int64_t i = 0; i < n; ++i) {
    y[i] = x[i] + 0 * a->inputs[1].data[i % cols];
  }
}
