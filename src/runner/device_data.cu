#include "runner/device_data.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>

namespace kevo::dev {
namespace {

constexpr int kThreads = 256;

int blocks_for(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 1 ? 1 : (b > 8192 ? 8192 : b));
}

__device__ void store(void* p, int dt, int64_t i, double v) {
  switch (dt) {
    case 0: static_cast<float*>(p)[i] = static_cast<float>(v); return;
    case 1: static_cast<__half*>(p)[i] = __float2half_rn(static_cast<float>(v)); return;
    case 2: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(static_cast<float>(v)); return;
    case 3: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(llround(v)); return;
    case 4: static_cast<int64_t*>(p)[i] = llround(v); return;
    case 5: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(llround(v)); return;
  }
}

__device__ double load(const void* p, int dt, int64_t i) {
  switch (dt) {
    case 0: return static_cast<const float*>(p)[i];
    case 1: return __half2float(static_cast<const __half*>(p)[i]);
    case 2: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case 3: return static_cast<const int32_t*>(p)[i];
    case 4: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case 5: return static_cast<const uint8_t*>(p)[i];
  }
  return 0;
}

__host__ __device__ int dtype_bytes(int dt) { return dt == 4 ? 8 : dt == 5 ? 1 : (dt == 1 || dt == 2) ? 2 : 4; }

__device__ bool is_poison(const void* p, int dt, int64_t i) {
  int w = dtype_bytes(dt);
  const uint8_t* b = static_cast<const uint8_t*>(p) + i * w;
  for (int k = 0; k < w; ++k)
    if (b[k] != 0xFF) return false;
  return true;
}

__global__ void fill_kernel(void* dst, int dt, int64_t n, DrawSpec d) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    store(dst, dt, i, draw_value(d, i));
}

// Below 2^32 elements draw_key32's high half is the same for every element: hashed once.
constexpr int64_t kOneHigh = int64_t(1) << 32;
__device__ uint32_t key32(bool one_high, uint32_t high, uint64_t key, int64_t i) {
  return one_high ? draw_key32_with(high, key, i) : draw_key32(key, i);
}

// The timed draws (every timed call's inputs, so their cost is in every batch the outside clock
// measures): the high half of the hash once, and for f32 four values per 16-byte store. The same
// bits as draw_value.
__global__ void fill_timed_kernel(void* dst, int dt, int64_t n, DrawSpec d) {
  const bool one_high = n <= kOneHigh;
  const uint32_t high = draw_key32_high(d.base, 0);
  const int64_t stride = int64_t(gridDim.x) * blockDim.x, first = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  auto value = [&](int64_t i) { return draw_clamp(d, draw_timed_from(d, key32(one_high, high, d.base, i))); };
  int64_t done = 0;
  if (dt == 0 && reinterpret_cast<uintptr_t>(dst) % 16 == 0) {
    float4* q = static_cast<float4*>(dst);
    for (int64_t j = first; j < n / 4; j += stride)
      q[j] = make_float4(static_cast<float>(value(4 * j)), static_cast<float>(value(4 * j + 1)),
                         static_cast<float>(value(4 * j + 2)), static_cast<float>(value(4 * j + 3)));
    done = n / 4 * 4;
  }
  for (int64_t i = done + first; i < n; i += stride) store(dst, dt, i, value(i));
}

struct Acc {
  double ss;  // pass 1: sum of squares of the finite reference
  unsigned long long finite_n;
  unsigned long long mismatches, unwritten, nonfinite, first_bad;
  unsigned long long max_abs_bits, max_rel_bits;  // non-negative doubles order like their bits
  double first_got, first_want;
};

__device__ double warp_sum(double v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}
__device__ unsigned long long warp_sum(unsigned long long v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}
__device__ unsigned long long warp_max(unsigned long long v) {
  for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_down_sync(0xffffffffu, v, o));
  return v;
}
__device__ unsigned long long warp_min(unsigned long long v) {
  for (int o = 16; o > 0; o >>= 1) v = min(v, __shfl_down_sync(0xffffffffu, v, o));
  return v;
}

__global__ void rms_kernel(const void* want, int wdt, int64_t n, Acc* acc) {
  double s = 0;
  unsigned long long k = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    double w = load(want, wdt, i);
    if (isfinite(w)) s += w * w, ++k;
  }
  s = warp_sum(s);
  k = warp_sum(k);
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&acc->ss, s);
    atomicAdd(&acc->finite_n, k);
  }
}

