// task: gelu
// Good: the launch is captured once into a CUDA graph (stream capture on a->stream, thread-local
// mode) and every call replays it with cudaGraphLaunch on a->stream. The graph bakes in the
// pointers and the size, so executables are cached by (x, y, n): the buffers' values change from
// call to call but the graph re-reads them on every launch, so it stays correct. Graph launches on
// the given stream are ordinary stream work: must pass.
#include <kevo/kernel.h>

#include <stdint.h>

__device__ __forceinline__ float gelu(float v) {
  return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
}

// Grid-stride, float4 body plus a scalar tail (at most 3 elements); pointers are checked for
// 16-byte alignment on the host.
__global__ void gelu_vec4(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t n4 = n / 4;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  const int64_t tid = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  float4* y4 = reinterpret_cast<float4*>(y);
  for (int64_t i = tid; i < n4; i += stride) {
    float4 v = x4[i];
    y4[i] = make_float4(gelu(v.x), gelu(v.y), gelu(v.z), gelu(v.w));
  }
  int64_t t = n4 * 4 + tid;
  if (t < n) y[t] = gelu(x[t]);
}

__global__ void gelu_scalar(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = gelu(x[i]);
}

static void launch(const float* x, float* y, int64_t n, cudaStream_t s) {
  const int threads = 256;
  int64_t want = (n / 4 + threads - 1) / threads;
  unsigned blocks = (unsigned)(want < 1 ? 1 : (want > 65536 ? 65536 : want));
  if ((((uintptr_t)x | (uintptr_t)y) & 15) == 0)
    gelu_vec4<<<blocks, threads, 0, s>>>(x, y, n);
  else
    gelu_scalar<<<blocks, threads, 0, s>>>(x, y, n);
}

struct GraphEntry {
  const float* x;
  float* y;
  int64_t n;
  cudaGraphExec_t exec;
};

// Checked and timed calls use a few buffer sets per size; a small FIFO bounds what is kept.
constexpr int kMaxGraphs = 16;
static GraphEntry g_graphs[kMaxGraphs];
static int g_count = 0, g_next = 0;

// Captures one launch; nullptr when capture or instantiation fails (the caller launches directly).
static cudaGraphExec_t capture(const float* x, float* y, int64_t n, cudaStream_t s) {
  if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess) return nullptr;
  launch(x, y, n, s);
  cudaError_t launch_err = cudaGetLastError();
  cudaGraph_t graph = nullptr;
  cudaError_t end_err = cudaStreamEndCapture(s, &graph);
  cudaGraphExec_t exec = nullptr;
  if (launch_err == cudaSuccess && end_err == cudaSuccess && graph != nullptr &&
      cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess)
    exec = nullptr;
  if (graph != nullptr) cudaGraphDestroy(graph);
  (void)cudaGetLastError();  // a failed capture falls back to a plain launch
  return exec;
}

static cudaGraphExec_t find_or_capture(const float* x, float* y, int64_t n, cudaStream_t s) {
  for (int i = 0; i < g_count; ++i)
    if (g_graphs[i].x == x && g_graphs[i].y == y && g_graphs[i].n == n) return g_graphs[i].exec;
  cudaGraphExec_t exec = capture(x, y, n, s);
  if (exec == nullptr) return nullptr;
  GraphEntry& slot = g_graphs[g_next];
  // An executable still in flight is freed when its launch completes (cudaGraphExecDestroy).
  if (g_count == kMaxGraphs) cudaGraphExecDestroy(slot.exec);
  slot = {x, y, n, exec};
  g_next = (g_next + 1) % kMaxGraphs;
  if (g_count < kMaxGraphs) ++g_count;
  return exec;
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const float* x = (const float*)a->inputs[0].data;
  float* y = (float*)a->outputs[0].data;
  int64_t n = kevo_numel(&a->inputs[0]);
  cudaGraphExec_t exec = find_or_capture(x, y, n, a->stream);
  if (exec != nullptr) {
    if (cudaGraphLaunch(exec, a->stream) != cudaSuccess) return 1;
  } else {
    launch(x, y, n, a->stream);
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
