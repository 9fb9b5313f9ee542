// The bridge protocol end to end: start, hello, load/describe/run on CPU, every dtype, user errors
// with tracebacks, user prints on stdout, timeouts that kill the bridge, "no CUDA" from time.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <fstream>

#include "test_support.h"
#include "torch/bridge.h"

namespace kevo::torch {
namespace {

using testing::data;
using testing::kb_data;

HostTensor filled(const std::string& name, DType t, std::vector<int64_t> shape, double (*f)(size_t)) {
  HostTensor h = make_tensor(name, t, shape);
  for (int64_t i = 0; i < h.numel(); ++i) store_from_double(h.bytes.data(), t, static_cast<size_t>(i), f(static_cast<size_t>(i)));
  return h;
}

TEST(Bridge, HelloReportsVersions) {
  KEVO_BRIDGE_OR_SKIP(b);
  EXPECT_EQ(b->info().protocol, 1);
  EXPECT_FALSE(b->info().torch.empty());
  EXPECT_FALSE(b->info().numpy.empty());
}

TEST(Bridge, DescribeKernelBenchFile) {
  KEVO_BRIDGE_OR_SKIP(b);
  ASSERT_TRUE(b->load(kb_data("kb_linear_gelu.py")));
  auto d = b->describe();
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->style, "module");
  EXPECT_EQ(d->output_shapes_from, "meta");
  ASSERT_EQ(d->globals.size(), 3u);  // scale = 0.5 is not a size
  EXPECT_EQ(d->globals[0], (std::pair<std::string, int64_t>{"batch_size", 128}));
  EXPECT_EQ(d->globals[2], (std::pair<std::string, int64_t>{"out_features", 512}));
  ASSERT_EQ(d->args.size(), 1u);
  EXPECT_EQ(d->args[0].name, "x");
  EXPECT_EQ(d->args[0].tensor.shape, (std::vector<int64_t>{128, 256}));
  ASSERT_TRUE(d->args[0].tensor.stats);
  EXPECT_NEAR(d->args[0].tensor.stats->std, 1.0, 0.05);
  ASSERT_EQ(d->weights.size(), 2u);
  EXPECT_EQ(d->weights[0].name, "linear_weight");
  EXPECT_EQ(d->weights[0].path, "linear.weight");
  EXPECT_EQ(d->weights[0].shape, (std::vector<int64_t>{512, 256}));
  ASSERT_EQ(d->outputs.size(), 1u);
  EXPECT_EQ(d->outputs[0].shape, (std::vector<int64_t>{128, 512}));
  // Sizes overridden: derived globals follow.
  ASSERT_TRUE(b->load(kb_data("kb_linear_gelu.py"), {{"batch_size", 3}, {"out_features", 5}}, 0, true));
  d = b->describe(false);
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->outputs[0].shape, (std::vector<int64_t>{3, 5}));
  EXPECT_FALSE(d->args[0].tensor.stats);
}

TEST(Bridge, RunComputesWithGivenInputsAndWeights) {
  KEVO_BRIDGE_OR_SKIP(b);
  ASSERT_TRUE(b->load(kb_data("kb_linear_gelu.py"), {{"batch_size", 2}, {"in_features", 3}, {"out_features", 2}}));
  auto x = filled("x", DType::F32, {2, 3}, [](size_t i) { return static_cast<double>(i) - 2.0; });
  auto w = filled("linear_weight", DType::F32, {2, 3}, [](size_t i) { return i == 0 || i == 4 ? 1.0 : 0.0; });
  auto bias = filled("linear_bias", DType::F32, {2}, [](size_t) { return 0.5; });
  auto out = b->run({x, w, bias});
  ASSERT_TRUE(out) << out.error().message;
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].name, "out");
  ASSERT_EQ((*out)[0].shape, (std::vector<int64_t>{2, 2}));
  // x = [[-2,-1,0],[1,2,3]]; linear picks x[:,0] and x[:,1], + 0.5; then gelu, * 0.5
  auto gelu = [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); };
  double expect[4] = {gelu(-1.5) * 0.5, gelu(-0.5) * 0.5, gelu(1.5) * 0.5, gelu(2.5) * 0.5};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR((*out)[0].at(static_cast<size_t>(i)), expect[i], 1e-6) << i;
  // Unknown names and wrong dtypes are errors, not silent.
  auto bad = b->run({x, filled("nope", DType::F32, {1}, [](size_t) { return 0.0; })});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("no argument or weight named nope"), std::string::npos) << bad.error().message;
  auto missing = b->run({w});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("no tensor for argument 'x'"), std::string::npos);
  auto wrong_shape = b->run({x, filled("linear_weight", DType::F32, {3, 3}, [](size_t) { return 0.0; })});
  ASSERT_FALSE(wrong_shape);
  EXPECT_NE(wrong_shape.error().message.find("weight 'linear_weight'"), std::string::npos) << wrong_shape.error().message;
}

