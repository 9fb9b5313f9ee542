// GPU test of the device data plane (runner/device_data.h through kevo-runner's protocol): inputs the
// runner draws on the GPU equal the host generator's, and the oracle runner's GPU comparison
// (through CUDA IPC) agrees with check/compare.cpp on the same data. Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "check/compare.h"
#include "check/output_sums.h"
#include "compile/nvcc.h"
#include "run/runner_client.h"
#include "run/protocol.h"
#include "task/tensor.h"
#include "util/subprocess.h"

using namespace kevo;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// Copies input 0 to output 0 byte for byte; "shift" (scalar 0) != 0 perturbs element 7 of an f32.
constexpr const char* kCopy = R"(#include <kevo/kernel.h>
__global__ void copy(const unsigned char* x, unsigned char* y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}
__global__ void bump(float* y) { y[7] += 1.0f; }
KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int dt = a->inputs[0].dtype, w = dt == KEVO_I64 ? 8 : dt == KEVO_U8 ? 1 : (dt == KEVO_F16 || dt == KEVO_BF16) ? 2 : 4;
  long long n = kevo_numel(&a->inputs[0]) * w;
  copy<<<(unsigned)((n + 255) / 256), 256, 0, a->stream>>>((const unsigned char*)a->inputs[0].data,
                                                        (unsigned char*)a->outputs[0].data, n);
  if (a->num_scalars > 0 && a->scalars[0] != 0) bump<<<1, 1, 0, a->stream>>>((float*)a->outputs[0].data);
  return 0;
}
)";

bool have_gpu() {
  auto r = run_process({.argv = {"nvidia-smi", "-L"}, .timeout = std::chrono::seconds(30)});
  return r && r->ok() && r->out.find("GPU") != std::string::npos;
}

// reserve > 0: loaded as a candidate is (untrusted) into a slab of that many bytes.
std::unique_ptr<RunnerClient> start_with_copy(const fs::path& so, uint64_t reserve = 0) {
  if (const char* b = getenv("KEVO_BUILD"); b && *b && !getenv("KEVO_RUNNER"))
    setenv("KEVO_RUNNER", (fs::path(b) / "bin" / "kevo-runner").c_str(), 1);
  else if (!getenv("KEVO_RUNNER"))
    setenv("KEVO_RUNNER", (fs::path(KEVO_BINARY_DIR) / "bin" / "kevo-runner").c_str(), 1);
  auto r = RunnerClient::start({});
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  if (!r) return nullptr;
  if (reserve > 0) {
    auto c = (*r)->call(proto::ConfineRequest{so.string(), reserve}, 60s);
    EXPECT_TRUE(c) << (c ? "" : c.error().message);
  }
  auto l = (*r)->call(proto::LoadRequest{"cand", so.string(), reserve > 0}, 60s);
  EXPECT_TRUE(l) << (l ? "" : l.error().message);
  return std::move(*r);
}

fs::path compile_copy() {
  CompileOptions co;
  co.arch = "sm_90";
  if (auto r = run_process({.argv = {"nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"},
                            .timeout = std::chrono::seconds(30)});
      r && r->ok() && r->out.size() >= 3)
    co.arch = "sm_" + r->out.substr(0, 1) + r->out.substr(2, 1);
  auto so = compile_cuda_shared(kCopy, "copy.cu", co);
  EXPECT_TRUE(so && so->ok) << (so ? so->diagnostics : so.error().message);
  return so && so->ok ? so->so_path : fs::path();
}

proto::TensorDesc gen_desc(const std::string& name, DType dt, int64_t n, const DrawSpec& d) {
  return {name, static_cast<int>(dt), {n}, n, static_cast<size_t>(n) * dtype_size(dt), 0, proto::Gen::of(d)};
}

// An output of n elements at the arena's start.
proto::TensorDesc out_desc(DType dt, int64_t n) {
  return {"y", static_cast<int>(dt), {n}, n, static_cast<size_t>(n) * dtype_size(dt), 0, std::nullopt};
}