__global__ void compare_kernel(const void* got, int gdt, const void* want, int wdt, int64_t n, double atol,
                               double rtol, bool check_poison, Acc* acc) {
  double scale = acc->finite_n ? sqrt(acc->ss / static_cast<double>(acc->finite_n)) : 1.0;
  double at = atol * (scale > 1.0 ? scale : 1.0);
  unsigned long long mism = 0, unw = 0, nonf = 0, first = ULLONG_MAX;
  double max_abs = 0, max_rel = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    double g = load(got, gdt, i), w = load(want, wdt, i);
    bool bad = false;
    if (!isfinite(w)) {
      bad = !(isnan(w) ? isnan(g) : g == w);
    } else if (!isfinite(g)) {
      bad = true;
      if (check_poison && is_poison(got, gdt, i)) ++unw;
      else ++nonf;
    } else {
      double err = fabs(g - w);
      max_abs = fmax(max_abs, err);
      if (err > 0) max_rel = fmax(max_rel, err / fmax(fabs(w), 1e-30));
      bad = err > at + rtol * fabs(w);
      if (bad && check_poison && is_poison(got, gdt, i)) ++unw;
    }
    if (bad) {
      ++mism;
      first = min(first, static_cast<unsigned long long>(i));
    }
  }
  mism = warp_sum(mism);
  unw = warp_sum(unw);
  nonf = warp_sum(nonf);
  first = warp_min(first);
  unsigned long long ma = warp_max(static_cast<unsigned long long>(__double_as_longlong(max_abs)));
  unsigned long long mr = warp_max(static_cast<unsigned long long>(__double_as_longlong(max_rel)));
  if ((threadIdx.x & 31) == 0) {
    if (mism) atomicAdd(&acc->mismatches, mism);
    if (unw) atomicAdd(&acc->unwritten, unw);
    if (nonf) atomicAdd(&acc->nonfinite, nonf);
    if (first != ULLONG_MAX) atomicMin(&acc->first_bad, first);
    atomicMax(&acc->max_abs_bits, ma);
    atomicMax(&acc->max_rel_bits, mr);
  }
}

__global__ void pick_kernel(const void* got, int gdt, const void* want, int wdt, Acc* acc) {
  if (acc->first_bad != ULLONG_MAX) {
    acc->first_got = load(got, gdt, static_cast<int64_t>(acc->first_bad));
    acc->first_want = load(want, wdt, static_cast<int64_t>(acc->first_bad));
  }
}

__global__ void diff_kernel(const uint8_t* a, const uint8_t* b, size_t n, unsigned long long* count) {
  unsigned long long k = 0;
  size_t words = n / 16;
  const uint4* a4 = reinterpret_cast<const uint4*>(a);
  const uint4* b4 = reinterpret_cast<const uint4*>(b);
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < words; i += size_t(gridDim.x) * blockDim.x) {
    uint4 x = a4[i], y = b4[i];
    k += __popc(__vcmpne4(x.x, y.x)) / 8 + __popc(__vcmpne4(x.y, y.y)) / 8 + __popc(__vcmpne4(x.z, y.z)) / 8 +
         __popc(__vcmpne4(x.w, y.w)) / 8;
  }
  for (size_t i = words * 16 + blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    k += a[i] != b[i];
  k = warp_sum(k);
  if ((threadIdx.x & 31) == 0 && k) atomicAdd(count, k);
}

struct SumsAcc {
  double sq = 0, s0 = 0, s1 = 0;
  unsigned long long nf = 0;
  // The same work whatever the values (a poisoned output costs what a real one does): the
  // checker subtracts the cost of this work measured on poisoned outputs.
  __device__ void add(double v, uint32_t h) {  // h: draw_key32(key, i) (draw_signs, without the multiplies)
    const bool fin = isfinite(v);
    nf += fin ? 0 : 1;
    const double u = fin ? v : 0.0;
    sq += u * u;
    s0 += (h & 1) ? u : -u;
    s1 += (h & 2) ? u : -u;
  }
};

// The high half of the hash once, and for f32 four values per 16-byte load.
__global__ void sums_kernel(const void* p, int dt, int64_t n, uint64_t key, OutputSums* out) {
  const bool one_high = n <= kOneHigh;
  const uint32_t high = draw_key32_high(key, 0);
  const int64_t stride = int64_t(gridDim.x) * blockDim.x, first = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  SumsAcc a;
  int64_t done = 0;
  if (dt == 0 && reinterpret_cast<uintptr_t>(p) % 16 == 0) {
    const float4* q = static_cast<const float4*>(p);
    for (int64_t j = first; j < n / 4; j += stride) {
      const float4 v = q[j];
      a.add(v.x, key32(one_high, high, key, 4 * j));
      a.add(v.y, key32(one_high, high, key, 4 * j + 1));
      a.add(v.z, key32(one_high, high, key, 4 * j + 2));
      a.add(v.w, key32(one_high, high, key, 4 * j + 3));
    }
    done = n / 4 * 4;
  }
  for (int64_t i = done + first; i < n; i += stride) a.add(load(p, dt, i), key32(one_high, high, key, i));
  double sq = a.sq, s0 = a.s0, s1 = a.s1;
  unsigned long long nf = a.nf;
  // Warp shuffles, then one atomic per warp: no shared-memory tree (1.75 -> ~1.0 ms on 2^29
  // elements on an H100, bench/timing_overhead.cu).
  sq = warp_sum(sq);
  s0 = warp_sum(s0);
  s1 = warp_sum(s1);
  nf = warp_sum(nf);
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&out->sum_sq, sq);
    atomicAdd(&out->signed0, s0);
    atomicAdd(&out->signed1, s1);
    if (nf) atomicAdd(&out->nonfinite, nf);
  }
}

