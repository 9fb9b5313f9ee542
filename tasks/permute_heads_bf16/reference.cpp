// CPU reference for permute_heads_bf16: y[b, h, s, :] = x[b, s, h, :]; parallel over (b, s).
#include <kevo/reference.h>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  double* y = a->outputs[0].data;
  const int64_t B = a->dims[0], S = a->dims[1], H = a->dims[2], D = a->dims[3];
  kevo_parallel(a, B * S, [&](int64_t bs) {
    const int64_t b = bs / S, s = bs % S;
    for (int64_t h = 0; h < H; ++h)
      for (int64_t d = 0; d < D; ++d) y[((b * H + h) * S + s) * D + d] = x[(bs * H + h) * D + d];
  });
}
