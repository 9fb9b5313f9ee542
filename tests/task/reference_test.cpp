// Unit tests of the bundled tasks' CPU references (tasks/*/reference.cpp). Each reference is
// compiled with the host compiler into a shared object, loaded, run on tiny hand-made configs with
// a serial parallel_for, and compared with an independent implementation written here,
// hand-computed values or mathematical properties of the op.
#include <dlfcn.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <kevo/reference.h>

#include "reference_support.h"

namespace fs = std::filesystem;
using kevo::test::load_reference;
using kevo::test::RefFn;
using kevo::test::run_ref;
using kevo::test::T;

namespace {

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

// =============================================================================================
// The suite's tasks. Each reference is checked against an independent formulation
// (written differently from reference.cpp), hand-computed values or a mathematical property.

// Runs a one-input, one-output reference and returns the output.
std::vector<double> run1(RefFn fn, const T& x, std::vector<int64_t> out_shape,
                         const std::vector<int64_t>& dims,
                         const std::vector<double>& scalars = {}) {
  std::vector<T> in{x};
  std::vector<T> out{T(std::move(out_shape))};
  run_ref(fn, in, out, scalars, dims);
  return out[0].data;
}

// Elementwise activations: hand values and an independent formula on random inputs.
void check_elementwise(const char* task, const std::vector<double>& scalars,
                       const std::function<double(double)>& f, double tol) {
  std::string why_;
  RefFn ref = load_reference(task, &why_);
  if (!ref && !why_.empty()) GTEST_SKIP() << why_;
  ASSERT_NE(ref, nullptr);
  const int64_t n = 70001;  // past the reference's 65536-element chunks
  auto x = randn(n, 21, 4.0);
  x[0] = 0.0, x[1] = 1.0, x[2] = -1.0, x[3] = 30.0, x[4] = -30.0;
  auto y = run1(ref, T({n}, x), {n}, {n}, scalars);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_NEAR(y[i], f(x[i]), tol * (1 + std::fabs(f(x[i])))) << task << " at x=" << x[i];
}

TEST(Reference, Relu) {
  check_elementwise(
      "relu", {}, [](double v) { return v < 0 ? 0.0 : v; }, 0);
}
TEST(Reference, Silu) {
  // sigmoid via tanh: 1/(1+e^-x) = (1 + tanh(x/2)) / 2.
  check_elementwise(
      "silu", {}, [](double v) { return v * 0.5 * (1 + std::tanh(v / 2)); }, 1e-13);
}
TEST(Reference, Sigmoid) {
  check_elementwise(
      "sigmoid", {}, [](double v) { return 0.5 * (1 + std::tanh(v / 2)); }, 1e-13);
}
TEST(Reference, Tanh) {
  check_elementwise(
      "tanh", {}, [](double v) { return 2.0 / (1 + std::exp(-2 * v)) - 1; }, 1e-12);
}
TEST(Reference, LeakyRelu) {
  check_elementwise(
      "leaky_relu", {0.01}, [](double v) { return std::max(v, 0.0) + 0.01 * std::min(v, 0.0); },
      1e-15);
}
TEST(Reference, Hardtanh) {
  check_elementwise(
      "hardtanh", {-1.0, 1.0}, [](double v) { return v > 1    ? 1.0
                                                     : v < -1 ? -1.0
                                                              : v; }, 0);
}

TEST(Reference, BiasScale) {
  LOAD_OR_SKIP(ref, "bias_scale");
  const int64_t B = 3, N = 5;
  auto x = randn(B * N, 22), b = randn(N, 23), s = randn(N, 24);
  std::vector<T> in{T({B, N}, x), T({N}, b), T({N}, s)};
  std::vector<T> out{T({B, N})};
  run_ref(ref, in, out, {}, {B, N});
  for (int64_t i = 0; i < B * N; ++i)
    EXPECT_NEAR(out[0][i], x[i] * s[i % N] + b[i % N] * s[i % N], 1e-14) << i;
}

TEST(Reference, SwigluBf16) {
  LOAD_OR_SKIP(ref, "swiglu_bf16");
  const int64_t M = 3, N = 4;
  auto x = randn(M * 2 * N, 25, 2.0);
  auto y = run1(ref, T({M, 2 * N}, x), {M, N}, {M, N});
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double g = x[m * 2 * N + n], u = x[m * 2 * N + N + n];
      EXPECT_NEAR(y[m * N + n], g * 0.5 * (1 + std::tanh(g / 2)) * u, 1e-13) << m << "," << n;
    }
}

// ---------------------------------------------------------------------------------------------
TEST(Reference, SumDim1) {
  LOAD_OR_SKIP(ref, "sum_dim1");
  const int64_t B = 3, R = 5, N = 7;
  auto x = randint(B * R * N, 26);
  auto y = run1(ref, T({B, R, N}, x), {B, N}, {B, R, N});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t n = 0; n < N; ++n) {
      double s = 0;
      for (int64_t r = R - 1; r >= 0; --r) s += x[(b * R + r) * N + n];
      EXPECT_EQ(y[b * N + n], s);
    }
}

