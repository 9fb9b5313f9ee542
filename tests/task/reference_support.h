// Helpers of the tests of bundled tasks' CPU references (tasks/*/reference.cpp): a tensor of
// doubles, compiling a reference with the host compiler into a shared object, and running it with
// a serial parallel_for. Header-only, for tests/task.
#pragma once

#include <dlfcn.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <kevo/reference.h>

#include "support/temp_dir.h"
#include "util/subprocess.h"

namespace kevo::test {

namespace fs = std::filesystem;

using RefFn = void (*)(const kevo_ref_args*);

// A tensor for the reference: contiguous doubles and a shape.
struct T {
  std::vector<int64_t> shape;
  std::vector<double> data;
  T() = default;
  explicit T(std::vector<int64_t> s, std::vector<double> d = {})
      : shape(std::move(s)), data(std::move(d)) {
    int64_t n = numel();
    if (data.empty()) data.assign(static_cast<size_t>(n), 0.0);
    EXPECT_EQ(static_cast<int64_t>(data.size()), n) << "test bug: data does not match the shape";
  }
  int64_t numel() const {
    int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }
  double& operator[](int64_t i) { return data[static_cast<size_t>(i)]; }
  double operator[](int64_t i) const { return data[static_cast<size_t>(i)]; }
};

// Compiles tasks/<name>/reference.cpp once per test binary and returns its entry point; nullptr
// (with the reason in *why) when the host compiler is missing.
inline RefFn load_reference(const std::string& name, std::string* why) {
  static std::map<std::string, RefFn> cache;
  static fs::path dir;
  if (auto it = cache.find(name); it != cache.end()) return it->second;
  auto cxx = kevo::find_program("g++");
  if (!cxx) {
    *why = "g++ not found on PATH: cannot compile the task references";
    return nullptr;
  }
  if (dir.empty()) {
    dir = temp_dir_until_exit("kevo-reference-test");
  }
  const fs::path src = fs::path(KEVO_SOURCE_DIR) / "tasks" / name / "reference.cpp";
  const fs::path so = dir / (name + ".so");
  auto r = kevo::run_process({.argv = {*cxx, "-O2", "-std=c++17", "-shared", "-fPIC",
                                 "-I" + (fs::path(KEVO_SOURCE_DIR) / "include").string(), "-o",
                                 so.string(), src.string()},
                        .timeout = std::chrono::milliseconds(120000)});
  if (!r) {
    ADD_FAILURE() << "cannot run g++: " << r.error().message;
    return cache[name] = nullptr;
  }
  if (!r->ok()) {
    ADD_FAILURE() << src << " does not compile (" << r->describe() << "):\n" << r->err;
    return cache[name] = nullptr;
  }
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    ADD_FAILURE() << "dlopen " << so << ": " << dlerror();
    return cache[name] = nullptr;
  }
  auto fn = reinterpret_cast<RefFn>(dlsym(h, "kevo_reference"));
  if (!fn) ADD_FAILURE() << so << " does not export kevo_reference";
  std::error_code ec;
  fs::remove(so, ec);  // the mapping stays valid
  return cache[name] = fn;
}

inline void serial_for(int64_t n, void* ctx, void (*fn)(void*, int64_t)) {
  for (int64_t i = 0; i < n; ++i) fn(ctx, i);
}

// Runs a reference: outputs must come with their shapes; they are zero-filled first (as kevo does).
inline void run_ref(RefFn fn, std::vector<T>& inputs, std::vector<T>& outputs,
             const std::vector<double>& scalars, const std::vector<int64_t>& dims) {
  auto conv = [](T& t) {
    kevo_ref_tensor r{};
    r.data = t.data.data();
    r.ndim = static_cast<int>(t.shape.size());
    for (size_t i = 0; i < t.shape.size(); ++i) r.shape[i] = t.shape[i];
    return r;
  };
  std::vector<kevo_ref_tensor> ins, outs;
  for (auto& t : inputs) ins.push_back(conv(t));
  for (auto& t : outputs) {
    std::fill(t.data.begin(), t.data.end(), 0.0);
    outs.push_back(conv(t));
  }
  kevo_ref_args a{};
  a.inputs = ins.data();
  a.num_inputs = static_cast<int>(ins.size());
  a.outputs = outs.data();
  a.num_outputs = static_cast<int>(outs.size());
  a.scalars = scalars.data();
  a.num_scalars = static_cast<int>(scalars.size());
  a.dims = dims.data();
  a.num_dims = static_cast<int>(dims.size());
  a.parallel_for = serial_for;
  fn(&a);
}

}  // namespace kevo::test
