#include "task/tensor.h"

#include <cmath>
#include <thread>

#include "task/draw.h"
#include "util/hash.h"

namespace kevo {

HostTensor make_tensor(const std::string& name, DType dtype, std::vector<int64_t> shape) {
  HostTensor t;
  t.name = name;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.bytes.resize(static_cast<size_t>(t.numel()) * dtype_size(dtype));
  return t;
}

void parallel_ranges(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  int64_t threads = std::max(1u, std::thread::hardware_concurrency());
  if (n < (1 << 16) || threads == 1) {
    fn(0, n);
    return;
  }
  threads = std::min<int64_t>(threads, 64);
  std::vector<std::thread> pool;
  int64_t chunk = (n + threads - 1) / threads;
  for (int64_t b = 0; b < n; b += chunk) pool.emplace_back(fn, b, std::min(n, b + chunk));
  for (auto& t : pool) t.join();
}

Result<DrawSpec> draw_spec(const TensorSpec& spec, const DimValues& dims, uint64_t seed, bool wide) {
  const InitSpec& in = spec.init;
  bool w = wide && in.wide;
  DrawSpec d;
  d.base = draw_mix(seed ^ fnv1a64(spec.name.data(), spec.name.size()));
  d.a = in.a;
  d.b = in.b;
  if (in.min) d.clamp = true, d.floor = *in.min;
  switch (in.dist) {
    case Dist::Normal:
      d.kind = kDrawNormal;
      d.b = in.b * (w ? 8 : 1);
      break;
    case Dist::LogNormal:
      d.kind = kDrawLogNormal;
      d.b = in.b * (w ? 2 : 1);
      break;
    case Dist::Uniform:
      d.kind = kDrawUniform;
      d.a = (in.a + in.b) / 2;
      d.b = (in.b - in.a) / 2 * (w ? 8 : 1);
      break;
    case Dist::Laplace:
      d.kind = kDrawLaplace;
      d.b = in.b * (w ? 8 : 1);
      break;
    case Dist::Exponential:
      d.kind = kDrawExponential;
      d.a = in.a / (w ? 8 : 1);
      break;
    case Dist::Int: {
      d.kind = kDrawInt;
      auto l = eval_int_expr(in.low_expr, dims);
      auto h = eval_int_expr(in.high_expr, dims);
      if (!l) return l.unexpected();
      if (!h) return h.unexpected();
      if (*h <= *l) return fail("input '{}': int range [{}, {}) is empty", spec.name, *l, *h);
      d.lo = *l, d.hi = *h;
      break;
    }
  }
  return d;
}

Result<HostTensor> generate_input(const TensorSpec& spec, const std::vector<int64_t>& shape,
                                  const DimValues& dims, uint64_t seed, bool wide) {
  HostTensor t = make_tensor(spec.name, spec.dtype, shape);
  auto ds = draw_spec(spec, dims, seed, wide);
  if (!ds) return ds.unexpected();
  const DrawSpec d = *ds;
  void* data = t.bytes.data();
  if (d.kind == kDrawNormal || d.kind == kDrawLogNormal) {
    // Box-Muller pairs (draw.h): one log and one sqrt per two values on the host. Each element
    // depends only on its index, so any split into chunks gives the same tensor.
    auto put = [&](int64_t i, double z) { store_from_double(data, spec.dtype, static_cast<size_t>(i), draw_clamp(d, draw_from_gauss(d, z))); };
    parallel_ranges(t.numel(), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e;) {
        uint64_t k = d.base + 2 * static_cast<uint64_t>(i / 2);
        double r = std::sqrt(-2 * std::log(draw_unit(k))), a = 2 * M_PI * draw_unit(k + 1);
        if (i % 2 == 0) {
          put(i, r * std::cos(a));
          if (i + 1 < e) put(i + 1, r * std::sin(a));
          i += 2;
        } else {
          put(i, r * std::sin(a));
          i += 1;
        }
      }
    });
    return t;
  }
  parallel_ranges(t.numel(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) store_from_double(data, spec.dtype, static_cast<size_t>(i), draw_value(d, i));
  });
  return t;
}

Result<std::vector<HostTensor>> generate_inputs(const ResolvedConfig& r, uint64_t seed, bool wide) {
  std::vector<HostTensor> out;
  for (const auto& in : r.inputs) {
    auto t = generate_input(*in.spec, in.shape, r.config->dims, seed, wide);
    if (!t) return t.unexpected();
    out.push_back(std::move(*t));
  }
  return out;
}

Result<std::vector<HostTensor>> generate_inputs(const Task& task, const Config& c, uint64_t seed,
                                                bool wide) {
  auto r = task.resolve(c);
  if (!r) return r.unexpected();
  return generate_inputs(*r, seed, wide);
}

}  // namespace kevo
