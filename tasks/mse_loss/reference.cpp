// CPU reference for mse_loss, in double precision (chunked partial sums, then a serial total).
#include <kevo/reference.h>

#include <algorithm>
#include <vector>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* p = a->inputs[0].data;
  const double* t = a->inputs[1].data;
  const int64_t n = a->dims[0];
  const int64_t chunk = 1 << 16, chunks = (n + chunk - 1) / chunk;
  std::vector<double> part(static_cast<size_t>(chunks), 0.0);
  kevo_parallel(a, chunks, [&](int64_t c) {
    double s = 0;
    for (int64_t i = c * chunk; i < std::min(n, (c + 1) * chunk); ++i)
      s += (p[i] - t[i]) * (p[i] - t[i]);
    part[static_cast<size_t>(c)] = s;
  });
  double total = 0;
  for (double v : part) total += v;
  a->outputs[0].data[0] = total / static_cast<double>(n);
}