proto::RunRequest run_req(const proto::TensorDesc& in, const proto::TensorDesc& out, double shift, bool keep) {
  proto::RunRequest q;
  q.slot = "cand";
  q.arena_size = keep ? 0 : out.nbytes;
  q.inputs = {in};
  q.outputs = {out};
  q.scalars = {shift};
  q.keep = q.export_ipc = keep;
  return q;
}

// Every test needs a GPU and the copying kernel compiled for it.
class DeviceData : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_gpu()) GTEST_SKIP() << "GPU test skipped: no GPU (nvidia-smi found none)";
    so_ = compile_copy();
    ASSERT_FALSE(so_.empty());
  }
  fs::path so_;
};

}  // namespace

TEST_F(DeviceData, DrawsEqualTheHostGenerator) {
  auto runner = start_with_copy(so_);
  ASSERT_TRUE(runner);
  const int64_t n = 1'000'003;  // odd: the last Box-Muller pair is split
  struct Case {
    Dist dist;
    DType dt;
    double a, b;
    std::optional<double> min = std::nullopt;  // InitSpec::min (a ReLU output's draw)
  };
  for (const Case& k : {Case{Dist::Normal, DType::F32, 0, 1}, Case{Dist::Normal, DType::F32, 0, 1, 0.0},
                        Case{Dist::Normal, DType::BF16, 1, 2},
                        Case{Dist::LogNormal, DType::F16, 0, 0.5}, Case{Dist::Uniform, DType::F32, -2, 3},
                        Case{Dist::Laplace, DType::F32, 0, 1}, Case{Dist::Exponential, DType::F32, 2, 0},
                        Case{Dist::Int, DType::I64, 0, 0}, Case{Dist::Int, DType::I32, 0, 0},
                        Case{Dist::Int, DType::U8, 0, 0}}) {
    for (bool wide : {false, true}) {
      TensorSpec spec;
      spec.name = "x";
      spec.dtype = k.dt;
      spec.init.dist = k.dist;
      spec.init.a = k.a;
      spec.init.b = k.b;
      spec.init.low_expr = "3";
      spec.init.high_expr = "200";
      spec.init.min = k.min;
      auto host = generate_input(spec, {n}, {}, 42, wide);
      ASSERT_TRUE(host);
      auto d = draw_spec(spec, {}, 42, wide);
      ASSERT_TRUE(d);
      const proto::TensorDesc out = out_desc(k.dt, n);
      ASSERT_TRUE(runner->arena().resize(host->bytes.size()));
      auto r = runner->call(run_req(gen_desc("x", k.dt, n, *d), out, 0, false), 60s);
      ASSERT_TRUE(r) << r.error().message;
      // Device libm (log, sin, cos, exp in double) may differ from glibc's in the last bit of a
      // double; after rounding to the tensor's type that leaves at most rare one-ulp differences.
      int64_t differ = 0;
      double max_rel = 0;
      const uint8_t* dev = reinterpret_cast<const uint8_t*>(runner->arena().data());
      for (int64_t i = 0; i < n; ++i) {
        double g = load_as_double(dev, k.dt, static_cast<size_t>(i)), h = host->at(static_cast<size_t>(i));
        if (g != h) {
          ++differ;
          max_rel = std::max(max_rel, std::fabs(g - h) / std::max(std::fabs(h), 1e-30));
        }
      }
      std::string what = std::string(dtype_name(k.dt)) + " dist " + std::to_string(static_cast<int>(k.dist)) +
                         (k.min ? " min" : "") + (wide ? " wide" : "");
      if (k.dist == Dist::Int || k.dist == Dist::Uniform) {
        EXPECT_EQ(differ, 0) << what;
      }
      EXPECT_LT(differ, n / 10000 + 1) << what;
      EXPECT_LT(max_rel, 1e-2) << what;  // one ulp of bf16 at most
      std::printf("DRAW %s: %lld of %lld differ from the host (max rel %.3g)\n", what.c_str(),
                  static_cast<long long>(differ), static_cast<long long>(n), max_rel);
    }
  }
}