TEST(Reference, MaxDim0) {
  LOAD_OR_SKIP(ref, "max_dim0");
  std::vector<double> x{1, -5, 3, 4, -2, 3, -1, 0, 2};  // [3, 3]
  EXPECT_EQ(run1(ref, T({3, 3}, x), {3}, {3, 3}), (std::vector<double>{4, 0, 3}));
  const int64_t R = 300, N = 517;  // more than one 256-column block
  auto r = randn(R * N, 27);
  auto y = run1(ref, T({R, N}, r), {N}, {R, N});
  for (int64_t n = 0; n < N; ++n) {
    double m = -INFINITY;
    for (int64_t i = 0; i < R; ++i) m = std::max(m, r[i * N + n]);
    ASSERT_EQ(y[n], m) << n;
  }
}

TEST(Reference, Argmax1FirstIndexOnTies) {
  LOAD_OR_SKIP(ref, "argmax_dim1");
  // [B=1, R=4, N=3]: column 0 max at r=2; column 1 tie between r=0 and r=3 -> 0; column 2 -> 3.
  std::vector<double> x{1, 7, 0, 2, 5, 1, 9, 6, 1, -1, 7, 4};
  EXPECT_EQ(run1(ref, T({1, 4, 3}, x), {1, 3}, {1, 4, 3}), (std::vector<double>{2, 0, 3}));
  const int64_t B = 2, R = 9, N = 5;
  auto r = randint(B * R * N, 28, -3, 3);  // many ties
  auto y = run1(ref, T({B, R, N}, r), {B, N}, {B, R, N});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t n = 0; n < N; ++n) {
      int64_t best = 0;
      for (int64_t i = R - 1; i >= 0; --i)
        if (r[(b * R + i) * N + n] >= r[(b * R + best) * N + n]) best = i;
      EXPECT_EQ(y[b * N + n], static_cast<double>(best)) << b << "," << n;
    }
}

TEST(Reference, L2NormalizeUnitRowsSameDirection) {
  LOAD_OR_SKIP(ref, "l2_normalize");
  EXPECT_EQ(run1(ref, T({1, 2}, {3, 4}), {1, 2}, {1, 2}, {1e-12}), (std::vector<double>{0.6, 0.8}));
  EXPECT_EQ(run1(ref, T({1, 2}, {0, 0}), {1, 2}, {1, 2}, {1e-12}), (std::vector<double>{0, 0}));
  const int64_t B = 4, N = 9;
  auto x = randn(B * N, 29);
  auto y = run1(ref, T({B, N}, x), {B, N}, {B, N}, {1e-12});
  for (int64_t b = 0; b < B; ++b) {
    double s = 0;
    for (int64_t i = 0; i < N; ++i) s += y[b * N + i] * y[b * N + i];
    EXPECT_NEAR(s, 1.0, 1e-14);
    for (int64_t i = 1; i < N; ++i)
      EXPECT_NEAR(y[b * N + i] * x[b * N], y[b * N] * x[b * N + i], 1e-14);
  }
}

TEST(Reference, FrobeniusNormalize) {
  LOAD_OR_SKIP(ref, "frobenius_normalize");
  EXPECT_EQ(run1(ref, T({2}, {3, -4}), {2}, {2}), (std::vector<double>{0.6, -0.8}));
  const int64_t n = 150001;  // several of the reference's chunks
  auto x = randn(n, 30);
  auto y = run1(ref, T({n}, x), {n}, {n});
  double s = 0, norm = 0;
  for (int64_t i = 0; i < n; ++i) s += y[i] * y[i], norm += x[i] * x[i];
  EXPECT_NEAR(s, 1.0, 1e-12);
  norm = std::sqrt(norm);
  for (int64_t i = 0; i < n; i += 997) ASSERT_NEAR(y[i] * norm, x[i], 1e-12);
}

// ---------------------------------------------------------------------------------------------
TEST(Reference, LogSoftmax) {
  LOAD_OR_SKIP(ref, "log_softmax");
  auto huge = run1(ref, T({1, 2}, {1000, 1000}), {1, 2}, {1, 2});
  EXPECT_NEAR(huge[0], -std::log(2.0), 1e-15);
  const int64_t B = 3, N = 11;
  auto x = randn(B * N, 31, 4.0);
  auto y = run1(ref, T({B, N}, x), {B, N}, {B, N});
  for (int64_t b = 0; b < B; ++b) {
    double s = 0;
    for (int64_t i = 0; i < N; ++i) s += std::exp(y[b * N + i]);
    EXPECT_NEAR(s, 1.0, 1e-13);
    for (int64_t i = 1; i < N; ++i)
      EXPECT_NEAR(y[b * N + i] - y[b * N], x[b * N + i] - x[b * N], 1e-12);
  }
}