TEST(Bridge, EveryDtypeCrossesExactly) {
  KEVO_BRIDGE_OR_SKIP(b);
  ASSERT_TRUE(b->load(data("dtypes.py"), {{"n", 9}}));
  auto d = b->describe();
  ASSERT_TRUE(d) << d.error().message;
  ASSERT_EQ(d->args.size(), 6u);
  EXPECT_EQ(d->args[0].tensor.dtype, DType::BF16);
  EXPECT_EQ(d->args[1].tensor.dtype, DType::F16);
  EXPECT_EQ(d->args[2].tensor.dtype, DType::I32);
  EXPECT_EQ(d->args[3].tensor.dtype, DType::I64);
  EXPECT_EQ(d->args[4].tensor.dtype, DType::U8);
  EXPECT_EQ(d->args[5].tensor.dtype, DType::U8);
  EXPECT_EQ(d->args[5].tensor.torch_dtype, "bool");
  ASSERT_EQ(d->outputs.size(), 2u);
  EXPECT_EQ(d->outputs[0].dtype, DType::BF16);
  EXPECT_EQ(d->outputs[1].dtype, DType::F16);
  // Values exactly representable everywhere: a = i/4 (bf16), b = -i (f16), c = 1, d = 2, e = i.
  auto a = filled("a", DType::BF16, {9}, [](size_t i) { return static_cast<double>(i) / 4; });
  auto bb = filled("b", DType::F16, {9}, [](size_t i) { return -static_cast<double>(i); });
  auto c = filled("c", DType::I32, {9}, [](size_t) { return 1.0; });
  auto dd = filled("d", DType::I64, {9}, [](size_t) { return 2.0; });
  auto e = filled("e", DType::U8, {9}, [](size_t i) { return static_cast<double>(i); });
  auto mask = filled("mask", DType::U8, {9}, [](size_t i) { return i % 2 ? 1.0 : 0.0; });
  auto out = b->run({a, bb, c, dd, e, mask});
  ASSERT_TRUE(out) << out.error().message;
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].dtype, DType::BF16);
  EXPECT_EQ((*out)[1].name, "out1");
  for (size_t i = 0; i < 9; ++i) {
    double s = static_cast<double>(i) / 2 - static_cast<double>(i) + 3 + static_cast<double>(i);
    EXPECT_EQ((*out)[0].at(i), s) << i;
    EXPECT_EQ((*out)[1].at(i), i % 2 ? s : 0.0) << i;
  }
}

TEST(Bridge, UserErrorsComeBackWithTraceback) {
  KEVO_BRIDGE_OR_SKIP(b);
  ASSERT_TRUE(b->load(kb_data("malformed/raises.py")));
  auto d = b->describe();
  ASSERT_FALSE(d);
  const std::string& m = d.error().message;
  EXPECT_NE(m.find("ValueError: kevo-test: get_inputs is broken on purpose"), std::string::npos) << m;
  EXPECT_NE(m.find("Python traceback"), std::string::npos) << m;
  EXPECT_NE(m.find("raises.py\", line 12, in helper"), std::string::npos) << m;
  EXPECT_TRUE(b->alive());
  // The bridge goes on serving.
  ASSERT_TRUE(b->load(kb_data("kb_gelu.py")));
  EXPECT_TRUE(b->describe(false));
}

