// Unit tests of the bundled tasks' CPU references (tasks/*/reference.cpp). Each reference is
// compiled with the host compiler into a shared object, loaded, run on tiny hand-made configs with
// a serial parallel_for, and compared with an independent implementation written here,
// hand-computed values or mathematical properties of the op.
#include <dlfcn.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <kevo/reference.h>

#include "util/subprocess.h"

namespace fs = std::filesystem;
using kevo::find_program;
using kevo::run_process;

namespace {

using RefFn = void (*)(const kevo_ref_args*);

// A tensor for the reference: contiguous doubles and a shape.
struct T {
  std::vector<int64_t> shape;
  std::vector<double> data;
  T() = default;
  explicit T(std::vector<int64_t> s, std::vector<double> d = {})
      : shape(std::move(s)), data(std::move(d)) {
    int64_t n = numel();
    if (data.empty()) data.assign(static_cast<size_t>(n), 0.0);
    EXPECT_EQ(static_cast<int64_t>(data.size()), n) << "test bug: data does not match the shape";
  }
  int64_t numel() const {
    int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }
  double& operator[](int64_t i) { return data[static_cast<size_t>(i)]; }
  double operator[](int64_t i) const { return data[static_cast<size_t>(i)]; }
};

// Compiles tasks/<name>/reference.cpp once per test binary and returns its entry point; nullptr
// (with the reason in *why) when the host compiler is missing.
RefFn load_reference(const std::string& name, std::string* why) {
  static std::map<std::string, RefFn> cache;
  static fs::path dir;
  if (auto it = cache.find(name); it != cache.end()) return it->second;
  auto cxx = find_program("g++");
  if (!cxx) {
    *why = "g++ not found on PATH: cannot compile the task references";
    return nullptr;
  }
  if (dir.empty()) {
    dir = fs::temp_directory_path() / ("kevo_reference_test_" + std::to_string(getpid()));
    fs::create_directories(dir);
  }
  const fs::path src = fs::path(KEVO_SOURCE_DIR) / "tasks" / name / "reference.cpp";
  const fs::path so = dir / (name + ".so");
  auto r = run_process({.argv = {*cxx, "-O2", "-std=c++17", "-shared", "-fPIC",
                                 "-I" + (fs::path(KEVO_SOURCE_DIR) / "include").string(), "-o",
                                 so.string(), src.string()},
                        .timeout = std::chrono::milliseconds(120000)});
  if (!r) {
    ADD_FAILURE() << "cannot run g++: " << r.error().message;
    return cache[name] = nullptr;
  }
  if (!r->ok()) {
    ADD_FAILURE() << src << " does not compile (" << r->describe() << "):\n" << r->err;
    return cache[name] = nullptr;
  }
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    ADD_FAILURE() << "dlopen " << so << ": " << dlerror();
    return cache[name] = nullptr;
  }
  auto fn = reinterpret_cast<RefFn>(dlsym(h, "kevo_reference"));
  if (!fn) ADD_FAILURE() << so << " does not export kevo_reference";
  std::error_code ec;
  fs::remove(so, ec);  // the mapping stays valid
  return cache[name] = fn;
}

void serial_for(int64_t n, void* ctx, void (*fn)(void*, int64_t)) {
  for (int64_t i = 0; i < n; ++i) fn(ctx, i);
}

// Runs a reference: outputs must come with their shapes; they are zero-filled first (as kevo does).
void run_ref(RefFn fn, std::vector<T>& inputs, std::vector<T>& outputs,
             const std::vector<double>& scalars, const std::vector<int64_t>& dims) {
  auto conv = [](T& t) {
    kevo_ref_tensor r{};
    r.data = t.data.data();
    r.ndim = static_cast<int>(t.shape.size());
    for (size_t i = 0; i < t.shape.size(); ++i) r.shape[i] = t.shape[i];
    return r;
  };
  std::vector<kevo_ref_tensor> ins, outs;
  for (auto& t : inputs) ins.push_back(conv(t));
  for (auto& t : outputs) {
    std::fill(t.data.begin(), t.data.end(), 0.0);
    outs.push_back(conv(t));
  }
  kevo_ref_args a{};
  a.inputs = ins.data();
  a.num_inputs = static_cast<int>(ins.size());
  a.outputs = outs.data();
  a.num_outputs = static_cast<int>(outs.size());
  a.scalars = scalars.data();
  a.num_scalars = static_cast<int>(scalars.size());
  a.dims = dims.data();
  a.num_dims = static_cast<int>(dims.size());
  a.parallel_for = serial_for;
  fn(&a);
}