// The timed draws (task/draw.h draw_timed_value, what time_batch fills every timed call with) are
// integer hashing and correctly rounded arithmetic: the device's bits are the host's for normal,
// uniform and int draws; lognormal goes through exp and may differ in a rare last place.
TEST_F(DeviceData, TimedDrawsAreTheHostsBits) {
  auto runner = start_with_copy(so_);
  ASSERT_TRUE(runner);
  const int64_t n = 1'000'003;
  struct Case {
    int kind;
    DType dt;
    double a, b;
    bool exact;
    bool clamp = false;  // raised to 0 (InitSpec::min)
  };
  for (const Case& k : {Case{kDrawNormal, DType::F32, 0, 1, true}, Case{kDrawNormal, DType::F32, 0, 1, true, true},
                        Case{kDrawNormal, DType::BF16, 1, 2, true},
                        Case{kDrawUniform, DType::F32, -2, 3, true}, Case{kDrawInt, DType::I64, 0, 0, true},
                        Case{kDrawLogNormal, DType::F16, 0, 0.5, false}}) {
    DrawSpec d{k.kind, k.a, k.b, 3, 200, draw_call_base(42, 17), true, k.clamp, 0.0};
    std::vector<uint8_t> host(static_cast<size_t>(n) * dtype_size(k.dt));
    for (int64_t i = 0; i < n; ++i) store_from_double(host.data(), k.dt, static_cast<size_t>(i), draw_value(d, i));
    const proto::TensorDesc out = out_desc(k.dt, n);
    ASSERT_TRUE(runner->arena().resize(host.size()));
    auto r = runner->call(run_req(gen_desc("x", k.dt, n, d), out, 0, false), 60s);
    ASSERT_TRUE(r) << r.error().message;
    const uint8_t* dev = reinterpret_cast<const uint8_t*>(runner->arena().data());
    int64_t differ = 0;
    for (int64_t i = 0; i < n; ++i)
      differ += load_as_double(dev, k.dt, static_cast<size_t>(i)) != load_as_double(host.data(), k.dt, static_cast<size_t>(i));
    if (k.exact) {
      EXPECT_EQ(differ, 0) << "kind " << k.kind;
    }
    EXPECT_LT(differ, n / 10000 + 1) << "kind " << k.kind;
    std::printf("TIMED DRAW kind %d%s %s: %lld of %lld differ from the host\n", k.kind, k.clamp ? " min" : "", dtype_name(k.dt),
                static_cast<long long>(differ), static_cast<long long>(n));
  }
}

// A timed batch of the copying kernel: each call's inputs are that call's timed draws, and the sums
// the runner reports of its output are what the host computes of the same values (sums_of): the
// vectorized f32 path, the scalar bf16 path, and a size that leaves a tail of 3.
TEST_F(DeviceData, TimedCallSumsAreTheHosts) {
  auto runner = start_with_copy(so_);
  ASSERT_TRUE(runner);
  const int64_t n = 1'000'003;
  for (DType dt : {DType::F32, DType::BF16}) {
    const DrawSpec d{kDrawNormal, 0, 1, 0, 1, 12345, false, false, 0.0};
    proto::TimeBatchRequest q;
    q.slot = "cand";
    q.inputs = {gen_desc("x", dt, n, d)};
    q.outputs = {out_desc(dt, n)};
    q.scalars = {0.0};
    q.first_call = 1000;
    q.calls = 3;
    q.sums_key = 0x5eedc0de;
    auto r = runner->call(q, 60s);
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_EQ(r->sums.size(), 3u);
    for (int c = 0; c < 3; ++c) {
      DrawSpec timed = d;
      timed.base = draw_call_base(d.base, q.first_call + static_cast<uint64_t>(c));
      timed.timed = true;
      HostTensor h = make_tensor("y", dt, {n});
      for (int64_t i = 0; i < n; ++i) store_from_double(h.bytes.data(), dt, static_cast<size_t>(i), draw_value(timed, i));
      const proto::Sums want = sums_of(h, q.sums_key);
      SumsCheck check = compare_sums(r->sums[static_cast<size_t>(c)][0], want, Tolerance{1e-6, 1e-6});
      EXPECT_TRUE(check.ok) << dtype_name(dt) << " call " << c << ": " << check.why;
      EXPECT_EQ(r->sums[static_cast<size_t>(c)][0].nonfinite, 0);
    }
  }
}

