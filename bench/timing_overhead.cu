// What the work around each timed call costs (issue 13): the runner's fresh draw of every input
// (the timed draw time_batch uses, and the accurate one of correctness checks for comparison),
// the poison of every output, the L2 flush and the output sums, at gelu's size (2^29 f32 elements
// in, 2^29 out), against the call itself (a gelu-like elementwise kernel). The outside clock's
// precision is bounded by this work: the slower it is, the fewer calls fit in a batch.
//
//   nvcc -O3 -std=c++20 -arch=sm_90 -Isrc bench/timing_overhead.cu src/runner/device_data.cu -o timing_overhead
//   ./timing_overhead [log2 elements, default 29]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "runner/device_data.h"

#define CK(x)                                                               \
  do {                                                                      \
    cudaError_t e_ = (x);                                                   \
    if (e_ != cudaSuccess) {                                                \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));        \
      std::exit(1);                                                         \
    }                                                                       \
  } while (0)

__global__ void gelu_like(const float* x, float* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float v = x[i];
    y[i] = 0.5f * v * (1.f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
  }
}

template <class F>
float median_ms(F&& f, cudaStream_t s, int reps = 9) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> t;
  f();  // warm
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(a, s));
    f();
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main(int argc, char** argv) {
  const int lg = argc > 1 ? std::atoi(argv[1]) : 29;
  const int64_t n = int64_t(1) << lg;
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  float *x, *y;
  void* flush;
  const size_t flush_bytes = size_t(128) << 20;
  CK(cudaMalloc(&x, n * 4));
  CK(cudaMalloc(&y, n * 4));
  CK(cudaMalloc(&flush, flush_bytes));
  kevo::dev::OutputSums* sums;
  CK(cudaMalloc(&sums, sizeof *sums));
  kevo::DrawSpec d;  // standard normal
  uint64_t call = 1;
  auto grid = [&] { return int((n + 255) / 256 > 8192 ? 8192 : (n + 255) / 256); };

  float t_call = median_ms([&] { gelu_like<<<grid(), 256, 0, s>>>(x, y, n); }, s);
  d.kind = kevo::kDrawNormal;
  float t_fill_normal = median_ms([&] { d.base = kevo::draw_call_base(7, call++); CK(kevo::dev::fill(x, 0, n, d, s)); }, s);
  d.kind = kevo::kDrawUniform;
  float t_fill_uniform = median_ms([&] { d.base = kevo::draw_call_base(7, call++); CK(kevo::dev::fill(x, 0, n, d, s)); }, s);
  float t_poison = median_ms([&] { CK(cudaMemsetAsync(y, 0xFF, n * 4, s)); }, s);
  float t_flush = median_ms([&] { CK(cudaMemsetAsync(flush, int(call++ & 0xff), flush_bytes, s)); }, s);
  float t_sums = median_ms([&] { CK(kevo::dev::sums(y, 0, n, 99 + call++, sums, s)); }, s);
  d.kind = kevo::kDrawNormal;
  d.timed = true;
  float t_fill_timed = median_ms([&] { d.base = kevo::draw_call_base(7, call++); CK(kevo::dev::fill(x, 0, n, d, s)); }, s);
  std::printf("elements 2^%d (%.2f GiB per tensor)\n", lg, n * 4.0 / (1 << 30));
  std::printf("call (gelu-like)   %8.3f ms\n", t_call);
  std::printf("fill normal        %8.3f ms  (%.2fx the call)\n", t_fill_normal, t_fill_normal / t_call);
  std::printf("fill uniform       %8.3f ms  (%.2fx)\n", t_fill_uniform, t_fill_uniform / t_call);
  std::printf("poison outputs     %8.3f ms  (%.2fx)\n", t_poison, t_poison / t_call);
  std::printf("flush (128 MiB)    %8.3f ms  (%.2fx)\n", t_flush, t_flush / t_call);
  std::printf("output sums        %8.3f ms  (%.2fx)\n", t_sums, t_sums / t_call);
  std::printf("fill timed normal  %8.3f ms  (%.2fx)  [draw_timed_value: what time_batch draws]\n", t_fill_timed, t_fill_timed / t_call);
  const float around = t_fill_timed + t_poison + t_flush + t_sums;
  std::printf("around one call    %8.3f ms  (%.2fx the call)  [timed fill, poison, flush, sums]\n", around, around / t_call);
  return 0;
}