std::vector<double> randn(size_t n, uint32_t seed, double std = 1.0) {
  std::mt19937 g(seed);
  std::normal_distribution<double> d(0.0, std);
  std::vector<double> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

// Small integers: products and sums of these are exact in double, so results can be compared with
// ==.
std::vector<double> randint(size_t n, uint32_t seed, int lo = -4, int hi = 4) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

#define LOAD_OR_SKIP(fn, name)                    \
  std::string why_;                               \
  RefFn fn = load_reference(name, &why_);         \
  if (!fn && !why_.empty()) GTEST_SKIP() << why_; \
  ASSERT_NE(fn, nullptr)

// ---------------------------------------------------------------------------------------------
TEST(Reference, GeluHandValuesAndSymmetry) {
  LOAD_OR_SKIP(ref, "gelu");
  // gelu(x) = x * Phi(x); Phi(1) = 0.8413447460685429, Phi(2) = 0.9772498680518208.
  std::vector<T> in{T({5}, {0.0, 1.0, -1.0, 2.0, -2.0})};
  std::vector<T> out{T({5})};
  run_ref(ref, in, out, {}, {5});
  EXPECT_DOUBLE_EQ(out[0][0], 0.0);
  EXPECT_NEAR(out[0][1], 0.8413447460685429, 1e-15);
  EXPECT_NEAR(out[0][2], -0.15865525393145707, 1e-15);
  EXPECT_NEAR(out[0][3], 1.9544997361036416, 1e-14);
  // gelu(x) - gelu(-x) = x
  EXPECT_NEAR(out[0][3] - out[0][4], 2.0, 1e-14);
}

TEST(Reference, GeluMatchesErfcForm) {
  LOAD_OR_SKIP(ref, "gelu");
  const int64_t n = 1000;  // more than one chunk boundary is not needed; odd sizes are
  std::vector<T> in{T({n}, randn(n, 1, 3.0))};
  std::vector<T> out{T({n})};
  run_ref(ref, in, out, {}, {n});
  for (int64_t i = 0; i < n; ++i) {
    double x = in[0][i];
    double expect = x * 0.5 * std::erfc(-x / std::sqrt(2.0));  // Phi via erfc
    ASSERT_NEAR(out[0][i], expect, 1e-13 * (1 + std::fabs(expect))) << "at " << i << ", x=" << x;
  }
}

TEST(Reference, GeluCoversLargeN) {
  LOAD_OR_SKIP(ref, "gelu");
  // Past the reference's internal chunking (65536): every element must be written.
  const int64_t n = 200003;
  std::vector<T> in{T({n}, std::vector<double>(n, 1.0))};
  std::vector<T> out{T({n})};
  run_ref(ref, in, out, {}, {n});
  for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(out[0][i], 0.8413447460685429, 1e-15) << i;
}

// ---------------------------------------------------------------------------------------------
TEST(Reference, RowSumHandValues) {
  LOAD_OR_SKIP(ref, "row_sum");
  std::vector<T> in{T({2, 3}, {1, 2, 3, 4, 5, 6})};
  std::vector<T> out{T({2})};
  run_ref(ref, in, out, {}, {2, 3});
  EXPECT_EQ(out[0][0], 6.0);
  EXPECT_EQ(out[0][1], 15.0);
}

TEST(Reference, RowSumMatchesAccumulate) {
  LOAD_OR_SKIP(ref, "row_sum");
  const int64_t B = 7, N = 33;
  std::vector<T> in{T({B, N}, randint(B * N, 2))};
  std::vector<T> out{T({B})};
  run_ref(ref, in, out, {}, {B, N});
  for (int64_t b = 0; b < B; ++b) {
    double s = std::accumulate(in[0].data.begin() + b * N, in[0].data.begin() + (b + 1) * N, 0.0);
    EXPECT_EQ(out[0][b], s) << "row " << b;
  }
}

// ---------------------------------------------------------------------------------------------
TEST(Reference, SoftmaxRowsSumToOneAndRatiosAreExponentials) {
  LOAD_OR_SKIP(ref, "softmax");
  const int64_t B = 5, N = 17;
  std::vector<T> in{T({B, N}, randn(B * N, 3, 4.0))};
  std::vector<T> out{T({B, N})};
  run_ref(ref, in, out, {}, {B, N});
  for (int64_t b = 0; b < B; ++b) {
    double s = 0;
    for (int64_t i = 0; i < N; ++i) {
      double y = out[0][b * N + i];
      EXPECT_GT(y, 0.0);
      EXPECT_LE(y, 1.0);
      s += y;
    }
    EXPECT_NEAR(s, 1.0, 1e-12) << "row " << b;
    for (int64_t i = 1; i < N; ++i)
      EXPECT_NEAR(std::log(out[0][b * N + i] / out[0][b * N]), in[0][b * N + i] - in[0][b * N],
                  1e-9);
  }
}

TEST(Reference, SoftmaxIsStableForHugeLogits) {
  LOAD_OR_SKIP(ref, "softmax");
  // exp(1000) overflows double: only a max-subtracted softmax gets this right.
  std::vector<T> in{T({2, 2}, {1000, 1001, -1000, -1001})};
  std::vector<T> out{T({2, 2})};
  run_ref(ref, in, out, {}, {2, 2});
  const double e = std::exp(1.0);
  EXPECT_NEAR(out[0][0], 1 / (1 + e), 1e-15);
  EXPECT_NEAR(out[0][1], e / (1 + e), 1e-15);
  EXPECT_NEAR(out[0][2], e / (1 + e), 1e-15);
  EXPECT_NEAR(out[0][3], 1 / (1 + e), 1e-15);
}

TEST(Reference, SoftmaxSingleColumnIsOne) {
  LOAD_OR_SKIP(ref, "softmax");
  std::vector<T> in{T({3, 1}, {-5, 0, 7})};
  std::vector<T> out{T({3, 1})};
  run_ref(ref, in, out, {}, {3, 1});
  for (int i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(out[0][i], 1.0);
}

// ---------------------------------------------------------------------------------------------
TEST(Reference, LayernormHandValues) {
  LOAD_OR_SKIP(ref, "layernorm");
  // x = [1, 2, 3]: mean 2, biased variance 2/3; eps = 0 => z = [-sqrt(1.5), 0, sqrt(1.5)].
  std::vector<T> in{T({1, 3}, {1, 2, 3}), T({3}, {1, 2, 3}), T({3}, {10, 20, 30})};
  std::vector<T> out{T({1, 3})};
  run_ref(ref, in, out, {0.0}, {1, 3});
  const double z = std::sqrt(1.5);
  EXPECT_NEAR(out[0][0], -z * 1 + 10, 1e-14);
  EXPECT_NEAR(out[0][1], 20, 1e-14);
  EXPECT_NEAR(out[0][2], z * 3 + 30, 1e-14);
}

TEST(Reference, LayernormNormalizesBeforeAffine) {
  LOAD_OR_SKIP(ref, "layernorm");
  const int64_t B = 6, N = 37;
  auto x = randn(B * N, 4, 2.0);
  for (auto& v : x) v += 3.0;  // nonzero mean
  std::vector<T> in{T({B, N}, x), T({N}, std::vector<double>(N, 1.0)),
                    T({N}, std::vector<double>(N, 0.0))};
  std::vector<T> out{T({B, N})};
  const double eps = 1e-5;
  run_ref(ref, in, out, {eps}, {B, N});
  for (int64_t b = 0; b < B; ++b) {
    double m = 0, v = 0, xm = 0, xv = 0;
    for (int64_t i = 0; i < N; ++i) m += out[0][b * N + i], xm += x[b * N + i];
    m /= N, xm /= N;
    for (int64_t i = 0; i < N; ++i) {
      v += (out[0][b * N + i] - m) * (out[0][b * N + i] - m);
      xv += (x[b * N + i] - xm) * (x[b * N + i] - xm);
    }
    v /= N, xv /= N;
    EXPECT_NEAR(m, 0.0, 1e-12) << "row " << b;
    EXPECT_NEAR(v, xv / (xv + eps), 1e-12) << "row " << b;  // exactly 1 when eps = 0
  }
  // And the affine part: y = z * w + b elementwise, against the unit-weight result.
  auto z = out[0].data;
  std::vector<double> w = randn(N, 5), bias = randn(N, 6);
  in[1] = T({N}, w);
  in[2] = T({N}, bias);
  run_ref(ref, in, out, {eps}, {B, N});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < N; ++i)
      ASSERT_NEAR(out[0][b * N + i], z[b * N + i] * w[i] + bias[i], 1e-12);
}

// ---------------------------------------------------------------------------------------------
void check_matmul(const char* task) {
  std::string why_;
  RefFn ref = load_reference(task, &why_);
  if (!ref && !why_.empty()) GTEST_SKIP() << why_;
  ASSERT_NE(ref, nullptr);
  const int64_t M = 5, N = 7, K = 9;
  auto A = randint(M * K, 7), B = randint(K * N, 8);
  std::vector<T> in{T({M, K}, A), T({K, N}, B)};
  std::vector<T> out{T({M, N})};
  run_ref(ref, in, out, {}, {M, N, K});
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];  // i-j-k: independent order
      EXPECT_EQ(out[0][i * N + j], s) << task << " C[" << i << "," << j << "]";
    }
  // A * I = A, with non-square shapes (M=5, N=K=4).
  std::vector<double> I(16, 0.0);
  for (int k = 0; k < 4; ++k) I[k * 4 + k] = 1.0;
  std::vector<double> A2 = randn(5 * 4, 9);
  std::vector<T> in2{T({5, 4}, A2), T({4, 4}, I)};
  std::vector<T> out2{T({5, 4})};
  run_ref(ref, in2, out2, {}, {5, 4, 4});
  for (int i = 0; i < 20; ++i) EXPECT_EQ(out2[0][i], A2[i]) << task;
}