TEST_F(DeviceData, OracleComparisonAgreesWithTheHostComparison) {
  // Two processes: "cand" exports its buffers, "oracle" holds the reference and compares.
  auto cand = start_with_copy(so_);
  auto oracle = start_with_copy(so_);
  ASSERT_TRUE(cand && oracle);
  const int64_t n = 3'000'001;
  TensorSpec spec;
  spec.name = "x";
  auto d = draw_spec(spec, {}, 7, false);
  ASSERT_TRUE(d);
  const proto::TensorDesc in = gen_desc("x", DType::F32, n, *d);
  const proto::TensorDesc out = out_desc(DType::F32, n);
  // The oracle's buffers are keyed by slot: it runs the same copy kernel as "cand".
  auto ro = oracle->call(run_req(in, out, 0, true), 60s);
  ASSERT_TRUE(ro) << ro.error().message;
  for (double shift : {0.0, 1.0}) {
    auto rc = cand->call(run_req(in, out, shift, true), 60s);
    ASSERT_TRUE(rc) << rc.error().message;
    ASSERT_EQ(rc->outputs_ipc.size(), 1u);
    ASSERT_EQ(rc->inputs_ipc.size(), 1u);
    proto::CompareRequest req{1e-4, 1e-4};
    req.outputs.push_back({rc->outputs_ipc[0], 0, std::nullopt, n, uint64_t(n) * 4, "cand/out/y", uint64_t(n) * 4, true});
    req.inputs.push_back({rc->inputs_ipc[0], uint64_t(n) * 4, "cand/in/x"});
    auto c = oracle->call(req, 60s);
    ASSERT_TRUE(c) << c.error().message;
    ASSERT_EQ(c->outputs.size(), 1u);
    ASSERT_EQ(c->inputs.size(), 1u);
    const json cmp = c->outputs[0].cmp;
    EXPECT_EQ(c->inputs[0].differing_bytes, 0u);
    // The same comparison on the host, on host-drawn data.
    auto want = generate_input(spec, {n}, {}, 7, false);
    ASSERT_TRUE(want);
    HostTensor got = *want;
    if (shift != 0) {
      float* p = reinterpret_cast<float*>(got.bytes.data());
      p[7] += 1.0f;
    }
    Comparison h = compare_output(got, Expected::of(*want), Tolerance{1e-4, 1e-4}, true);
    EXPECT_EQ(cmp["mismatches"].get<int64_t>(), h.mismatches) << cmp.dump();
    EXPECT_EQ(cmp["first_bad"].get<int64_t>(), h.first_bad) << cmp.dump();
    EXPECT_NEAR(cmp["max_abs_err"].get<double>(), h.max_abs_err, 1e-6) << cmp.dump();
    EXPECT_EQ(cmp["count"].get<int64_t>(), n);
    std::printf("COMPARE shift %.0f: device %s | host %lld mismatches, first %lld\n", shift, cmp.dump().c_str(),
                static_cast<long long>(h.mismatches), static_cast<long long>(h.first_bad));
  }
}