// One small device scratch block per process (the runner is single-threaded).
Acc* scratch() {
  static Acc* p = nullptr;
  if (!p && cudaMalloc(&p, sizeof(Acc)) != cudaSuccess) p = nullptr;
  return p;
}

}  // namespace

cudaError_t fill(void* dst, int dtype, int64_t n, const DrawSpec& d, cudaStream_t s) {
  if (n <= 0) return cudaSuccess;
  if (d.timed)
    fill_timed_kernel<<<blocks_for(dtype == 0 ? n / 4 + 1 : n), kThreads, 0, s>>>(dst, dtype, n, d);
  else
    fill_kernel<<<blocks_for(n), kThreads, 0, s>>>(dst, dtype, n, d);
  return cudaGetLastError();
}

cudaError_t compare(const void* got, int got_dtype, const void* want, int want_dtype, int64_t n, double atol,
                    double rtol, bool check_poison, cudaStream_t s, CompareResult* out) {
  Acc* acc = scratch();
  if (!acc) return cudaErrorMemoryAllocation;
  Acc init{};
  init.first_bad = ULLONG_MAX;
  cudaError_t e = cudaMemcpyAsync(acc, &init, sizeof init, cudaMemcpyHostToDevice, s);
  if (e != cudaSuccess) return e;
  if (n > 0) {
    rms_kernel<<<blocks_for(n), kThreads, 0, s>>>(want, want_dtype, n, acc);
    compare_kernel<<<blocks_for(n), kThreads, 0, s>>>(got, got_dtype, want, want_dtype, n, atol, rtol, check_poison, acc);
    pick_kernel<<<1, 1, 0, s>>>(got, got_dtype, want, want_dtype, acc);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
  }
  Acc r{};
  if ((e = cudaMemcpyAsync(&r, acc, sizeof r, cudaMemcpyDeviceToHost, s)) != cudaSuccess) return e;
  if ((e = cudaStreamSynchronize(s)) != cudaSuccess) return e;
  CompareResult c;
  c.count = n;
  c.mismatches = static_cast<int64_t>(r.mismatches);
  c.unwritten = static_cast<int64_t>(r.unwritten);
  c.nonfinite = static_cast<int64_t>(r.nonfinite);
  c.first_bad = r.first_bad == ULLONG_MAX ? -1 : static_cast<int64_t>(r.first_bad);
  double ma, mr;
  static_assert(sizeof(double) == sizeof(unsigned long long));
  memcpy(&ma, &r.max_abs_bits, sizeof ma);
  memcpy(&mr, &r.max_rel_bits, sizeof mr);
  c.max_abs_err = ma;
  c.max_rel_err = mr;
  c.first_got = r.first_got;
  c.first_want = r.first_want;
  *out = c;
  return cudaSuccess;
}

cudaError_t sums(const void* p, int dtype, int64_t n, uint64_t key, OutputSums* out, cudaStream_t s) {
  if (n <= 0) return cudaSuccess;
  sums_kernel<<<blocks_for(n) < 1024 ? blocks_for(n) : 1024, kThreads, 0, s>>>(p, dtype, n, key, out);
  return cudaGetLastError();
}

cudaError_t count_differing_bytes(const void* a, const void* b, size_t n, cudaStream_t s, uint64_t* out) {
  static unsigned long long* count = nullptr;
  if (!count && cudaMalloc(&count, sizeof *count) != cudaSuccess) return cudaErrorMemoryAllocation;
  cudaError_t e = cudaMemsetAsync(count, 0, sizeof *count, s);
  if (e != cudaSuccess) return e;
  if (n) diff_kernel<<<blocks_for(static_cast<int64_t>(n / 16 + 1)), kThreads, 0, s>>>(
      static_cast<const uint8_t*>(a), static_cast<const uint8_t*>(b), n, count);
  unsigned long long h = 0;
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  if ((e = cudaMemcpyAsync(&h, count, sizeof h, cudaMemcpyDeviceToHost, s)) != cudaSuccess) return e;
  if ((e = cudaStreamSynchronize(s)) != cudaSuccess) return e;
  *out = h;
  return cudaSuccess;
}

}  // namespace kevo::dev