TEST(Reference, MatmulF32) {
  check_matmul("matmul_f32");
}
TEST(Reference, MatmulBf16) {
  check_matmul("matmul_bf16");
}

// ---------------------------------------------------------------------------------------------
// dims order: N, C, H, W, K, R, S, P
TEST(Reference, Conv2dDeltaKernelIsIdentity) {
  LOAD_OR_SKIP(ref, "conv2d");
  const int64_t N = 2, C = 3, H = 5, W = 4, K = 3, R = 3, S = 3, P = 1;
  auto x = randn(N * C * H * W, 10);
  std::vector<double> w(K * C * R * S, 0.0);
  for (int64_t k = 0; k < K; ++k) w[((k * C + k) * R + 1) * S + 1] = 1.0;  // centre tap, c == k
  std::vector<T> in{T({N, C, H, W}, x), T({K, C, R, S}, w)};
  std::vector<T> out{T({N, K, H, W})};
  run_ref(ref, in, out, {}, {N, C, H, W, K, R, S, P});
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(out[0].data[i], x[i]) << i;
}

TEST(Reference, Conv2dMatchesExplicitPadding) {
  LOAD_OR_SKIP(ref, "conv2d");
  const int64_t N = 2, C = 2, H = 4, W = 6, K = 3, R = 2, S = 3, P = 1;
  const int64_t HO = H + 2 * P - R + 1, WO = W + 2 * P - S + 1;
  auto x = randint(N * C * H * W, 11), w = randint(K * C * R * S, 12);
  std::vector<T> in{T({N, C, H, W}, x), T({K, C, R, S}, w)};
  std::vector<T> out{T({N, K, HO, WO})};
  run_ref(ref, in, out, {}, {N, C, H, W, K, R, S, P});
  // Independent: materialize the zero-padded input, then a valid correlation without bounds checks.
  const int64_t HP = H + 2 * P, WP = W + 2 * P;
  std::vector<double> xp(N * C * HP * WP, 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t ww = 0; ww < W; ++ww)
          xp[((n * C + c) * HP + h + P) * WP + ww + P] = x[((n * C + c) * H + h) * W + ww];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t oh = 0; oh < HO; ++oh)
        for (int64_t ow = 0; ow < WO; ++ow) {
          double s = 0;
          for (int64_t c = 0; c < C; ++c)
            for (int64_t r = 0; r < R; ++r)
              for (int64_t q = 0; q < S; ++q)
                s += xp[((n * C + c) * HP + oh + r) * WP + ow + q] *
                     w[((k * C + c) * R + r) * S + q];
          EXPECT_EQ(out[0][((n * K + k) * HO + oh) * WO + ow], s)
              << n << "," << k << "," << oh << "," << ow;
        }
}