TEST(Bridge, MalformedFilesFailClearly) {
  KEVO_BRIDGE_OR_SKIP(b);
  struct Case {
    const char* file;
    const char* expect;
  };
  for (const Case& c : {Case{"malformed/syntax_error.py", "SyntaxError"},
                        Case{"malformed/no_get_inputs.py", "no_get_inputs.py: defines no get_inputs() function"},
                        Case{"malformed/returns_dict.py", "forward returned dict"},
                        Case{"malformed/float64.py", "torch.float64 has no kevo equivalent"}}) {
    Status s = b->load(kb_data(c.file));
    std::string m;
    if (!s) {
      m = s.error().message;
    } else {
      auto d = b->describe();
      ASSERT_FALSE(d) << c.file << " was accepted";
      m = d.error().message;
    }
    EXPECT_NE(m.find(c.expect), std::string::npos) << c.file << ": " << m;
  }
  auto missing = b->load(data("does_not_exist.py"));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("does_not_exist.py: no such file"), std::string::npos);
}

TEST(Bridge, PrintsOnStdoutDoNotBreakTheProtocol) {
  KEVO_BRIDGE_OR_SKIP(b);
  ASSERT_TRUE(b->load(data("prints_stdout.py"), {{"size", 4}}));
  auto x = filled("x", DType::F32, {4, 3}, [](size_t i) { return static_cast<double>(i); });
  auto out = b->run({x});
  ASSERT_TRUE(out) << out.error().message;
  for (size_t i = 0; i < 12; ++i) EXPECT_EQ((*out)[0].at(i), 3.0 * static_cast<double>(i));
  EXPECT_NE(b->stderr_tail().find("hello from the reference on stdout"), std::string::npos);
}

TEST(Bridge, TimeWithoutCudaSaysSo) {
  KEVO_BRIDGE_OR_SKIP(b);
  if (b->info().cuda) GTEST_SKIP() << "torch sees a GPU here: the no-CUDA path is not reachable";
  ASSERT_TRUE(b->load(kb_data("kb_gelu.py"), {{"n", 10}}));
  auto x = filled("x", DType::F32, {10}, [](size_t) { return 1.0; });
  auto t = b->time({x});
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("no CUDA"), std::string::npos) << t.error().message;
  EXPECT_EQ(t.error().code, ErrorCode::kNoCuda);
  auto r = b->run({x}, {}, "cuda");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("no CUDA"), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().code, ErrorCode::kNoCuda);
}

TEST(Bridge, TimesOnCudaWhenPresent) {
  KEVO_BRIDGE_OR_SKIP(b);
  if (!b->info().cuda) GTEST_SKIP() << "no CUDA device visible to torch";
  ASSERT_TRUE(b->load(kb_data("kb_softmax.py")));
  auto d = b->describe(false);
  ASSERT_TRUE(d) << d.error().message;
  auto x = filled("x", DType::F32, {16, 16384}, [](size_t i) { return std::sin(static_cast<double>(i)); });
  TimeOptions o;
  o.budget_s = 1;
  auto t = b->time({x}, {}, o);
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_TRUE(t->modes["eager"].ok) << t->modes["eager"].error;
  EXPECT_GT(t->modes["eager"].median_ms, 0);
  EXPECT_LE(t->modes["eager"].ci_low_ms, t->modes["eager"].median_ms);
}

