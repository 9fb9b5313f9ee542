#include "task/tensor.h"

#include <cmath>
#include <thread>

#include "util/hash.h"

namespace kevo {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Uniform in (0, 1), never exactly 0 or 1 (logs below must stay finite).
double unit(uint64_t key) { return (static_cast<double>(splitmix64(key) >> 11) + 0.5) * 0x1p-53; }

}  // namespace

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

Result<HostTensor> generate_input(const TensorSpec& spec, const std::vector<int64_t>& shape,
                                  const DimValues& dims, uint64_t seed, bool wide) {
  HostTensor t = make_tensor(spec.name, spec.dtype, shape);
  const InitSpec& in = spec.init;
  bool w = wide && in.wide;
  uint64_t base = splitmix64(seed ^ fnv1a64(spec.name.data(), spec.name.size()));
  int64_t lo = 0, hi = 0;
  if (in.dist == Dist::Int) {
    auto l = eval_int_expr(in.low_expr, dims);
    auto h = eval_int_expr(in.high_expr, dims);
    if (!l) return l.unexpected();
    if (!h) return h.unexpected();
    lo = *l, hi = *h;
  }
  void* data = t.bytes.data();
  if (in.dist == Dist::Normal || in.dist == Dist::LogNormal) {
    // Box-Muller: elements 2j and 2j+1 share one pair of uniforms (keys base + 2j, base + 2j + 1)
    // and take its cosine and sine: one log and one sqrt per two values. Each element depends
    // only on its index, so any split into chunks gives the same tensor.
    double scale = in.b * (w ? (in.dist == Dist::Normal ? 8 : 2) : 1);
    auto put = [&](int64_t i, double z) {
      double v = in.dist == Dist::Normal ? in.a + scale * z : std::exp(in.a + scale * z);
      store_from_double(data, spec.dtype, static_cast<size_t>(i), v);
    };
    parallel_ranges(t.numel(), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e;) {
        uint64_t k = base + 2 * static_cast<uint64_t>(i / 2);
        double r = std::sqrt(-2 * std::log(unit(k))), a = 2 * M_PI * unit(k + 1);
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
    for (int64_t i = b; i < e; ++i) {
      uint64_t k = base + 2 * static_cast<uint64_t>(i);
      double u = unit(k), v;
      switch (in.dist) {
        case Dist::Uniform: {
          double c = (in.a + in.b) / 2, h = (in.b - in.a) / 2 * (w ? 8 : 1);
          v = c - h + 2 * h * u;
          break;
        }
        case Dist::Laplace: {
          double x = u - 0.5;
          v = in.a - in.b * (w ? 8 : 1) * (x < 0 ? -1 : 1) * std::log(1 - 2 * std::fabs(x));
          break;
        }
        case Dist::Exponential:
          v = -std::log(u) / (in.a / (w ? 8 : 1));
          break;
        case Dist::Int:
          v = static_cast<double>(lo + static_cast<int64_t>(splitmix64(k) %
                                                           static_cast<uint64_t>(hi - lo)));
          break;
        default:
          v = 0;
      }
      store_from_double(data, spec.dtype, static_cast<size_t>(i), v);
    }
  });
  return t;
}

Result<std::vector<HostTensor>> generate_inputs(const Task& task, const Config& c, uint64_t seed,
                                                bool wide) {
  std::vector<HostTensor> out;
  for (const auto& spec : task.inputs) {
    auto shape = task.shape_of(spec, c);
    if (!shape) return shape.unexpected();
    auto t = generate_input(spec, *shape, c.dims, seed, wide);
    if (!t) return t.unexpected();
    out.push_back(std::move(*t));
  }
  return out;
}

}  // namespace kevo