TEST(Reference, CausalSoftmax) {
  LOAD_OR_SKIP(ref, "causal_softmax");
  const int64_t B = 2, Tn = 6;
  const double scale = 0.125;
  auto x = randn(B * Tn * Tn, 32, 8.0);
  auto y = run1(ref, T({B, Tn, Tn}, x), {B, Tn, Tn}, {B, Tn}, {scale});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < Tn; ++i) {
      const int64_t row = (b * Tn + i) * Tn;
      double s = 0;
      for (int64_t j = 0; j < Tn; ++j) {
        if (j > i)
          EXPECT_EQ(y[row + j], 0.0);
        else
          s += y[row + j];
      }
      EXPECT_NEAR(s, 1.0, 1e-13);
      for (int64_t j = 1; j <= i; ++j)  // ratios are exp(scale * dx)
        EXPECT_NEAR(std::log(y[row + j] / y[row]), scale * (x[row + j] - x[row]), 1e-10);
    }
  EXPECT_EQ(y[0], 1.0);  // the first row sees only itself
}

// ---------------------------------------------------------------------------------------------
TEST(Reference, RmsNormOverChannels) {
  LOAD_OR_SKIP(ref, "rms_norm");
  const int64_t B = 2, C = 3, S = 1030;  // S past the reference's 1024-wide blocks
  auto x = randn(B * C * S, 33), w = randn(C, 34);
  std::vector<T> in{T({B, C, S}, x), T({C}, w)};
  std::vector<T> out{T({B, C, S})};
  const double eps = 1e-5;
  run_ref(ref, in, out, {eps}, {B, C, S});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s) {
      double ms = 0;
      for (int64_t c = 0; c < C; ++c) ms += std::pow(x[(b * C + c) * S + s], 2) / C;
      for (int64_t c = 0; c < C; ++c)
        ASSERT_NEAR(out[0][(b * C + c) * S + s],
                    x[(b * C + c) * S + s] * w[c] / std::sqrt(ms + eps), 1e-12);
    }
}

TEST(Reference, BatchNormInference) {
  LOAD_OR_SKIP(ref, "batch_norm");
  // N=2, C=2, H=1, W=2; channel 0: mean 1, var 4 -> (x-1)/2 * 3 + 1; channel 1: mean 0, var 1 -> x.
  std::vector<T> in{T({2, 2, 1, 2}, {1, 3, 5, 6, -1, 5, 7, 8}), T({2}, {1, 0}), T({2}, {4, 1}),
                    T({2}, {3, 1}), T({2}, {1, 0})};
  std::vector<T> out{T({2, 2, 1, 2})};
  run_ref(ref, in, out, {0.0}, {2, 2, 1, 2});
  EXPECT_EQ(out[0].data, (std::vector<double>{1, 4, 5, 6, -2, 7, 7, 8}));
}

TEST(Reference, GroupNorm) {
  LOAD_OR_SKIP(ref, "group_norm");
  const int64_t N = 2, C = 6, H = 3, W = 5, G = 3, cpg = C / G, HW = H * W;
  auto x = randn(N * C * HW, 35, 2.0);
  for (auto& v : x) v += 5.0;
  auto w = randn(C, 36), b = randn(C, 37);
  std::vector<T> in{T({N, C, H, W}, x), T({C}, w), T({C}, b)};
  std::vector<T> out{T({N, C, H, W})};
  const double eps = 1e-5;
  run_ref(ref, in, out, {eps}, {N, C, H, W, G});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < G; ++g) {
      // Independent: one pass of sums and sums of squares (fine in double for these values).
      double s = 0, q = 0;
      const int64_t base = (n * C + g * cpg) * HW, len = cpg * HW;
      for (int64_t i = 0; i < len; ++i) s += x[base + i], q += x[base + i] * x[base + i];
      const double mean = s / len, var = q / len - mean * mean;
      for (int64_t i = 0; i < len; ++i) {
        const int64_t c = g * cpg + i / HW;
        ASSERT_NEAR(out[0][base + i], (x[base + i] - mean) / std::sqrt(var + eps) * w[c] + b[c],
                    1e-10);
      }
    }
}

// ---------------------------------------------------------------------------------------------
TEST(Reference, MatmulTallSkinny) {
  check_matmul("matmul_tall_skinny");
}
TEST(Reference, MatmulF16) {
  check_matmul("matmul_f16");
}

void check_bmm(const char* task) {
  std::string why_;
  RefFn ref = load_reference(task, &why_);
  if (!ref && !why_.empty()) GTEST_SKIP() << why_;
  ASSERT_NE(ref, nullptr);
  const int64_t BT = 3, M = 4, N = 5, K = 6;
  auto A = randint(BT * M * K, 38), B = randint(BT * K * N, 39);
  std::vector<T> in{T({BT, M, K}, A), T({BT, K, N}, B)};
  std::vector<T> out{T({BT, M, N})};
  run_ref(ref, in, out, {}, {BT, M, N, K});
  for (int64_t b = 0; b < BT; ++b)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) s += A[(b * M + i) * K + k] * B[(b * K + k) * N + j];
        EXPECT_EQ(out[0][(b * M + i) * N + j], s) << task << " " << b << "," << i << "," << j;
      }
}
TEST(Reference, BmmF32) {
  check_bmm("bmm_f32");
}
TEST(Reference, BmmBf16) {
  check_bmm("bmm_bf16");
}