// Tensors in another process's buffers (run_ipc, and time on DeviceTensors): here the fake
// runner's stand-in for CUDA IPC handles, files holding the bytes, used in place on the CPU.
struct Lent {
  fs::path dir;
  DeviceTensor put(const HostTensor& t) const {
    fs::path f = dir / (t.name + ".bin");
    std::ofstream(f, std::ios::binary).write(reinterpret_cast<const char*>(t.bytes.data()),
                                             static_cast<std::streamsize>(t.bytes.size()));
    return {t.name, t.dtype, t.shape, f.string()};
  }
  DeviceTensor poisoned(const std::string& name, DType dt, std::vector<int64_t> shape) const {
    HostTensor t = make_tensor(name, dt, shape);
    std::fill(t.bytes.begin(), t.bytes.end(), uint8_t{0xFF});
    return put(t);
  }
  static HostTensor read(const DeviceTensor& d) {
    HostTensor t = make_tensor(d.name, d.dtype, d.shape);
    std::ifstream(d.ipc, std::ios::binary)
        .read(reinterpret_cast<char*>(t.bytes.data()), static_cast<std::streamsize>(t.bytes.size()));
    return t;
  }
};

TEST(Bridge, RunIpcComputesIntoTheGivenBuffers) {
  KEVO_BRIDGE_OR_SKIP(b);
  testing::TempDir tmp;
  Lent lent{tmp.path};
  ASSERT_TRUE(b->load(data("dtypes.py"), {{"n", 9}}));
  std::vector<HostTensor> host = {
      filled("a", DType::BF16, {9}, [](size_t i) { return static_cast<double>(i) / 4; }),
      filled("b", DType::F16, {9}, [](size_t i) { return -static_cast<double>(i); }),
      filled("c", DType::I32, {9}, [](size_t) { return 1.0; }),
      filled("d", DType::I64, {9}, [](size_t) { return 2.0; }),
      filled("e", DType::U8, {9}, [](size_t i) { return static_cast<double>(i); }),
      filled("mask", DType::U8, {9}, [](size_t i) { return i % 2 ? 1.0 : 0.0; })};
  std::vector<DeviceTensor> ins;
  for (const auto& h : host) ins.push_back(lent.put(h));
  std::vector<DeviceTensor> outs = {lent.poisoned("out0", DType::BF16, {9}), lent.poisoned("out1", DType::F16, {9})};
  auto s = b->run_ipc(ins, outs, {}, "cpu");
  ASSERT_TRUE(s) << s.error().message;
  HostTensor o0 = Lent::read(outs[0]), o1 = Lent::read(outs[1]);
  for (size_t i = 0; i < 9; ++i) {
    double v = static_cast<double>(i) / 2 - static_cast<double>(i) + 3 + static_cast<double>(i);
    EXPECT_EQ(o0.at(i), v) << i;
    EXPECT_EQ(o1.at(i), i % 2 ? v : 0.0) << i;
  }
  for (size_t k = 0; k < host.size(); ++k) EXPECT_EQ(Lent::read(ins[k]).bytes, host[k].bytes) << host[k].name;
  // What does not fit the buffers is the reference's error, named.
  struct Case {
    std::vector<DeviceTensor> outs;
    const char* expect;
  };
  for (const Case& c :
       {Case{{outs[0]}, "the PyTorch reference returns 2 outputs, the task declares 1"},
        Case{{lent.poisoned("x0", DType::F32, {9}), outs[1]}, "output 0 is bf16, the task declares f32"},
        Case{{lent.poisoned("x1", DType::BF16, {8}), outs[1]}, "output 0 has 9 elements, the task declares 8"},
        Case{{DeviceTensor{"x2", DType::BF16, {9}, std::string(128, 'a')}, outs[1]},
             "output 0: a CUDA IPC handle needs device cuda, not 'cpu'"}}) {
    auto bad = b->run_ipc(ins, c.outs, {}, "cpu");
    ASSERT_FALSE(bad) << c.expect;
    EXPECT_NE(bad.error().message.find(c.expect), std::string::npos) << bad.error().message;
  }
  auto small = ins;
  small[0].shape = {12};
  auto bad = b->run_ipc(small, outs, {}, "cpu");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("holds 18 bytes, the tensor needs 24"), std::string::npos) << bad.error().message;
  if (!b->info().cuda) {
    auto r = b->run_ipc(ins, outs, {}, "cuda");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("no CUDA"), std::string::npos) << r.error().message;
  }
  EXPECT_TRUE(b->alive());
}

