// CPU reference for histogram: per-chunk counts, merged serially.
#include <kevo/reference.h>

#include <algorithm>
#include <cmath>
#include <vector>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  double* counts = a->outputs[0].data;
  const int64_t n = a->dims[0], nb = a->dims[1];
  const int64_t chunk = 1 << 20, chunks = (n + chunk - 1) / chunk;
  std::vector<std::vector<int64_t>> part(static_cast<size_t>(chunks));
  kevo_parallel(a, chunks, [&](int64_t c) {
    auto& h = part[static_cast<size_t>(c)];
    h.assign(static_cast<size_t>(nb), 0);
    for (int64_t i = c * chunk; i < std::min(n, (c + 1) * chunk); ++i) {
      const int64_t b = static_cast<int64_t>(std::floor(32.0 * x[i])) + nb / 2;
      ++h[static_cast<size_t>(std::clamp<int64_t>(b, 0, nb - 1))];
    }
  });
  for (const auto& h : part)
    for (int64_t b = 0; b < nb; ++b) counts[b] += static_cast<double>(h[static_cast<size_t>(b)]);
}
