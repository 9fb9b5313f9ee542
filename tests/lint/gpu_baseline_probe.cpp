// lint_gpu_probe: the GPU half of `kevo task lint` for the bundled tasks. For each task it runs
// lint_baseline with a GPU callback (the task's baseline.cu, compiled and called in-process,
// against the CPU reference on every configuration except the main one) and times the baseline on
// the main configuration (median of CUDA-event timings). It loads only the bundled, trusted
// baselines; it is a measurement tool for the suite's closing note, not part of the checker.
//
//   lint_gpu_probe [--so-dir DIR] [--no-check] [--no-time] [TASK...]      (default: all tasks)
//
// With --so-dir, DIR/<task>.so is used when present (compile the baselines in parallel beforehand);
// otherwise the baseline is compiled with kevo's nvcc wrapper.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <kevo/kernel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "compile/nvcc.h"
#include "lint/lint.h"
#include "lint/suite.h"
#include "util/fs.h"

namespace fs = std::filesystem;
using namespace kevo;

namespace {

using Forward = int (*)(const kevo_args*);

struct DeviceRun {
  std::vector<void*> bufs;
  ~DeviceRun() {
    for (void* p : bufs) cudaFree(p);
  }
  void* alloc(size_t n) {
    void* p = nullptr;
    if (cudaMalloc(&p, std::max<size_t>(n, 16)) != cudaSuccess) return nullptr;
    bufs.push_back(p);
    return p;
  }
};

kevo_tensor describe(void* data, DType dt, const std::vector<int64_t>& shape) {
  kevo_tensor t{};
  t.data = data;
  t.dtype = static_cast<kevo_dtype>(dt);
  t.ndim = static_cast<int>(shape.size());
  int64_t stride = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    t.shape[i] = shape[i];
    t.stride[i] = stride;
    stride *= shape[i];
  }
  return t;
}