TEST(Reference, MatmulNtIsMatmulWithTransposedB) {
  LOAD_OR_SKIP(ref, "matmul_nt_f32");
  const int64_t M = 4, N = 3, K = 5;
  auto A = randint(M * K, 40), B = randint(N * K, 41);
  std::vector<T> in{T({M, K}, A), T({N, K}, B)};
  std::vector<T> out{T({M, N})};
  run_ref(ref, in, out, {}, {M, N, K});
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[j * K + k];
      EXPECT_EQ(out[0][i * N + j], s);
    }
}

TEST(Reference, Matvec) {
  LOAD_OR_SKIP(ref, "matvec");
  std::vector<T> in{T({2, 3}, {1, 2, 3, 4, 5, 6}), T({3}, {1, 0, -1})};
  std::vector<T> out{T({2})};
  run_ref(ref, in, out, {}, {2, 3});
  EXPECT_EQ(out[0].data, (std::vector<double>{-2, -2}));
}

// ---------------------------------------------------------------------------------------------
TEST(Reference, Conv1dMatchesExplicitPadding) {
  LOAD_OR_SKIP(ref, "conv1d");
  const int64_t N = 2, C = 3, L = 8, K = 2, R = 3, P = 2, LO = L + 2 * P - R + 1;
  auto x = randint(N * C * L, 42), w = randint(K * C * R, 43);
  std::vector<T> in{T({N, C, L}, x), T({K, C, R}, w)};
  std::vector<T> out{T({N, K, LO})};
  run_ref(ref, in, out, {}, {N, C, L, K, R, P});
  const int64_t LP = L + 2 * P;
  std::vector<double> xp(N * C * LP, 0.0);
  for (int64_t nc = 0; nc < N * C; ++nc)
    for (int64_t l = 0; l < L; ++l) xp[nc * LP + l + P] = x[nc * L + l];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t o = 0; o < LO; ++o) {
        double s = 0;
        for (int64_t c = 0; c < C; ++c)
          for (int64_t r = 0; r < R; ++r)
            s += xp[(n * C + c) * LP + o + r] * w[(k * C + c) * R + r];
        EXPECT_EQ(out[0][(n * K + k) * LO + o], s) << n << "," << k << "," << o;
      }
}

TEST(Reference, Conv2dDepthwise) {
  LOAD_OR_SKIP(ref, "conv2d_depthwise");
  const int64_t N = 2, C = 3, H = 4, W = 5, R = 3, S = 2, P = 1;
  const int64_t HO = H + 2 * P - R + 1, WO = W + 2 * P - S + 1, HP = H + 2 * P, WP = W + 2 * P;
  auto x = randint(N * C * H * W, 44), w = randint(C * R * S, 45);
  std::vector<T> in{T({N, C, H, W}, x), T({C, R, S}, w)};
  std::vector<T> out{T({N, C, HO, WO})};
  run_ref(ref, in, out, {}, {N, C, H, W, R, S, P});
  std::vector<double> xp(N * C * HP * WP, 0.0);
  for (int64_t nc = 0; nc < N * C; ++nc)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t q = 0; q < W; ++q) xp[(nc * HP + h + P) * WP + q + P] = x[(nc * H + h) * W + q];
  for (int64_t nc = 0; nc < N * C; ++nc)
    for (int64_t oh = 0; oh < HO; ++oh)
      for (int64_t ow = 0; ow < WO; ++ow) {
        double s = 0;
        for (int64_t r = 0; r < R; ++r)
          for (int64_t q = 0; q < S; ++q)
            s += xp[(nc * HP + oh + r) * WP + ow + q] * w[((nc % C) * R + r) * S + q];
        EXPECT_EQ(out[0][(nc * HO + oh) * WO + ow], s);
      }
}

TEST(Reference, ConvTranspose2dMatchesGatherForm) {
  LOAD_OR_SKIP(ref, "conv_transpose2d");
  for (int64_t T_ : {1, 2, 3}) {
    const int64_t N = 2, C = 2, H = 3, W = 4, K = 3, R = 3, S = 4, P = 1;
    const int64_t HO = (H - 1) * T_ - 2 * P + R, WO = (W - 1) * T_ - 2 * P + S;
    auto x = randint(N * C * H * W, 46), w = randint(C * K * R * S, 47);
    std::vector<T> in{T({N, C, H, W}, x), T({C, K, R, S}, w)};
    std::vector<T> out{T({N, K, HO, WO})};
    run_ref(ref, in, out, {}, {N, C, H, W, K, R, S, T_, P});
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < K; ++k)
        for (int64_t oh = 0; oh < HO; ++oh)
          for (int64_t ow = 0; ow < WO; ++ow) {
            double s = 0;  // gather: which (ih, r) land on oh?
            for (int64_t c = 0; c < C; ++c)
              for (int64_t ih = 0; ih < H; ++ih)
                for (int64_t iw = 0; iw < W; ++iw) {
                  const int64_t r = oh + P - ih * T_, q = ow + P - iw * T_;
                  if (r >= 0 && r < R && q >= 0 && q < S)
                    s += x[((n * C + c) * H + ih) * W + iw] * w[((c * K + k) * R + r) * S + q];
                }
            EXPECT_EQ(out[0][((n * K + k) * HO + oh) * WO + ow], s) << "stride " << T_;
          }
  }
}

