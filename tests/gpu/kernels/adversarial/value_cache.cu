// task: matmul_f32
// Adversarial probe: an output cache keyed on input VALUES. A one-block kernel hashes 64 sampled
// values of A and of B (and the dims) into device memory; the hash comes back to the host, which
// keeps a few stored copies of C (hash -> cudaMalloc'd buffer, oldest evicted). On a hit it only
// copies the stored C; on a miss it computes C with a 32x32-tiled kernel (the baseline's
// algorithm) and stores it. Against the old timing loop, which rotated a few fixed input sets and
// checked only the last call, every timed call hit: a 13x speedup. Now every call draws fresh
// values, so it never hits and always computes: it must pass, with no speedup to speak of.
#include <kevo/kernel.h>

#include <stdint.h>

#include <unordered_map>

constexpr int kTile = 32;
constexpr int kSamples = 64;
constexpr int kSlots = 4;

__global__ void matmul_tiled(const float* __restrict__ A, const float* __restrict__ B,
                             float* __restrict__ C, int M, int N, int K) {
  __shared__ float As[kTile][kTile];
  __shared__ float Bs[kTile][kTile];
  int row = blockIdx.y * kTile + threadIdx.y;
  int col = blockIdx.x * kTile + threadIdx.x;
  float acc = 0.f;
  for (int k0 = 0; k0 < K; k0 += kTile) {
    int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? A[(int64_t)row * K + ka] : 0.f;
    Bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? B[(int64_t)kb * N + col] : 0.f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kTile; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[(int64_t)row * N + col] = acc;
}

__device__ __forceinline__ uint64_t mix(uint64_t h) {  // splitmix64 finalizer
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

// One block of kSamples threads: thread t hashes element t * numel / kSamples of A and of B;
// thread 0 folds the per-thread hashes in a fixed order.
__global__ void sample_hash(const float* __restrict__ A, int64_t na, const float* __restrict__ B,
                            int64_t nb, uint64_t seed, uint64_t* out) {
  __shared__ uint64_t h[kSamples];
  const int t = threadIdx.x;
  uint32_t a = __float_as_uint(A[(int64_t)t * na / kSamples]);
  uint32_t b = __float_as_uint(B[(int64_t)t * nb / kSamples]);
  h[t] = mix(seed ^ ((uint64_t)a << 32 | b) ^ ((uint64_t)t * 0x9e3779b97f4a7c15ull));
  __syncthreads();
  if (t == 0) {
    uint64_t r = seed;
    for (int i = 0; i < kSamples; ++i) r = mix(r ^ h[i]);
    *out = r;
  }
}

struct Slot {
  uint64_t key = 0;
  float* data = nullptr;
  size_t bytes = 0;
  bool used = false;
};

static Slot g_slots[kSlots];
static int g_next = 0;
static std::unordered_map<uint64_t, int> g_index;  // hash -> slot

// Where sample_hash writes; allocated once, on the first call.
static uint64_t* hash_buffer() {
  static uint64_t* h = nullptr;
  if (h == nullptr && cudaMalloc(&h, sizeof(uint64_t)) != cudaSuccess) h = nullptr;
  return h;
}

// The slot to store a new result in (the oldest), grown to `bytes` if needed.
static Slot* claim_slot(size_t bytes) {
  Slot& s = g_slots[g_next];
  g_next = (g_next + 1) % kSlots;
  if (s.used) g_index.erase(s.key);
  s.used = false;
  if (s.bytes < bytes) {
    if (s.data != nullptr) cudaFree(s.data);
    s.data = nullptr;
    s.bytes = 0;
    if (cudaMalloc(&s.data, bytes) != cudaSuccess) {
      (void)cudaGetLastError();  // no room: this result is simply not stored
      return nullptr;
    }
    s.bytes = bytes;
  }
  return &s;
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int M = (int)a->dims[0], N = (int)a->dims[1], K = (int)a->dims[2];
  const float* A = (const float*)a->inputs[0].data;
  const float* B = (const float*)a->inputs[1].data;
  float* C = (float*)a->outputs[0].data;
  const size_t bytes = (size_t)M * N * sizeof(float);
  uint64_t* hash_dev = hash_buffer();
  if (hash_dev == nullptr) return 1;

  const uint64_t seed = ((uint64_t)M * 1000003u + (uint64_t)N) * 1000003u + (uint64_t)K;
  sample_hash<<<1, kSamples, 0, a->stream>>>(A, (int64_t)M * K, B, (int64_t)K * N, seed, hash_dev);
  uint64_t key = 0;
  if (cudaMemcpyAsync(&key, hash_dev, sizeof key, cudaMemcpyDeviceToHost, a->stream) !=
          cudaSuccess ||
      cudaStreamSynchronize(a->stream) != cudaSuccess)
    return 1;

  auto hit = g_index.find(key);
  if (hit != g_index.end() && g_slots[hit->second].bytes >= bytes) {
    cudaMemcpyAsync(C, g_slots[hit->second].data, bytes, cudaMemcpyDeviceToDevice, a->stream);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
  }
  dim3 block(kTile, kTile);
  dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
  matmul_tiled<<<grid, block, 0, a->stream>>>(A, B, C, M, N, K);
  if (cudaGetLastError() != cudaSuccess) return 1;
  Slot* s = claim_slot(bytes);
  if (s != nullptr &&
      cudaMemcpyAsync(s->data, C, bytes, cudaMemcpyDeviceToDevice, a->stream) == cudaSuccess) {
    s->key = key;
    s->used = true;
    g_index[key] = (int)(s - g_slots);
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