// Runs the baseline `reps` times on `ins`; returns outputs and the per-call times (ms).
Result<std::vector<HostTensor>> run_baseline(const Task& task, const Config& c, Forward fwd,
                                             const std::vector<HostTensor>& ins, int reps,
                                             std::vector<double>* times) {
  DeviceRun dev;
  cudaStream_t stream;
  if (cudaStreamCreate(&stream) != cudaSuccess) return fail("cudaStreamCreate failed");
  std::vector<kevo_tensor> tin, tout;
  for (const auto& h : ins) {
    void* p = dev.alloc(h.bytes.size());
    if (!p) return fail("out of device memory for input {}", h.name);
    cudaMemcpy(p, h.bytes.data(), h.bytes.size(), cudaMemcpyHostToDevice);
    tin.push_back(describe(p, h.dtype, h.shape));
  }
  std::vector<HostTensor> outs;
  for (const auto& o : task.outputs) {
    auto sh = task.shape_of(o, c);
    if (!sh) return sh.unexpected();
    outs.push_back(make_tensor(o.name, o.dtype, *sh));
    void* p = dev.alloc(outs.back().bytes.size());
    if (!p) return fail("out of device memory for output {}", o.name);
    cudaMemset(p, 0xFF, outs.back().bytes.size());  // poison: unwritten elements read as NaN/-1
    tout.push_back(describe(p, o.dtype, *sh));
  }
  auto ws_bytes = task.workspace_bytes(c);
  if (!ws_bytes) return ws_bytes.unexpected();
  void* ws = *ws_bytes ? dev.alloc(static_cast<size_t>(*ws_bytes)) : nullptr;
  std::vector<double> scalars;
  for (const auto& s : task.scalars) scalars.push_back(s.value);
  std::vector<int64_t> dims = task.dim_values(c);
  kevo_args a{};
  a.abi_version = KEVO_ABI_VERSION;
  a.inputs = tin.data();
  a.num_inputs = static_cast<int>(tin.size());
  a.outputs = tout.data();
  a.num_outputs = static_cast<int>(tout.size());
  a.scalars = scalars.data();
  a.num_scalars = static_cast<int>(scalars.size());
  a.dims = dims.data();
  a.num_dims = static_cast<int>(dims.size());
  a.workspace = ws;
  a.workspace_bytes = ws ? static_cast<size_t>(*ws_bytes) : 0;
  a.stream = stream;
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::string err;
  for (int r = 0; r < reps && err.empty(); ++r) {
    cudaEventRecord(e0, stream);
    int rc = fwd(&a);
    cudaEventRecord(e1, stream);
    cudaError_t ce = cudaStreamSynchronize(stream);
    if (rc != 0 || ce != cudaSuccess)
      err = fmt::format("kevo_forward returned {}, {}", rc, cudaGetErrorString(ce));
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    if (times) times->push_back(ms);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaStreamDestroy(stream);
  if (!err.empty()) return fail("{}", err);
  for (size_t o = 0; o < outs.size(); ++o)
    cudaMemcpy(outs[o].bytes.data(), tout[o].data, outs[o].bytes.size(), cudaMemcpyDeviceToHost);
  return outs;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> names;
  fs::path so_dir;
  bool check = true, time = true;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if (s == "--so-dir" && i + 1 < argc)
      so_dir = argv[++i];
    else if (s == "--no-check")
      check = false;
    else if (s == "--no-time")
      time = false;
    else
      names.push_back(s);
  }
  if (names.empty()) names = bundled_tasks();
  int bad = 0;
  for (const auto& name : names) {
    fs::path dir = fs::exists(name) ? fs::path(name) : kevo_home() / "tasks" / name;
    auto task = load_task(dir);
    if (!task) {
      std::printf("ERROR %s %s\n", name.c_str(), task.error().message.c_str());
      ++bad;
      continue;
    }
    fs::path so = so_dir.empty() ? fs::path() : so_dir / (task->name + ".so");
    if (so.empty() || !fs::exists(so)) {
      auto src = read_file(task->baseline_path());
      auto cr = src ? compile_cuda_shared(*src, "baseline.cu", CompileOptions{})
                    : Result<CompileResult>(src.unexpected());
      if (!cr || !cr->ok) {
        std::printf("ERROR %s baseline does not compile: %s\n", task->name.c_str(),
                    cr ? cr->diagnostics.c_str() : cr.error().message.c_str());
        ++bad;
        continue;
      }
      so = cr->so_path;
    }
    void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    auto fwd = h ? reinterpret_cast<Forward>(dlsym(h, "kevo_forward")) : nullptr;
    if (!fwd) {
      std::printf("ERROR %s cannot load %s: %s\n", task->name.c_str(), so.c_str(), dlerror());
      ++bad;
      continue;
    }
    if (check) {
      auto t0 = std::chrono::steady_clock::now();
      auto ref = cpu_reference_outputs(*task);
      LintOptions o;
      for (const auto& c : task->configs)
        if (&c != &task->main()) o.configs.push_back(c.name);
      const Task& tk = *task;
      OutputsFn gpu =
          [&](const Config& c,
              const std::vector<HostTensor>& ins) -> Result<std::vector<std::vector<double>>> {
        auto outs = run_baseline(tk, c, fwd, ins, 1, nullptr);
        if (!outs) return outs.unexpected();
        std::vector<std::vector<double>> d;
        for (const auto& t : *outs) {
          d.emplace_back(static_cast<size_t>(t.numel()));
          for (size_t i = 0; i < d.back().size(); ++i) d.back()[i] = t.at(i);
        }
        return d;
      };
      auto f = ref ? lint_baseline(tk, *ref, gpu, o) : Result<LintFinding>(ref.unexpected());
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!f) {
        std::printf("ERROR %s %s\n", task->name.c_str(), f.error().message.c_str());
        ++bad;
      } else {
        std::printf("CHECK %s %s (%.1f s) %s\n", task->name.c_str(), to_string(f->severity), s,
                    f->message.substr(0, 600).c_str());
        if (f->severity == Severity::Fail) ++bad;
      }
      std::fflush(stdout);
    }
    if (time) {
      const Config& m = task->main();
      auto ins = generate_inputs(*task, m, 1, false);
      std::vector<double> times;
      auto outs = ins ? run_baseline(*task, m, fwd, *ins, 11, &times)
                      : Result<std::vector<HostTensor>>(ins.unexpected());
      if (!outs) {
        std::printf("ERROR %s main: %s\n", task->name.c_str(), outs.error().message.c_str());
        ++bad;
      } else {
        times.erase(times.begin());  // warm-up
        std::sort(times.begin(), times.end());
        double med = times[times.size() / 2];
        double gflop = task->flops(m) ? *task->flops(m) / 1e9 : 0;
        double gb = task->bytes(m) ? *task->bytes(m) / 1e9 : 0;
        std::printf("TIME %s %.4f ms  (min %.4f)  %.2f TFLOP/s  %.2f TB/s\n", task->name.c_str(),
                    med, times.front(), gflop / med, gb / med);
      }
      std::fflush(stdout);
    }
  }
  std::printf("DONE %zu tasks, %d problems\n", names.size(), bad);
  return bad ? 1 : 0;
}