// ---------------------------------------------------------------------------------------------
void check_pool(const char* task, bool is_max) {
  std::string why_;
  RefFn ref = load_reference(task, &why_);
  if (!ref && !why_.empty()) GTEST_SKIP() << why_;
  ASSERT_NE(ref, nullptr);
  for (auto [KS, Tt, P] :
       std::vector<std::array<int64_t, 3>>{{3, 2, 1}, {2, 2, 1}, {4, 3, 2}, {5, 1, 2}}) {
    const int64_t N = 2, C = 2, H = 7, W = 6;
    const int64_t HO = (H + 2 * P - KS) / Tt + 1, WO = (W + 2 * P - KS) / Tt + 1;
    auto x = randn(N * C * H * W, 48);
    auto y = run1(ref, T({N, C, H, W}, x), {N, C, HO, WO}, {N, C, H, W, KS, Tt, P});
    const int64_t HP = H + 2 * P, WP = W + 2 * P;
    std::vector<double> xp(N * C * HP * WP, is_max ? -INFINITY : 0.0);
    for (int64_t nc = 0; nc < N * C; ++nc)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t q = 0; q < W; ++q)
          xp[(nc * HP + h + P) * WP + q + P] = x[(nc * H + h) * W + q];
    for (int64_t nc = 0; nc < N * C; ++nc)
      for (int64_t oh = 0; oh < HO; ++oh)
        for (int64_t ow = 0; ow < WO; ++ow) {
          double acc = is_max ? -INFINITY : 0.0;
          for (int64_t i = 0; i < KS; ++i)
            for (int64_t j = 0; j < KS; ++j) {
              double v = xp[(nc * HP + oh * Tt + i) * WP + ow * Tt + j];
              acc = is_max ? std::max(acc, v) : acc + v;
            }
          if (!is_max) acc /= static_cast<double>(KS * KS);
          ASSERT_NEAR(y[(nc * HO + oh) * WO + ow], acc, 1e-14) << task << " KS=" << KS;
        }
  }
}
TEST(Reference, Maxpool2d) {
  check_pool("maxpool2d", true);
}
TEST(Reference, Avgpool2dCountsPadding) {
  check_pool("avgpool2d", false);
}

// ---------------------------------------------------------------------------------------------
TEST(Reference, Permute3d) {
  LOAD_OR_SKIP(ref, "permute3d");
  const int64_t A = 2, B = 3, C = 4;
  std::vector<double> x(A * B * C);
  std::iota(x.begin(), x.end(), 0.0);
  auto y = run1(ref, T({A, B, C}, x), {C, A, B}, {A, B, C});
  for (int64_t a = 0; a < A; ++a)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t c = 0; c < C; ++c) EXPECT_EQ(y[(c * A + a) * B + b], (a * B + b) * C + c);
}

TEST(Reference, PermuteHeads) {
  LOAD_OR_SKIP(ref, "permute_heads_bf16");
  const int64_t B = 2, S = 3, H = 4, D = 5;
  std::vector<double> x(B * S * H * D);
  std::iota(x.begin(), x.end(), 0.0);
  auto y = run1(ref, T({B, S, H, D}, x), {B, H, S, D}, {B, S, H, D});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t d = 0; d < D; ++d)
          EXPECT_EQ(y[((b * H + h) * S + s) * D + d], ((b * S + s) * H + h) * D + d);
}

