// What a fresh process's CUDA start costs (a kevo-runner's hello is this plus its exec): the
// context (cudaSetDeviceFlags + cudaFree(0)), then a stream, the device's properties, its memory
// info and a 64 MiB allocation, each timed on the process's steady clock. With an argument of 0 the
// spin flag is left out; `hold` holds a context and sleeps (what another process on the GPU is);
// `driver` first initialises the driver alone (cudaGetDeviceCount: cuInit, no context) and prints
// that part apart (docs/measurements/2026-11-28-h200-0415afa-candidate-slab.md).
// bench/context_start.sh runs it alone, several at once and beside a holder
// (docs/measurements/2026-11-26-h100-6df2634-runner-start.md).
//
//   nvcc -O2 -o context_start bench/context_start.cu
//   ./context_start [1|0|driver]      ./context_start hold SECONDS
#include <cuda_runtime.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

static double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

int main(int argc, char** argv) {
  if (argc > 2 && std::strcmp(argv[1], "hold") == 0) {
    cudaFree(nullptr);
    sleep(static_cast<unsigned>(std::atoi(argv[2])));
    return 0;
  }
  const bool driver = argc > 1 && std::strcmp(argv[1], "driver") == 0;
  const bool spin = argc < 2 || driver || std::atoi(argv[1]) != 0;
  double t[7];
  const double t_driver = now_ms();
  if (driver) {
    int n = 0;
    cudaGetDeviceCount(&n);
  }
  t[0] = now_ms();
  if (spin) cudaSetDeviceFlags(cudaDeviceScheduleSpin);
  cudaError_t e = cudaFree(nullptr);
  t[1] = now_ms();
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  t[2] = now_ms();
  cudaDeviceProp p{};
  cudaGetDeviceProperties(&p, 0);
  t[3] = now_ms();
  size_t free_b = 0, total_b = 0;
  cudaMemGetInfo(&free_b, &total_b);
  t[4] = now_ms();
  void* d = nullptr;
  cudaMalloc(&d, 64 << 20);
  cudaMemset(d, 0, 64 << 20);
  cudaDeviceSynchronize();
  t[5] = now_ms();
  if (e != cudaSuccess) {
    std::fprintf(stderr, "context_start: %s\n", cudaGetErrorString(e));
    return 1;
  }
  if (driver) std::printf("driver %.1f ", t[0] - t_driver);
  std::printf("context %.1f stream %.1f props %.1f meminfo %.1f malloc64M %.1f total %.1f ms\n", t[1] - t[0],
              t[2] - t[1], t[3] - t[2], t[4] - t[3], t[5] - t[4], t[5] - t[0]);
  return 0;
}