// ---------------------------------------------------------------------------------------------
TEST(Reference, TransposeHandValuesAndTwiceIsIdentity) {
  LOAD_OR_SKIP(ref, "transpose");
  std::vector<T> in{T({2, 3}, {1, 2, 3, 4, 5, 6})};
  std::vector<T> out{T({3, 2})};
  run_ref(ref, in, out, {}, {2, 3});
  EXPECT_EQ(out[0].data, (std::vector<double>{1, 4, 2, 5, 3, 6}));

  const int64_t M = 7, N = 33;
  auto x = randn(M * N, 13);
  std::vector<T> a{T({M, N}, x)};
  std::vector<T> b{T({N, M})};
  run_ref(ref, a, b, {}, {M, N});
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) ASSERT_EQ(b[0][j * M + i], x[i * N + j]);
  std::vector<T> c{T({M, N})};
  run_ref(ref, b, c, {}, {N, M});
  EXPECT_EQ(c[0].data, x);
}

// ---------------------------------------------------------------------------------------------
TEST(Reference, PrefixSumHandValues) {
  LOAD_OR_SKIP(ref, "prefix_sum");
  std::vector<T> in{T({2, 4}, {1, 2, 3, 4, -1, 1, -1, 1})};
  std::vector<T> out{T({2, 4})};
  run_ref(ref, in, out, {}, {2, 4});
  EXPECT_EQ(out[0].data, (std::vector<double>{1, 3, 6, 10, -1, 0, -1, 0}));  // restarts per row
}