TEST(Reference, CumsumExclusive) {
  LOAD_OR_SKIP(ref, "cumsum_exclusive");
  EXPECT_EQ(run1(ref, T({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), {2, 4}, {2, 4}),
            (std::vector<double>{0, 1, 3, 6, 0, 5, 11, 18}));
}

TEST(Reference, CumsumCols) {
  LOAD_OR_SKIP(ref, "cumsum_cols");
  EXPECT_EQ(run1(ref, T({3, 2}, {1, 2, 3, 4, 5, 6}), {3, 2}, {3, 2}),
            (std::vector<double>{1, 2, 4, 6, 9, 12}));
  const int64_t M = 9, N = 300;  // more than one 256-column block
  auto x = randint(M * N, 49);
  auto y = run1(ref, T({M, N}, x), {M, N}, {M, N});
  for (int64_t n = 0; n < N; ++n) {
    EXPECT_EQ(y[n], x[n]);
    for (int64_t i = 1; i < M; ++i) ASSERT_EQ(y[i * N + n] - y[(i - 1) * N + n], x[i * N + n]);
  }
}

// ---------------------------------------------------------------------------------------------
TEST(Reference, Embedding) {
  LOAD_OR_SKIP(ref, "embedding");
  std::vector<T> in{T({3}, {2, 0, 2}), T({3, 2}, {10, 11, 20, 21, 30, 31})};
  std::vector<T> out{T({3, 2})};
  run_ref(ref, in, out, {}, {3, 3, 2});
  EXPECT_EQ(out[0].data, (std::vector<double>{30, 31, 10, 11, 30, 31}));
}

TEST(Reference, GatherDim1) {
  LOAD_OR_SKIP(ref, "gather_dim1");
  std::vector<T> in{T({2, 3}, {1, 2, 3, 4, 5, 6}), T({2, 4}, {2, 2, 0, 1, 0, 1, 2, 0})};
  std::vector<T> out{T({2, 4})};
  run_ref(ref, in, out, {}, {2, 3, 4});
  EXPECT_EQ(out[0].data, (std::vector<double>{3, 3, 1, 2, 4, 5, 6, 4}));
}

TEST(Reference, ScatterAdd) {
  LOAD_OR_SKIP(ref, "scatter_add");
  const int64_t Tn = 200, V = 70, D = 3;  // V > 64: rows split over several tasks
  auto idx = randint(Tn, 50, 0, V - 1);
  auto src = randint(Tn * D, 51);
  std::vector<T> in{T({Tn}, idx), T({Tn, D}, src)};
  std::vector<T> out{T({V, D})};
  run_ref(ref, in, out, {}, {Tn, V, D});
  std::vector<double> want(V * D, 0.0);
  for (int64_t t = 0; t < Tn; ++t)
    for (int64_t d = 0; d < D; ++d) want[static_cast<int64_t>(idx[t]) * D + d] += src[t * D + d];
  EXPECT_EQ(out[0].data, want);
}

// ---------------------------------------------------------------------------------------------
TEST(Reference, CrossEntropy) {
  LOAD_OR_SKIP(ref, "cross_entropy");
  // Uniform logits: loss = log(C) whatever the targets.
  std::vector<T> in{T({2, 4}, std::vector<double>(8, 3.0)), T({2}, {1, 3})};
  std::vector<T> out{T({1})};
  run_ref(ref, in, out, {}, {2, 4});
  EXPECT_NEAR(out[0][0], std::log(4.0), 1e-15);
  // Independent: -log(softmax[target]) computed without max subtraction (small logits).
  const int64_t B = 5, C = 7;
  auto x = randn(B * C, 52);
  auto tg = randint(B, 53, 0, C - 1);
  std::vector<T> in2{T({B, C}, x), T({B}, tg)};
  run_ref(ref, in2, out, {}, {B, C});
  double want = 0;
  for (int64_t b = 0; b < B; ++b) {
    double s = 0;
    for (int64_t c = 0; c < C; ++c) s += std::exp(x[b * C + c]);
    want -= std::log(std::exp(x[b * C + static_cast<int64_t>(tg[b])]) / s) / B;
  }
  EXPECT_NEAR(out[0][0], want, 1e-13);
}

TEST(Reference, MseLoss) {
  LOAD_OR_SKIP(ref, "mse_loss");
  std::vector<T> in{T({3}, {1, 2, 3}), T({3}, {1, 0, 6})};
  std::vector<T> out{T({1})};
  run_ref(ref, in, out, {}, {3});
  EXPECT_NEAR(out[0][0], 13.0 / 3.0, 1e-15);
}

TEST(Reference, KlDiv) {
  LOAD_OR_SKIP(ref, "kl_div");
  const int64_t B = 3, C = 5;
  auto p = randn(B * C, 54), q = randn(B * C, 55);
  std::vector<T> same{T({B, C}, p), T({B, C}, p)};
  std::vector<T> out{T({1})};
  run_ref(ref, same, out, {}, {B, C});
  EXPECT_NEAR(out[0][0], 0.0, 1e-15);  // KL(P || P) = 0
  // Two classes: P = softmax(0, log 3) = (1/4, 3/4), Q uniform: KL = 1/4 log(1/2) + 3/4 log(3/2).
  std::vector<T> two{T({1, 2}, {0, std::log(3.0)}), T({1, 2}, {5, 5})};
  run_ref(ref, two, out, {}, {1, 2});
  EXPECT_NEAR(out[0][0], 0.25 * std::log(0.5) + 0.75 * std::log(1.5), 1e-15);
  std::vector<T> pq{T({B, C}, p), T({B, C}, q)};
  run_ref(ref, pq, out, {}, {B, C});
  EXPECT_GT(out[0][0], 0.0);  // Gibbs' inequality
}

// ---------------------------------------------------------------------------------------------
TEST(Reference, Attention) {
  LOAD_OR_SKIP(ref, "attention");
  const int64_t BH = 2, S = 5, D = 3;
  auto Q = randn(BH * S * D, 56), K = randn(BH * S * D, 57), V = randn(BH * S * D, 58);
  std::vector<T> in{T({BH, S, D}, Q), T({BH, S, D}, K), T({BH, S, D}, V)};
  std::vector<T> out{T({BH, S, D})};
  run_ref(ref, in, out, {}, {BH, S, D});
  for (int64_t h = 0; h < BH; ++h)  // independent: score matrix, row softmax, then P V
    for (int64_t i = 0; i < S; ++i) {
      std::vector<double> p(S);
      double z = 0;
      for (int64_t j = 0; j < S; ++j) {
        double s = 0;
        for (int64_t d = 0; d < D; ++d) s += Q[(h * S + i) * D + d] * K[(h * S + j) * D + d];
        z += (p[j] = std::exp(s / std::sqrt(3.0)));
      }
      for (int64_t d = 0; d < D; ++d) {
        double o = 0;
        for (int64_t j = 0; j < S; ++j) o += p[j] / z * V[(h * S + j) * D + d];
        EXPECT_NEAR(out[0][(h * S + i) * D + d], o, 1e-13);
      }
    }
  // Identical keys: every query averages V.
  std::vector<T> in2{T({1, 2, 1}, {3, -1}), T({1, 2, 1}, {1, 1}), T({1, 2, 1}, {2, 6})};
  std::vector<T> out2{T({1, 2, 1})};
  run_ref(ref, in2, out2, {}, {1, 2, 1});
  EXPECT_NEAR(out2[0][0], 4.0, 1e-14);
  EXPECT_NEAR(out2[0][1], 4.0, 1e-14);
}

// ---------------------------------------------------------------------------------------------
TEST(Reference, GemmBiasRelu) {
  LOAD_OR_SKIP(ref, "gemm_bias_relu");
  const int64_t M = 4, N = 5, K = 3;
  auto x = randint(M * K, 59), W = randint(N * K, 60), b = randint(N, 61);
  std::vector<T> in{T({M, K}, x), T({N, K}, W), T({N}, b)};
  std::vector<T> out{T({M, N})};
  run_ref(ref, in, out, {}, {M, N, K});
  int zeros = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = b[j];
      for (int64_t k = 0; k < K; ++k) s += W[j * K + k] * x[i * K + k];
      EXPECT_EQ(out[0][i * N + j], std::max(0.0, s));
      zeros += s <= 0;
    }
  EXPECT_GT(zeros, 0);  // the test exercises the ReLU
}