TEST(Bridge, TimeTakesTensorsInPlace) {
  KEVO_BRIDGE_OR_SKIP(b);
  testing::TempDir tmp;
  Lent lent{tmp.path};
  ASSERT_TRUE(b->load(kb_data("kb_gelu.py"), {{"n", 10}}));
  TimeOptions o;
  o.device = "cpu";
  o.modes = {"eager"};
  o.budget_s = 0.2;
  auto t = b->time({lent.put(filled("x", DType::F32, {10}, [](size_t) { return 1.0; }))}, {}, o);
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_TRUE(t->modes["eager"].ok) << t->modes["eager"].error;
  EXPECT_GT(t->modes["eager"].median_ms, 0);
}

TEST(Bridge, HungReferenceIsKilledAtTheDeadline) {
  std::string why;
  if (!testing::shared_bridge(&why)) GTEST_SKIP() << why;
  BridgeOptions o;
  o.request_timeout = std::chrono::milliseconds(2000);
  auto b = TorchBridge::start(o);
  ASSERT_TRUE(b) << b.error().message;
  ASSERT_TRUE(b->load(data("malformed/hangs.py")));
  auto t0 = std::chrono::steady_clock::now();
  auto d = b->describe();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code, ErrorCode::kTimeout) << d.error().message;
  EXPECT_LT(secs, 10.0);
  EXPECT_FALSE(b->alive());
  auto again = b->describe();
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().message.find("not running"), std::string::npos);
}

TEST(Bridge, DeathIsReportedNotHung) {
  std::string why;
  if (!testing::shared_bridge(&why)) GTEST_SKIP() << why;
  testing::TempDir tmp;
  std::ofstream(tmp.path / "dies.py") << "import os\nos._exit(3)\n";
  auto b = TorchBridge::start();
  ASSERT_TRUE(b) << b.error().message;
  auto s = b->load(tmp.path / "dies.py");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ErrorCode::kProcessDied) << s.error().message;
  EXPECT_NE(s.error().message.find("exit"), std::string::npos) << s.error().message;
  EXPECT_FALSE(b->alive());
}

TEST(Bridge, MissingTorchFailsAtStart) {
  BridgeOptions o;
  o.python = "/bin/false";
  auto b = TorchBridge::start(o);
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("PyTorch bridge"), std::string::npos) << b.error().message;
}

// Without torch the error says so by its code, which callers act on (skip PyTorch, not fail).
TEST(Bridge, NoTorchIsItsOwnKindOfError) {
  auto python3 = find_program("python3");
  if (!python3) GTEST_SKIP() << "python3 not installed";
  // A Python whose torch does not import: the bridge's start-up reply says so.
  testing::TempDir tmp;
  std::filesystem::create_directories(tmp.path / "shadow");
  std::ofstream(tmp.path / "shadow" / "torch.py") << "raise ImportError('no torch here (a test)')\n";
  const auto wrapper = tmp.path / "python-without-torch";
  std::ofstream(wrapper) << "#!/bin/sh\nPYTHONPATH=" << (tmp.path / "shadow").string() << ":$PYTHONPATH exec "
                         << *python3 << " \"$@\"\n";
  std::filesystem::permissions(wrapper, std::filesystem::perms::owner_all);
  BridgeOptions o;
  o.python = wrapper.string();
  auto b = TorchBridge::start(o);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code, ErrorCode::kNoTorch) << b.error().message;
  // No Python with torch at all (where this machine has none).
  if (auto py = find_torch_python(); !py) {
    EXPECT_EQ(py.error().code, ErrorCode::kNoTorch) << py.error().message;
    auto any = TorchBridge::start();
    ASSERT_FALSE(any);
    EXPECT_EQ(any.error().code, ErrorCode::kNoTorch) << any.error().message;
  }
}

}  // namespace
}  // namespace kevo::torch
