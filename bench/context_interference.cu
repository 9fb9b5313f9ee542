// Does another process making (or ending) a CUDA context disturb a kernel being timed? A `timer`
// times batches as kevo's timing does (per call: an L2 flush, then a memory-bound kernel between
// CUDA events; the batch's wall from launch to a spin-wait synchronize), while `churn` starts
// processes one after another that each make a context (what a spare runner's hello is), holds
// them, and then ends them one at a time. Every batch and every window is stamped on
// CLOCK_MONOTONIC, so bench/context_interference.py can sort batches by what overlapped them.
//
//   nvcc -O2 -o ci bench/context_interference.cu
//   ./ci timer SECONDS [MiB per buffer, 512] [calls per batch, 8]   > timer.txt
//   ./ci churn CHILDREN [gap ms, 150] [MiB each child allocates, 0]  > churn.txt
// Lines: "B t0_ns t1_ns events_ms" (a batch), "C t0_ns t1_ns" (a context made), "E t0_ns t1_ns"
// (a process with a context ended: from its release to its reaping).
#include <cuda_runtime.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static long long now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

#define CK(x)                                                                            \
  do {                                                                                   \
    cudaError_t e_ = (x);                                                                \
    if (e_ != cudaSuccess) {                                                             \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

__global__ void scale(const float4* __restrict__ in, float4* __restrict__ out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    float4 v = in[i];
    out[i] = make_float4(v.x * 1.5f, v.y * 1.5f, v.z * 1.5f, v.w * 1.5f);
  }
}

static int timer(double seconds, size_t mib, int calls) {
  CK(cudaSetDeviceFlags(cudaDeviceScheduleSpin));
  cudaDeviceProp p{};
  CK(cudaGetDeviceProperties(&p, 0));
  const size_t bytes = mib << 20, flush = 2 * size_t(p.l2CacheSize) + (8u << 20);
  float4 *in = nullptr, *out = nullptr;
  void* fl = nullptr;
  CK(cudaMalloc(&in, bytes));
  CK(cudaMalloc(&out, bytes));
  CK(cudaMalloc(&fl, flush));
  CK(cudaMemset(in, 1, bytes));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::vector<cudaEvent_t> ev(2 * calls);
  for (auto& e : ev) CK(cudaEventCreate(&e));
  const size_t n = bytes / sizeof(float4);
  const int blocks = p.multiProcessorCount * 8;
  const long long end = now_ns() + static_cast<long long>(seconds * 1e9);
  while (now_ns() < end) {
    const long long t0 = now_ns();
    for (int c = 0; c < calls; ++c) {
      CK(cudaMemsetAsync(fl, c & 0xff, flush, s));
      CK(cudaEventRecord(ev[2 * c], s));
      scale<<<blocks, 256, 0, s>>>(in, out, n);
      CK(cudaEventRecord(ev[2 * c + 1], s));
    }
    CK(cudaStreamSynchronize(s));
    const long long t1 = now_ns();
    float sum = 0;
    for (int c = 0; c < calls; ++c) {
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, ev[2 * c], ev[2 * c + 1]));
      sum += ms;
    }
    std::printf("B %lld %lld %.5f\n", t0, t1, sum / calls);
  }
  return 0;
}

// A child: makes its context as a runner's hello does, says when, waits for its release (EOF on
// stdin), and exits (its context ends with it).
static int child(size_t alloc_mib) {
  const long long t0 = now_ns();
  CK(cudaSetDeviceFlags(cudaDeviceScheduleSpin));
  CK(cudaFree(nullptr));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  void* d = nullptr;
  if (alloc_mib) CK(cudaMalloc(&d, alloc_mib << 20));
  const long long t1 = now_ns();
  std::printf("C %lld %lld\n", t0, t1);
  std::fflush(stdout);
  char b;
  while (read(0, &b, 1) > 0) {
  }
  return 0;
}

static void sleep_ms(int ms) {
  timespec t{ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, nullptr);
}

static int churn(int children, int gap_ms, size_t alloc_mib, const char* self) {
  std::vector<int> pipes;
  std::vector<pid_t> pids;
  char mib[32];
  std::snprintf(mib, sizeof mib, "%zu", alloc_mib);
  for (int i = 0; i < children; ++i) {
    int fd[2], done[2];
    // Close-on-exec, so no child holds another child's stdin open (its EOF is its release).
    if (pipe2(fd, O_CLOEXEC) != 0 || pipe2(done, O_CLOEXEC) != 0) return 1;
    pid_t pid = fork();
    if (pid == 0) {
      dup2(fd[0], 0);
      dup2(done[1], 1);
      close(fd[1]);
      execl(self, self, "child", mib, static_cast<char*>(nullptr));
      _exit(127);
    }
    close(fd[0]);
    close(done[1]);
    char line[128] = {0};
    ssize_t got = read(done[0], line, sizeof line - 1);  // the child's "C" line: its context is made
    close(done[0]);
    if (got > 0) std::fputs(line, stdout);
    std::fflush(stdout);
    pipes.push_back(fd[1]);
    pids.push_back(pid);
    sleep_ms(gap_ms);
  }
  sleep_ms(500);
  for (size_t i = 0; i < pids.size(); ++i) {
    const long long t0 = now_ns();
    close(pipes[i]);
    int st = 0;
    waitpid(pids[i], &st, 0);
    std::printf("E %lld %lld\n", t0, now_ns());
    std::fflush(stdout);
    sleep_ms(gap_ms);
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 2 && std::strcmp(argv[1], "timer") == 0)
    return timer(std::atof(argv[2]), argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 512,
                 argc > 4 ? std::atoi(argv[4]) : 8);
  if (argc > 2 && std::strcmp(argv[1], "child") == 0) return child(std::strtoull(argv[2], nullptr, 10));
  if (argc > 2 && std::strcmp(argv[1], "churn") == 0)
    return churn(std::atoi(argv[2]), argc > 3 ? std::atoi(argv[3]) : 150,
                 argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 0, "/proc/self/exe");
  std::fprintf(stderr, "usage: ci timer SECONDS [MiB] [calls] | ci churn CHILDREN [gap ms] [MiB]\n");
  return 2;
}