TEST(Reference, MatmulScaleResidual) {
  LOAD_OR_SKIP(ref, "matmul_scale_residual");
  std::vector<T> in{T({1, 2}, {1, 2}), T({2, 2}, {1, 0, 3, 4}), T({1, 2}, {10, 20})};
  std::vector<T> out{T({1, 2})};
  run_ref(ref, in, out, {0.5}, {1, 2, 2});
  EXPECT_EQ(out[0].data, (std::vector<double>{13.5, 24}));  // 0.5*[7, 8] + [10, 20]
}

TEST(Reference, GemmGeluSoftmax) {
  LOAD_OR_SKIP(ref, "gemm_gelu_softmax");
  const int64_t M = 3, N = 4, K = 5;
  auto x = randn(M * K, 62), W = randn(N * K, 63), b = randn(N, 64);
  std::vector<T> in{T({M, K}, x), T({N, K}, W), T({N}, b)};
  std::vector<T> out{T({M, N})};
  run_ref(ref, in, out, {}, {M, N, K});
  for (int64_t i = 0; i < M; ++i) {
    std::vector<double> e(N);
    double z = 0;
    for (int64_t j = 0; j < N; ++j) {
      double s = b[j];
      for (int64_t k = 0; k < K; ++k) s += x[i * K + k] * W[j * K + k];
      double g = s * 0.5 * std::erfc(-s / std::sqrt(2.0));  // x * Phi(x)
      z += (e[j] = std::exp(g));
    }
    for (int64_t j = 0; j < N; ++j) EXPECT_NEAR(out[0][i * N + j], e[j] / z, 1e-13);
  }
}

TEST(Reference, ConvBnRelu) {
  LOAD_OR_SKIP(ref, "conv_bn_relu");
  // Delta kernel (centre tap, c == k), zero bias, mean 1, var 4, gamma 2, beta 0.5:
  // y = max(0, (x - 1) / 2 * 2 + 0.5) = max(0, x - 0.5).
  const int64_t N = 1, C = 2, H = 3, W = 4, K = 2, R = 3, S = 3, P = 1;
  auto x = randn(N * C * H * W, 65);
  std::vector<double> w(K * C * R * S, 0.0);
  for (int64_t k = 0; k < K; ++k) w[((k * C + k) * R + 1) * S + 1] = 1.0;
  std::vector<T> in{T({N, C, H, W}, x), T({K, C, R, S}, w), T({K}, {0, 0}),    T({K}, {1, 1}),
                    T({K}, {4, 4}),     T({K}, {2, 2}),     T({K}, {0.5, 0.5})};
  std::vector<T> out{T({N, K, H, W})};
  run_ref(ref, in, out, {0.0}, {N, C, H, W, K, R, S, P});
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_NEAR(out[0].data[i], std::max(0.0, x[i] - 0.5), 1e-15);
}