TEST(Reference, PrefixSumDifferencesAndLastIsRowSum) {
  LOAD_OR_SKIP(ref, "prefix_sum");
  const int64_t B = 5, N = 33;
  auto x = randint(B * N, 14);
  std::vector<T> in{T({B, N}, x)};
  std::vector<T> out{T({B, N})};
  run_ref(ref, in, out, {}, {B, N});
  for (int64_t b = 0; b < B; ++b) {
    EXPECT_EQ(out[0][b * N], x[b * N]);
    for (int64_t i = 1; i < N; ++i)
      EXPECT_EQ(out[0][b * N + i] - out[0][b * N + i - 1], x[b * N + i]);
    EXPECT_EQ(out[0][b * N + N - 1],
              std::accumulate(x.begin() + b * N, x.begin() + (b + 1) * N, 0.0));
  }
}

// Every bundled task directory must have a reference that compiles and exports kevo_reference.
TEST(Reference, EveryBundledTaskReferenceLoads) {
  const fs::path tasks = fs::path(KEVO_SOURCE_DIR) / "tasks";
  ASSERT_TRUE(fs::is_directory(tasks)) << tasks;
  int count = 0;
  for (const auto& e : fs::directory_iterator(tasks)) {
    if (!fs::exists(e.path() / "reference.cpp")) continue;
    std::string why;
    RefFn fn = load_reference(e.path().filename().string(), &why);
    if (!fn && !why.empty()) GTEST_SKIP() << why;
    EXPECT_NE(fn, nullptr) << e.path();
    ++count;
  }
  EXPECT_GE(count, 9);
}

}  // namespace