// A candidate's runner with a slab: its buffers come back as one allocation's handle and their
// offsets, the oracle's runner compares them there, a moved draw lands elsewhere in the slab, and
// a reference past the end of the allocation (a lying runner) is refused with nothing read.
TEST_F(DeviceData, SlabBuffersCompareWhereTheyLieAndAForgedOffsetIsRefused) {
  constexpr uint64_t kSlab = uint64_t(64) << 20;
  auto cand = start_with_copy(so_, kSlab);
  auto oracle = start_with_copy(so_);
  ASSERT_TRUE(cand && oracle);
  const int64_t n = 1'000'001;
  TensorSpec spec;
  spec.name = "x";
  auto d = draw_spec(spec, {}, 7, false);
  ASSERT_TRUE(d);
  const proto::TensorDesc in = gen_desc("x", DType::F32, n, *d);
  const proto::TensorDesc out = out_desc(DType::F32, n);
  ASSERT_TRUE(oracle->call(run_req(in, out, 0, true), 60s));
  std::vector<uint64_t> offsets;
  proto::IpcBuffer last;
  for (int placement : {0, 1}) {
    proto::RunRequest q = run_req(in, out, 0, true);
    q.placement = q.poison = placement;
    auto rc = cand->call(q, 60s);
    ASSERT_TRUE(rc) << rc.error().message;
    ASSERT_EQ(rc->outputs_ipc.size(), 1u);
    ASSERT_EQ(rc->inputs_ipc.size(), 1u);
    EXPECT_EQ(rc->outputs_ipc[0].handle, rc->inputs_ipc[0].handle) << "one slab, one handle";
    offsets.push_back(rc->inputs_ipc[0].offset);
    offsets.push_back(rc->outputs_ipc[0].offset);
    last = rc->outputs_ipc[0];
    proto::CompareRequest req{0, 0};
    req.outputs.push_back({rc->outputs_ipc[0], 0, std::nullopt, n, uint64_t(n) * 4, "cand/out/y", uint64_t(n) * 4, true});
    req.inputs.push_back({rc->inputs_ipc[0], uint64_t(n) * 4, "cand/in/x"});
    auto c = oracle->call(req, 60s);
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_TRUE(c->out_of_bounds.empty()) << c->out_of_bounds;
    ASSERT_EQ(c->outputs.size(), 1u);
    EXPECT_EQ(c->outputs[0].cmp.mismatches, 0) << "placement " << placement;
    EXPECT_EQ(c->outputs[0].cmp.count, n);
    EXPECT_EQ(c->inputs.at(0).differing_bytes, 0u);
  }
  std::sort(offsets.begin(), offsets.end());
  EXPECT_EQ(std::adjacent_find(offsets.begin(), offsets.end()), offsets.end()) << "a moved buffer landed on an old one";
  for (uint64_t o : offsets) EXPECT_LT(o, kSlab);
  std::printf("SLAB offsets: %llu %llu %llu %llu\n", (unsigned long long)offsets[0], (unsigned long long)offsets[1],
              (unsigned long long)offsets[2], (unsigned long long)offsets[3]);
  // Forged references: past the slab's end, straddling it, and not a handle at all.
  for (proto::IpcBuffer bad : {proto::IpcBuffer{last.handle, kSlab}, proto::IpcBuffer{last.handle, kSlab - 4096},
                               proto::IpcBuffer{"zz", 0}}) {
    proto::CompareRequest req{0, 0};
    req.outputs.push_back({bad, 0, std::nullopt, n, uint64_t(n) * 4, "cand/out/y", uint64_t(n) * 4, true});
    auto c = oracle->call(req, 60s);
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_FALSE(c->out_of_bounds.empty()) << "offset " << bad.offset;
    EXPECT_TRUE(c->outputs.empty());
    std::printf("REFUSED offset %llu: %s\n", (unsigned long long)bad.offset, c->out_of_bounds.c_str());
  }
  EXPECT_TRUE(oracle->call(proto::HelloRequest{}, 30s)) << "the oracle's runner survives forged references";
}
