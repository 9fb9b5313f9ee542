// Trusted probe for the device's arithmetic ceilings, loaded by kevo-runner (`probe` request).
// kind 0: fp32 FMA on the CUDA cores; kind 1: bf16 tensor cores (mma.sync via WMMA).
#include <cuda_bf16.h>
#include <mma.h>

#include <kevo/kernel.h>

constexpr int kIters = 4096;

__global__ void fma_kernel(float* out, float seed) {
  float a[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) a[j] = seed + threadIdx.x * 1e-3f + j;
  for (int i = 0; i < kIters; ++i) {
#pragma unroll
    for (int j = 0; j < 8; ++j) a[j] = fmaf(a[j], 0.9999f, 0.0001f);
  }
  float s = 0;
#pragma unroll
  for (int j = 0; j < 8; ++j) s += a[j];
  if (s == 1234.5f) out[0] = s;  // keeps the work alive
}

__global__ void mma_kernel(float* out) {
  using namespace nvcuda;
  __shared__ __nv_bfloat16 tile[16 * 16];
  for (int i = threadIdx.x; i < 256; i += blockDim.x) tile[i] = __float2bfloat16(0.001f * (i % 7));
  __syncthreads();
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[4];
  wmma::load_matrix_sync(fa, tile, 16);
  wmma::load_matrix_sync(fb, tile, 16);
#pragma unroll
  for (int j = 0; j < 4; ++j) wmma::fill_fragment(acc[j], 0.f);
  for (int i = 0; i < kIters / 4; ++i) {
#pragma unroll
    for (int j = 0; j < 4; ++j) wmma::mma_sync(acc[j], fa, fb, acc[j]);
  }
  float keep = 0;  // every accumulator must stay live, or the compiler drops their mma chains
#pragma unroll
  for (int j = 0; j < 4; ++j) keep += acc[j].x[0];
  if (keep == 1234.5f) out[0] = keep;
}

KEVO_EXPORT int kevo_probe(int kind, cudaStream_t s, double* flops) {
  static float* out = nullptr;
  if (!out && cudaMalloc(&out, 16) != cudaSuccess) return 2;
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  if (kind == 0) {
    int blocks = sms * 8, threads = 256;
    fma_kernel<<<blocks, threads, 0, s>>>(out, 1.0f);
    *flops = 2.0 * 8 * kIters * double(blocks) * threads;
    return cudaGetLastError() == cudaSuccess ? 0 : 3;
  }
  if (kind == 1) {
    int blocks = sms * 8, threads = 256;  // 8 warps per block, each an independent mma stream
    mma_kernel<<<blocks, threads, 0, s>>>(out);
    *flops = 2.0 * 16 * 16 * 16 * (kIters / 4) * 4 * double(blocks) * (threads / 32);
    return cudaGetLastError() == cudaSuccess ? 0 : 3;
  }
  return 1;
}