// ---------------------------------------------------------------------------------------------
TEST(Reference, SpmvCsrMatchesDenseProduct) {
  LOAD_OR_SKIP(ref, "spmv_csr");
  const int64_t M = 11, N = 6, P = 4;
  int64_t nnz = 0;
  for (int64_t i = 0; i < M; ++i) nnz += 1 + i % P;
  ASSERT_EQ(nnz, M + ((M - M % P) / P) * (P * (P - 1) / 2) + (M % P) * (M % P - 1) / 2)
      << "the shape expression in task.toml";
  auto vals = randint(nnz, 66), cols = randint(nnz, 67, 0, N - 1), x = randint(N, 68);
  std::vector<T> in{T({nnz}, vals), T({nnz}, cols), T({N}, x)};
  std::vector<T> out{T({M})};
  run_ref(ref, in, out, {}, {M, N, P});
  std::vector<double> dense(M * N, 0.0);  // expand to dense (repeats add), then multiply
  for (int64_t i = 0, k = 0; i < M; ++i)
    for (int64_t e = 0; e <= i % P; ++e, ++k)
      dense[i * N + static_cast<int64_t>(cols[k])] += vals[k];
  for (int64_t i = 0; i < M; ++i) {
    double s = 0;
    for (int64_t j = 0; j < N; ++j) s += dense[i * N + j] * x[j];
    EXPECT_EQ(out[0][i], s) << "row " << i;
  }
}

TEST(Reference, Stencil3d7pt) {
  LOAD_OR_SKIP(ref, "stencil3d_7pt");
  const int64_t D = 3, H = 4, W = 5;
  auto x = randint(D * H * W, 69);
  auto y = run1(ref, T({D, H, W}, x), {D, H, W}, {D, H, W}, {0.5, 0.25});
  const int64_t Hp = H + 2, Wp = W + 2;
  std::vector<double> xp((D + 2) * Hp * Wp, 0.0);
  for (int64_t z = 0; z < D; ++z)
    for (int64_t r = 0; r < H; ++r)
      for (int64_t c = 0; c < W; ++c)
        xp[((z + 1) * Hp + r + 1) * Wp + c + 1] = x[(z * H + r) * W + c];
  auto at = [&](int64_t z, int64_t r, int64_t c) { return xp[(z * Hp + r) * Wp + c]; };
  for (int64_t z = 1; z <= D; ++z)
    for (int64_t r = 1; r <= H; ++r)
      for (int64_t c = 1; c <= W; ++c) {
        double nb = at(z - 1, r, c) + at(z + 1, r, c) + at(z, r - 1, c) + at(z, r + 1, c) +
                    at(z, r, c - 1) + at(z, r, c + 1);
        EXPECT_EQ(y[((z - 1) * H + r - 1) * W + c - 1], 0.5 * at(z, r, c) + 0.25 * nb);
      }
}

TEST(Reference, HistogramBinsAndClamping) {
  LOAD_OR_SKIP(ref, "histogram");
  // NB = 8: bins of width 1/32 covering [-1/8, 1/8); bin = floor(32 v) + 4, clamped.
  std::vector<double> x{0.0, -1.0 / 32, -1e-9, 1.0 / 32 - 1e-9, 0.1, -0.126, 5.0, -5.0, 3.0 / 32};
  auto c = run1(ref, T({9}, x), {8}, {9, 8});
  // 0 -> 4; -1/32 -> 3; -1e-9 -> 3; 1/32-eps -> 4; 0.1 -> 7; -0.126 -> clamp 0; 5 -> 7; -5 -> 0;
  // 3/32 -> 7.
  EXPECT_EQ(c, (std::vector<double>{2, 0, 0, 2, 2, 0, 0, 3}));
  // Counts always add up to N (over several of the reference's chunks).
  const int64_t n = (1 << 20) + 77;
  auto r = randn(n, 70);
  auto h = run1(ref, T({n}, r), {100}, {n, 100});
  EXPECT_EQ(std::accumulate(h.begin(), h.end(), 0.0), static_cast<double>(n));
}

TEST(Reference, NbodyAccel) {
  LOAD_OR_SKIP(ref, "nbody_accel");
  // Two bodies 2 apart on x, masses 1 and 3, eps2 = 0: a0 = 3 * 2 / 8 = 0.75, a1 = -1 * 2 / 8.
  std::vector<T> in{T({2, 3}, {0, 0, 0, 2, 0, 0}), T({2}, {1, 3})};
  std::vector<T> out{T({2, 3})};
  run_ref(ref, in, out, {0.0}, {2});
  EXPECT_EQ(out[0].data, (std::vector<double>{0.75, 0, 0, -0.25, 0, 0}));
  // Newton's third law: sum_i m_i a_i = 0 (with softening too).
  const int64_t n = 9;
  auto pos = randn(n * 3, 71);
  std::vector<double> m(n);
  for (int64_t i = 0; i < n; ++i) m[i] = 0.5 + 0.1 * i;
  std::vector<T> in2{T({n, 3}, pos), T({n}, m)};
  std::vector<T> out2{T({n, 3})};
  run_ref(ref, in2, out2, {0.0025}, {n});
  for (int d = 0; d < 3; ++d) {
    double s = 0, mag = 0;
    for (int64_t i = 0; i < n; ++i)
      s += m[i] * out2[0][i * 3 + d], mag += std::fabs(out2[0][i * 3 + d]);
    EXPECT_NEAR(s, 0.0, 1e-12 * mag);
    EXPECT_GT(mag, 0.1);
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
  EXPECT_GE(count, 50);
}

}  // namespace
