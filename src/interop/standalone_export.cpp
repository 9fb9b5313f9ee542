#include "interop/standalone_export.h"

#include <fmt/format.h>

#include "task/resolved.h"
#include "util/fs.h"

namespace kevo::interop {

namespace {

constexpr const char* kPrelude = R"(#include <kevo/kernel.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#define CHECK(x)                                                                  \
  do {                                                                            \
    cudaError_t e_ = (x);                                                         \
    if (e_ != cudaSuccess) {                                                      \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      return 1;                                                                   \
    }                                                                             \
  } while (0)

KEVO_EXPORT int kevo_forward(const kevo_args* a);  // defined in kernel.cu

static size_t dtype_size(kevo_dtype t) {
  switch (t) {
    case KEVO_F16: case KEVO_BF16: return 2;
    case KEVO_I64: return 8;
    case KEVO_U8: return 1;
    default: return 4;
  }
}

// Random values in [lo, hi) of the tensor's type (ints: whole numbers).
static std::vector<unsigned char> random_host(kevo_dtype t, size_t n, double lo, double hi, std::mt19937& rng) {
  std::vector<unsigned char> h(n * dtype_size(t));
  std::uniform_real_distribution<double> u(lo, hi);
  for (size_t i = 0; i < n; ++i) {
    double v = u(rng);
    switch (t) {
      case KEVO_F32: { float f = (float)v; std::memcpy(&h[i * 4], &f, 4); break; }
      case KEVO_F16: { __half x = __float2half((float)v); std::memcpy(&h[i * 2], &x, 2); break; }
      case KEVO_BF16: { __nv_bfloat16 x = __float2bfloat16((float)v); std::memcpy(&h[i * 2], &x, 2); break; }
      case KEVO_I32: { int32_t x = (int32_t)v; std::memcpy(&h[i * 4], &x, 4); break; }
      case KEVO_I64: { int64_t x = (int64_t)v; std::memcpy(&h[i * 8], &x, 8); break; }
      case KEVO_U8: { h[i] = (unsigned char)v; break; }
    }
  }
  return h;
}

static double element(const unsigned char* p, kevo_dtype t, size_t i) {
  switch (t) {
    case KEVO_F32: { float f; std::memcpy(&f, p + i * 4, 4); return f; }
    case KEVO_F16: { __half x; std::memcpy(&x, p + i * 2, 2); return __half2float(x); }
    case KEVO_BF16: { __nv_bfloat16 x; std::memcpy(&x, p + i * 2, 2); return __bfloat162float(x); }
    case KEVO_I32: { int32_t x; std::memcpy(&x, p + i * 4, 4); return x; }
    case KEVO_I64: { int64_t x; std::memcpy(&x, p + i * 8, 8); return (double)x; }
    case KEVO_U8: return p[i];
  }
  return 0;
}

static kevo_tensor make_tensor(kevo_dtype t, std::vector<int64_t> shape) {
  kevo_tensor x{};
  x.dtype = t;
  x.ndim = (int)shape.size();
  int64_t stride = 1;
  for (int i = x.ndim - 1; i >= 0; --i) {
    x.shape[i] = shape[i];
    x.stride[i] = stride;
    stride *= shape[i];
  }
  return x;
}
)";

std::string shape_list(const std::vector<int64_t>& s) {
  std::string out = "{";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "}";
}

}  // namespace

