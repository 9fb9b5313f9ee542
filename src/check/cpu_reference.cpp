#include "check/cpu_reference.h"

#include <dlfcn.h>

#include <kevo/reference.h>

#include <atomic>
#include <thread>

#include "check/compare.h"
#include "task/resolved.h"
#include "util/fs.h"

namespace kevo {

namespace {
// Dynamic work distribution: rows of a reference can cost very different amounts.
void parallel_for_impl(int64_t n, void* ctx, void (*fn)(void*, int64_t)) {
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  if (n < 2 || threads == 1) {
    for (int64_t i = 0; i < n; ++i) fn(ctx, i);
    return;
  }
  std::atomic<int64_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::min<int64_t>(threads, n); ++t)
    pool.emplace_back([&] {
      for (int64_t i; (i = next.fetch_add(1)) < n;) fn(ctx, i);
    });
  for (auto& t : pool) t.join();
}
}  // namespace

Result<CpuReference> CpuReference::compile(const Task& task, const CompileOptions& opts) {
  auto src = read_file(task.reference_path());
  if (!src) return src.unexpected();
  auto so = compile_host_shared(*src, "reference.cpp", opts);
  if (!so) return so.unexpected();
  if (!so->ok)
    return fail("{}: the reference does not compile:\n{}", task.reference_path().string(), so->diagnostics);
  return load(so->so_path);
}

Result<CpuReference> CpuReference::load(const std::filesystem::path& so) {
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) return fail("cannot load the CPU reference {}: {}", so.string(), dlerror());
  void* fn = dlsym(h, "kevo_reference");
  if (!fn) {
    dlclose(h);
    return fail("{}: no kevo_reference function (define KEVO_REFERENCE void "
                "kevo_reference(const kevo_ref_args* a))",
                so.string());
  }
  CpuReference r;
  r.handle_ = h;
  r.fn_ = fn;
  return r;
}

CpuReference::~CpuReference() {
  if (handle_) dlclose(handle_);
}

Result<std::vector<std::vector<double>>> CpuReference::run(
    const Task& task, const Config& c, const std::vector<HostTensor>& inputs) const {
  auto r = task.resolve(c);
  if (!r) return r.unexpected();
  std::vector<std::vector<double>> in_data, out_data;
  std::vector<kevo_ref_tensor> ins, outs;
  auto describe = [](std::vector<double>& data, const std::vector<int64_t>& shape) {
    kevo_ref_tensor t{};
    t.data = data.data();
    t.ndim = static_cast<int>(shape.size());
    for (size_t i = 0; i < shape.size(); ++i) t.shape[i] = shape[i];
    return t;
  };
  in_data.reserve(inputs.size());
  for (const auto& t : inputs) {
    in_data.push_back(to_doubles(t));
    ins.push_back(describe(in_data.back(), t.shape));
  }
  out_data.reserve(r->outputs.size());
  for (const auto& o : r->outputs) {
    out_data.emplace_back(static_cast<size_t>(o.numel), 0.0);
    outs.push_back(describe(out_data.back(), o.shape));
  }
  std::vector<double> scalars;
  for (const auto& s : task.scalars) scalars.push_back(s.value);
  std::vector<int64_t>& dims = r->dims;
  kevo_ref_args a{};
  a.inputs = ins.data();
  a.num_inputs = static_cast<int>(ins.size());
  a.outputs = outs.data();
  a.num_outputs = static_cast<int>(outs.size());
  a.scalars = scalars.data();
  a.num_scalars = static_cast<int>(scalars.size());
  a.dims = dims.data();
  a.num_dims = static_cast<int>(dims.size());
  a.parallel_for = parallel_for_impl;
  reinterpret_cast<void (*)(const kevo_ref_args*)>(fn_)(&a);
  return out_data;
}

}  // namespace kevo