Result<std::string> host_example(const Task& task, const Config& cfg, const std::string& arch) {
  auto r = task.resolve(cfg);
  if (!r) return r.unexpected();
  std::string dims_comment, dims_init;
  for (size_t i = 0; i < task.dims.size(); ++i) {
    dims_comment += fmt::format("{}{}={}", i ? ", " : "", task.dims[i], r->dims[i]);
    dims_init += fmt::format("{}{}", i ? ", " : "", r->dims[i]);
  }
  std::string s = fmt::format(
      "// Host example for the kevo kernel of task '{}': config '{}' ({}).\n"
      "// Build: nvcc -O3 -std=c++17 -arch={} -I. kernel.cu main.cu -o {}_example\n",
      task.name, cfg.name, dims_comment, arch, task.name);
  s += kPrelude;
  s += "\nint main() {\n  std::mt19937 rng(42);\n";
  s += fmt::format("  std::vector<int64_t> dims = {{{}}};\n", dims_init);
  s += "  std::vector<kevo_tensor> inputs, outputs;\n  std::vector<void*> to_free;\n";
  for (const auto& in : r->inputs) {
    const TensorSpec& t = *in.spec;
    double lo = -1, hi = 1;
    if (t.init.dist == Dist::Int) {
      auto l = eval_int_expr(t.init.low_expr.empty() ? "0" : t.init.low_expr, cfg.dims);
      auto h = eval_int_expr(t.init.high_expr.empty() ? "2" : t.init.high_expr, cfg.dims);
      lo = l ? static_cast<double>(*l) : 0;
      hi = h ? static_cast<double>(*h) : 2;
    } else if (t.init.dist == Dist::Uniform) {
      lo = t.init.a, hi = t.init.b;
    } else if (t.init.dist == Dist::Exponential || t.init.dist == Dist::LogNormal) {
      lo = 0.1, hi = 2;  // positive values for inputs that must stay positive
    }
    s += fmt::format(
        "  {{  // input '{}'\n"
        "    kevo_tensor x = make_tensor({}, {});\n"
        "    size_t n = 1;\n    for (int i = 0; i < x.ndim; ++i) n *= (size_t)x.shape[i];\n"
        "    auto h = random_host(x.dtype, n, {}, {}, rng);\n"
        "    CHECK(cudaMalloc(&x.data, h.size()));\n"
        "    CHECK(cudaMemcpy(x.data, h.data(), h.size(), cudaMemcpyHostToDevice));\n"
        "    to_free.push_back(x.data);\n    inputs.push_back(x);\n  }}\n",
        t.name, dtype_info(t.dtype).c_enum, shape_list(in.shape), lo, hi);
  }
  for (const auto& out : r->outputs) {
    s += fmt::format(
        "  {{  // output '{}'\n"
        "    kevo_tensor y = make_tensor({}, {});\n"
        "    size_t n = 1;\n    for (int i = 0; i < y.ndim; ++i) n *= (size_t)y.shape[i];\n"
        "    CHECK(cudaMalloc(&y.data, n * dtype_size(y.dtype)));\n"
        "    to_free.push_back(y.data);\n    outputs.push_back(y);\n  }}\n",
        out.name(), dtype_info(out.dtype()).c_enum, shape_list(out.shape));
  }
  std::string scalars;
  for (size_t i = 0; i < task.scalars.size(); ++i)
    scalars += fmt::format("{}{:.17g}", i ? ", " : "", task.scalars[i].value);
  s += fmt::format("  std::vector<double> scalars = {{{}}};\n", scalars);
  s += fmt::format("  size_t workspace_bytes = {};\n", r->workspace_bytes);
  s += R"(  void* workspace = nullptr;
  if (workspace_bytes) CHECK(cudaMalloc(&workspace, workspace_bytes));
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  kevo_args a{};
  a.abi_version = KEVO_ABI_VERSION;
  a.inputs = inputs.data();
  a.num_inputs = (int)inputs.size();
  a.outputs = outputs.data();
  a.num_outputs = (int)outputs.size();
  a.scalars = scalars.empty() ? nullptr : scalars.data();
  a.num_scalars = (int)scalars.size();
  a.dims = dims.data();
  a.num_dims = (int)dims.size();
  a.workspace = workspace;
  a.workspace_bytes = workspace_bytes;
  a.stream = stream;

  if (kevo_forward(&a) != 0) { std::fprintf(stderr, "kevo_forward failed\n"); return 1; }
  CHECK(cudaStreamSynchronize(stream));
  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  const int iters = 20;
  CHECK(cudaEventRecord(t0, stream));
  for (int i = 0; i < iters; ++i) kevo_forward(&a);
  CHECK(cudaEventRecord(t1, stream));
  CHECK(cudaEventSynchronize(t1));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, t0, t1));

  const kevo_tensor& y = outputs[0];
  size_t n = 1;
  for (int i = 0; i < y.ndim; ++i) n *= (size_t)y.shape[i];
  std::vector<unsigned char> h(n * dtype_size(y.dtype));
  CHECK(cudaMemcpy(h.data(), y.data, h.size(), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += element(h.data(), y.dtype, i);
  std::printf("kevo_forward: %.4f ms per call (mean of %d, warm caches); checksum of output 0: %.6g\n",
              ms / iters, iters, sum);
  for (void* p : to_free) cudaFree(p);
  if (workspace) cudaFree(workspace);
  cudaStreamDestroy(stream);
  return 0;
}
)";
  return s;
}

Result<ExportedFiles> export_kernel(const Task& task, const std::string& source, const std::string& provenance,
                                    const std::filesystem::path& out_dir, const std::string& config,
                                    const std::string& arch) {
  const Config* cfg = &task.main();
  if (!config.empty()) {
    cfg = nullptr;
    for (const auto& c : task.configs)
      if (c.name == config && !c.held_out) cfg = &c;
    if (!cfg) return fail("task '{}' has no visible config '{}'", task.name, config);
  }
  std::error_code ec;
  std::filesystem::create_directories(out_dir / "kevo", ec);
  if (ec) return fail("cannot create {}: {}", out_dir.string(), ec.message());
  ExportedFiles f;
  f.kernel = out_dir / "kernel.cu";
  f.main = out_dir / "main.cu";
  f.header = out_dir / "kevo" / "kernel.h";
  f.readme = out_dir / "README.txt";
  f.build_command = fmt::format("nvcc -O3 -std=c++17 -arch={} -I. kernel.cu main.cu -o {}_example", arch, task.name);
  auto header = read_file(kevo_home() / "include" / "kevo" / "kernel.h");
  if (!header) return header.unexpected();
  KEVO_TRY(write_file_atomic(f.header, *header));
  KEVO_TRY(write_file_atomic(f.kernel, fmt::format("// {}\n{}", provenance, source)));
  auto main = host_example(task, *cfg, arch);
  if (!main) return main.unexpected();
  KEVO_TRY(write_file_atomic(f.main, *main));
  KEVO_TRY(write_file_atomic(
      f.readme, fmt::format("{}\n\nkernel.cu  the kernel (kevo ABI, see kevo/kernel.h)\nmain.cu    a host example "
                            "for config '{}'\n\nBuild and run:\n  {}\n  ./{}_example\n",
                            provenance, cfg->name, f.build_command, task.name)));
  return f;
}

}  // namespace kevo::interop
