// `kevo import`: KernelBench and EvoEngineer samples become tasks that the task parser accepts
// (through interop::load_task_with_torch until the loader knows oracle = "torch"); malformed
// inputs fail naming the file and the problem.
#include <gtest/gtest.h>

#include <algorithm>
#include <fmt/format.h>

#include <fstream>

#include "interop/config_search.h"
#include "interop/import.h"
#include "interop/shape_fit.h"
#include "task/expr.h"
#include "torch/oracle.h"
#include "task/tensor.h"
#include "interop/task_compat.h"
#include "task/task.h"
#include "test_support.h"
#include "util/fs.h"

namespace kevo::interop {
namespace {

using testing::data;
using testing::TempDir;

const TensorSpec* find(const std::vector<TensorSpec>& v, const std::string& name) {
  for (const auto& t : v)
    if (t.name == name) return &t;
  return nullptr;
}

// Imports and loads back; checks the rules every task must satisfy.
Result<Task> import_and_load(torch::TorchBridge* b, const std::string& file, const fs::path& out,
                             ImportedTask* info = nullptr) {
  ImportOptions o;
  o.out_dir = out;
  auto t = import_kernelbench(*b, data(file), o);
  if (!t) return t.unexpected();
  if (info) *info = *t;
  TorchTaskInfo ti;
  auto task = load_task_with_torch(t->dir, &ti);
  if (!task) return task;
  EXPECT_TRUE(ti.oracle_is_torch);
  EXPECT_TRUE(ti.reference && fs::exists(*ti.reference));
  EXPECT_FALSE(fs::exists(t->dir / "reference.cpp")) << "no pretend CPU reference";
  EXPECT_FALSE(fs::exists(t->dir / "baseline.cu")) << "the baseline comes from kevo translate";
  EXPECT_TRUE(fs::exists(t->dir / "torch.json"));
  int visible = 0, held = 0;
  for (const auto& c : task->configs) (c.held_out ? held : visible)++;
  EXPECT_GE(visible, 3);
  EXPECT_GE(held, 1);
  EXPECT_EQ(task->main().name, "main");
  return task;
}

TEST(Import, KernelBenchSoftmax) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp;
  ImportedTask info;
  auto task = import_and_load(b, "kb_softmax.py", tmp.path, &info);
  ASSERT_TRUE(task) << task.error().message;
  EXPECT_EQ(task->name, "kb_softmax");
  EXPECT_EQ(task->category, "softmax");
  EXPECT_EQ(task->dims, (std::vector<std::string>{"batch_size", "dim"}));
  ASSERT_EQ(task->inputs.size(), 1u);
  EXPECT_EQ(task->inputs[0].name, "x");
  EXPECT_EQ(task->inputs[0].shape, (std::vector<std::string>{"batch_size", "dim"}));
  EXPECT_EQ(task->inputs[0].init.dist, Dist::Normal);
  ASSERT_EQ(task->outputs.size(), 1u);
  EXPECT_EQ(task->outputs[0].shape, (std::vector<std::string>{"batch_size", "dim"}));
  EXPECT_EQ(task->main().dims.at("batch_size"), 16);
  EXPECT_EQ(task->main().dims.at("dim"), 16384);
  auto bytes = task->bytes(task->main());
  ASSERT_TRUE(bytes);
  EXPECT_EQ(*bytes, 8.0 * 16 * 16384);
  // The module source is in the description, and the copy is the reference.
  EXPECT_NE(task->description.find("torch.softmax(x, dim=1)"), std::string::npos);
  EXPECT_EQ(*read_file(task->dir / "reference.py"), *read_file(data("kb_softmax.py")));
  auto toml = read_file(task->dir / "task.toml");
  EXPECT_NE(toml->find("oracle = \"torch\""), std::string::npos);
  EXPECT_NE(toml->find("torch_reference = \"reference.py\""), std::string::npos);
  EXPECT_NE(toml->find("flops: derived"), std::string::npos) << *toml;
  EXPECT_EQ(*task->flops(task->main()), 5.0 * 16 * 16384);  // softmax: 5 per element
  bool ragged = false;
  for (const auto& c : task->configs) ragged |= c.dims.at("dim") % 32 != 0;
  EXPECT_TRUE(ragged);
  // A second import into the same place is refused without overwrite.
  ImportOptions o;
  o.out_dir = tmp.path;
  auto again = import_kernelbench(*b, data("kb_softmax.py"), o);
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().message.find("already exists"), std::string::npos);
  o.overwrite = true;
  o.flops = "5*batch_size*dim";
  auto forced = import_kernelbench(*b, data("kb_softmax.py"), o);
  ASSERT_TRUE(forced) << forced.error().message;
  auto t2 = load_task_with_torch(forced->dir);
  ASSERT_TRUE(t2) << t2.error().message;
  EXPECT_EQ(t2->flops_expr, "5*batch_size*dim");
}

TEST(Import, ParametersBecomeNamedWeights) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp;
  auto task = import_and_load(b, "kb_linear_gelu.py", tmp.path);
  ASSERT_TRUE(task) << task.error().message;
  EXPECT_EQ(task->category, "matmul");
  EXPECT_EQ(task->dims, (std::vector<std::string>{"batch_size", "in_features", "out_features"}));
  ASSERT_EQ(task->inputs.size(), 3u);
  const TensorSpec* w = find(task->inputs, "linear_weight");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->role, Role::Weight);
  EXPECT_EQ(w->shape, (std::vector<std::string>{"out_features", "in_features"}));
  EXPECT_FALSE(w->init.wide);
  EXPECT_EQ(find(task->inputs, "linear_bias")->shape, (std::vector<std::string>{"out_features"}));
  EXPECT_EQ(task->outputs[0].shape, (std::vector<std::string>{"batch_size", "out_features"}));
  auto side = read_file(task->dir / "torch.json");
  EXPECT_NE(side->find("\"path\": \"linear.weight\""), std::string::npos) << *side;
}

TEST(Import, NonLinearSizesBecomeDerivedDims) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp;
  ImportedTask info;
  auto task = import_and_load(b, "kb_conv_bn.py", tmp.path, &info);
  ASSERT_TRUE(task) << task.error().message;
  // conv output (H - k) // stride + 1 is not linear: derived dims measured per config.
  const auto& out = task->outputs[0].shape;
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0], "batch_size");
  EXPECT_EQ(out[1], "out_channels");
  EXPECT_EQ(out[2], "out_d2");
  EXPECT_EQ(out[3], "out_d3");
  EXPECT_EQ(task->main().dims.at("out_d2"), 31);
  // The stride changes only the output's shape, and a larger kernel grows the weight but shrinks
  // the output: both are constants of the task (hyperparameters), not dims.
  EXPECT_EQ(std::count(task->dims.begin(), task->dims.end(), "stride"), 0);
  EXPECT_EQ(std::count(task->dims.begin(), task->dims.end(), "kernel_size"), 0);
  for (const auto& c : task->configs) {
    // measured values agree with the conv formula at every config
    int64_t h = c.dims.at("height"), k = 3, s = 2;
    EXPECT_EQ(c.dims.at("out_d2"), (h - k) / s + 1) << c.name;
  }
  // FLOPs: the conv's multiply-adds (2 per MAC) and more, derived and equal to the counter.
  auto toml = read_file(task->dir / "task.toml");
  EXPECT_NE(toml->find("flops: derived"), std::string::npos) << *toml;
  auto f = task->flops(task->main());
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_GE(*f, 2.0 * 8 * 16 * 31 * 31 * 3 * 3 * 3);
  const TensorSpec* cw = find(task->inputs, "conv_weight");
  ASSERT_NE(cw, nullptr);
  EXPECT_EQ(cw->shape, (std::vector<std::string>{"out_channels", "in_channels", "3", "3"}));
  // A batch norm in training mode never reads its running statistics nor its batch counter: they
  // are no inputs, and a note names them.
  for (const char* unread : {"bn_running_mean", "bn_running_var", "bn_num_batches_tracked"})
    EXPECT_EQ(find(task->inputs, unread), nullptr) << unread;
  EXPECT_NE(find(task->inputs, "bn_weight"), nullptr);
  EXPECT_TRUE(std::any_of(info.notes.begin(), info.notes.end(), [](const std::string& n) {
    return n.find("never read them") != std::string::npos &&
           n.find("3 buffers: bn.running_mean, bn.running_var, bn.num_batches_tracked") != std::string::npos;
  }));
  bool noted = false;
  for (const auto& n : info.notes) noted |= n.find("derived dim 'out_d2'") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(Import, BuffersTheForwardReadsAreInputsAndTheOthersAreNot) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp;
  ImportedTask info;
  auto task = import_and_load(b, "kb_eval_bn.py", tmp.path, &info);
  ASSERT_TRUE(task) << task.error().message;
  // running_var (all ones) stays positive; the 0-dim i64 buffer is an int input of one element.
  const TensorSpec* rv = find(task->inputs, "bn_running_var");
  ASSERT_NE(rv, nullptr);
  EXPECT_EQ(rv->init.dist, Dist::Uniform);
  EXPECT_GT(rv->init.a, 0);
  EXPECT_NE(find(task->inputs, "bn_running_mean"), nullptr);
  const TensorSpec* rep = find(task->inputs, "repeats");
  ASSERT_NE(rep, nullptr);
  EXPECT_EQ(rep->dtype, DType::I64);
  EXPECT_EQ(rep->shape, (std::vector<std::string>{"1"}));
  EXPECT_EQ(find(task->inputs, "bn_num_batches_tracked"), nullptr);
}

TEST(Import, ImportedTaskRunsAsOracleOnGeneratedInputs) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp;
  auto task = import_and_load(b, "kb_conv_bn.py", tmp.path);
  ASSERT_TRUE(task) << task.error().message;
  auto oracle = torch::TorchOracle::create(*b, *task, task->dir / "reference.py");
  ASSERT_TRUE(oracle) << oracle.error().message;
  for (const auto& c : task->configs) {
    if (c.name != "small" && c.name != "minus_one") continue;
    auto inputs = generate_inputs(*task, c, 7, false);  // kevo's inputs, weights included
    ASSERT_TRUE(inputs) << inputs.error().message;
    auto outs = oracle->outputs(c, *inputs);
    ASSERT_TRUE(outs) << c.name << ": " << outs.error().message;
    ASSERT_EQ(outs->size(), 1u);
    EXPECT_EQ((*outs)[0].shape, *task->shape_of(task->outputs[0], c)) << c.name;
    double mn = 1e300;
    for (int64_t i = 0; i < (*outs)[0].numel(); ++i) mn = std::min(mn, (*outs)[0].at(static_cast<size_t>(i)));
    EXPECT_GE(mn, 0.0) << "relu output";
  }
}

TEST(Import, IntegerTargetsAndScalarOutput) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp;
  auto task = import_and_load(b, "kb_cross_entropy.py", tmp.path);
  ASSERT_TRUE(task) << task.error().message;
  const TensorSpec* t = find(task->inputs, "targets");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->dtype, DType::I64);
  EXPECT_EQ(t->init.dist, Dist::Int);
  EXPECT_EQ(t->init.low_expr, "0");
  EXPECT_EQ(t->init.high_expr, "num_classes");  // class indices follow the number of classes
  EXPECT_EQ(task->outputs[0].shape, (std::vector<std::string>{"1"}));  // 0-dim loss
  EXPECT_EQ(task->category, "loss");
}

TEST(Import, FunctionalReferenceWithParameters) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp;
  auto task = import_and_load(b, "fn_layernorm.py", tmp.path);
  ASSERT_TRUE(task) << task.error().message;
  EXPECT_EQ(task->category, "norm");
  ASSERT_NE(find(task->inputs, "weight"), nullptr);
  EXPECT_EQ(find(task->inputs, "weight")->shape, (std::vector<std::string>{"features"}));
  EXPECT_EQ(find(task->inputs, "weight")->role, Role::Weight);
}

TEST(Import, MalformedKernelBenchFilesFailNamingTheFile) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp;
  struct Case {
    const char* file;
    const char* expect;
  };
  for (const Case& c : {Case{"malformed/no_get_inputs.py", "no get_inputs()"},
                        Case{"malformed/syntax_error.py", "SyntaxError"},
                        Case{"malformed/raises.py", "kevo-test: get_inputs is broken on purpose"},
                        Case{"malformed/float64.py", "float64 has no kevo equivalent"},
                        Case{"malformed/returns_dict.py", "forward returned dict"}}) {
    ImportOptions o;
    o.out_dir = tmp.path;
    auto t = import_kernelbench(*b, data(c.file), o);
    ASSERT_FALSE(t) << c.file << " was imported";
    const std::string& m = t.error().message;
    EXPECT_NE(m.find(c.file), std::string::npos) << "the error must name the file: " << m;
    EXPECT_NE(m.find(c.expect), std::string::npos) << c.file << ": " << m;
    EXPECT_EQ(m.find(".importing."), std::string::npos) << "no staging paths in errors: " << m;
  }
  // Nothing half-written is left behind.
  for (const auto& e : fs::directory_iterator(tmp.path))
    EXPECT_EQ(e.path().filename().string().find(".importing"), std::string::npos) << e.path();
}

fs::path write_problem(const fs::path& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir / name) << text;
  return dir / name;
}

// Imports a problem written inline; the task loaded back.
Result<Task> import_inline(torch::TorchBridge* b, const fs::path& dir, const std::string& name, const std::string& text,
                           ImportedTask* info = nullptr) {
  ImportOptions o;
  o.out_dir = dir / "out";
  auto t = import_kernelbench(*b, write_problem(dir, name, text), o);
  if (!t) return t.unexpected();
  if (info) *info = *t;
  return load_task_with_torch(t->dir);
}

TEST(Import, SizesWrittenAsExpressionsAndTuples) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp;
  auto task = import_inline(b, tmp.path, "mm.py",
                            "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
                            "    def forward(self, A, B):\n        return torch.matmul(A, B)\n\n"
                            "M = 64 * 2\nK, N = 96, 40 + 40\n\n"
                            "def get_inputs():\n    return [torch.rand(M, K), torch.rand(K, N)]\n\n"
                            "def get_init_inputs():\n    return []\n");
  ASSERT_TRUE(task) << task.error().message;
  EXPECT_EQ(task->dims, (std::vector<std::string>{"M", "K", "N"}));
  EXPECT_EQ(task->main().dims.at("M"), 128);
  EXPECT_EQ(task->main().dims.at("N"), 80);
  EXPECT_EQ(task->outputs[0].shape, (std::vector<std::string>{"M", "N"}));
  for (const auto& c : task->configs) {  // 2*M*K*N, derived from the counted matmul
    auto f = task->flops(c);
    ASSERT_TRUE(f) << f.error().message;
    EXPECT_EQ(*f, 2.0 * c.dims.at("M") * c.dims.at("K") * c.dims.at("N")) << c.name;
  }
}

TEST(Import, ChainedAssignmentsAndTupleElements) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp;
  auto task = import_inline(b, tmp.path, "ew.py",
                            "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
                            "    def forward(self, x):\n        return torch.relu(x)\n\n"
                            "batch_size = 16\ninput_shape = (24,)\nheight = width = 40\n\n"
                            "def get_inputs():\n    return [torch.rand(batch_size, *input_shape, height, width)]\n\n"
                            "def get_init_inputs():\n    return []\n");
  ASSERT_TRUE(task) << task.error().message;
  EXPECT_EQ(task->dims, (std::vector<std::string>{"batch_size", "input_shape_0", "height", "width"}));
  EXPECT_EQ(task->inputs[0].shape, (std::vector<std::string>{"batch_size", "input_shape_0", "height", "width"}));
  EXPECT_EQ(task->main().dims.at("width"), 40);
}

TEST(Import, ConfigsRespectTheModulesConstraints) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp;
  auto task = import_inline(b, tmp.path, "gn.py",
                            "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
                            "    def __init__(self, channels, groups):\n        super().__init__()\n"
                            "        self.gn = nn.GroupNorm(groups, channels)\n\n"
                            "    def forward(self, x):\n        return self.gn(x)\n\n"
                            "batch_size = 8\nchannels = 64\ngroups = 16\nhw = 32\n\n"
                            "def get_inputs():\n    return [torch.randn(batch_size, channels, hw, hw)]\n\n"
                            "def get_init_inputs():\n    return [channels, groups]\n");
  ASSERT_TRUE(task) << task.error().message;
  int visible = 0, held = 0;
  bool unaligned = false;
  for (const auto& c : task->configs) {
    (c.held_out ? held : visible)++;
    EXPECT_EQ(c.dims.at("channels") % 16, 0) << c.name << ": GroupNorm needs channels divisible by its groups";
    for (const auto& [d, v] : c.dims) unaligned |= v % 32 != 0;
  }
  EXPECT_GE(visible, 3);
  EXPECT_GE(held, 1);
  EXPECT_TRUE(unaligned);
}

TEST(Import, TensorAttributeBecomesAWeight) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp;
  auto task = import_inline(b, tmp.path, "h0.py",
                            "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
                            "    def __init__(self, n):\n        super().__init__()\n        self.h0 = torch.randn(n)\n\n"
                            "    def forward(self, x):\n        return x + self.h0\n\n"
                            "batch_size = 4\nn = 40\n\n"
                            "def get_inputs():\n    return [torch.randn(batch_size, n)]\n\n"
                            "def get_init_inputs():\n    return [n]\n");
  ASSERT_TRUE(task) << task.error().message;
  const TensorSpec* h0 = find(task->inputs, "h0");
  ASSERT_NE(h0, nullptr);
  EXPECT_EQ(h0->role, Role::Weight);
  EXPECT_EQ(h0->shape, (std::vector<std::string>{"n"}));
  EXPECT_NE(read_file(task->dir / "torch.json")->find("\"kind\": \"attribute\""), std::string::npos);
  // The oracle sets it like any weight: the output is x + h0 for kevo's values.
  auto oracle = torch::TorchOracle::create(*b, *task, task->dir / "reference.py");
  ASSERT_TRUE(oracle) << oracle.error().message;
  const Config& c = task->configs[1];
  auto inputs = generate_inputs(*task, c, 3, false);
  ASSERT_TRUE(inputs) << inputs.error().message;
  auto outs = oracle->outputs(c, *inputs);
  ASSERT_TRUE(outs) << outs.error().message;
  const HostTensor *x = nullptr, *w = nullptr;
  for (const auto& t : *inputs) (t.name == "x" ? x : w) = &t;
  ASSERT_TRUE(x && w);
  int64_t n = c.dims.at("n");
  for (int64_t i = 0; i < (*outs)[0].numel(); ++i)
    EXPECT_FLOAT_EQ((*outs)[0].at(static_cast<size_t>(i)), x->at(static_cast<size_t>(i)) + w->at(static_cast<size_t>(i % n)));
}

TEST(Import, MissingPackageOrNewerTorchIsOneLineReason) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp;
  const std::string body = "\nclass Model(nn.Module):\n    def forward(self, x):\n        return {}\n\n"
                           "n = 40\n\ndef get_inputs():\n    return [torch.randn(n, n)]\n\n"
                           "def get_init_inputs():\n    return []\n";
  auto pkg = import_inline(b, tmp.path, "pkg.py",
                           "import torch\nimport torch.nn as nn\nimport kevo_no_such_package\n" +
                               fmt::format(fmt::runtime(body), "x"));
  ASSERT_FALSE(pkg);
  std::string m = pkg.error().message;
  EXPECT_NE(m.find("pkg.py: needs the Python package 'kevo_no_such_package'"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << "one line: " << m;
  auto newer = import_inline(b, tmp.path, "newer.py",
                             "import torch\nimport torch.nn as nn\n" +
                                 fmt::format(fmt::runtime(body), "torch.nn.functional.kevo_future_op(x)"));
  ASSERT_FALSE(newer);
  m = newer.error().message;
  EXPECT_NE(m.find("needs a newer torch: torch.nn.functional.kevo_future_op does not exist in torch"),
            std::string::npos) << m;
}

TEST(Import, FoldersExpandToTheirProblemsInNumberOrder) {
  TempDir tmp;
  for (const char* f : {"10_b.py", "2_a.py", "1_c.py", "notes.txt"}) std::ofstream(tmp.path / f) << "\n";
  auto files = kernelbench_files({tmp.path.string()});
  ASSERT_TRUE(files) << files.error().message;
  ASSERT_EQ(files->size(), 3u);
  EXPECT_EQ((*files)[0].filename(), "1_c.py");
  EXPECT_EQ((*files)[1].filename(), "2_a.py");
  EXPECT_EQ((*files)[2].filename(), "10_b.py");
  auto one = kernelbench_files({(tmp.path / "notes.txt").string()});
  ASSERT_TRUE(one);
  EXPECT_EQ(one->size(), 1u);
  auto none = kernelbench_files({(tmp.path / "missing").string()});
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("no such file or folder"), std::string::npos);
}

TEST(ShapeFit, StridedOutputIsFloorLinear) {
  // (h - 3) / 2 + 1 for a 3-wide window with stride 2: fitted from h=64 and a probe h+7.
  Dims base{{"h", 64}};
  AxisSamples s;
  s.base = 31;
  s.probes["h"] = {7, 35};
  Dims c1{{"h", 50}}, c2{{"h", 33}};
  auto lin = fit_axis(s, base, {{&c1, 24}, {&c2, 16}}, 1);
  EXPECT_FALSE(lin) << "not linear";
  auto a = fit_axis(s, base, {{&c1, 24}, {&c2, 16}}, 8);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->divisor, 2);
  for (int64_t h : {20, 33, 64, 101}) EXPECT_EQ(eval_axis(*a, {{"h", h}}), (h - 3) / 2 + 1) << h;
  std::string e = axis_expr(*a, {"h"});
  EXPECT_EQ(e.rfind("ceil_div(", 0), 0u) << e;
  EXPECT_EQ(eval_int_expr(e, {{"h", 101}}).value(), 50) << e;
}

TEST(ShapeFit, DivisorsAscending) {
  EXPECT_EQ(divisors_of(12), (std::vector<int64_t>{2, 3, 4, 6, 12}));
  EXPECT_EQ(divisors_of(7), (std::vector<int64_t>{7}));
  EXPECT_TRUE(divisors_of(1).empty());
}

TEST(Import, HardCodedSizesAreRejected) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp;
  std::ofstream(tmp.path / "fixed.py") << "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
                                          "    def forward(self, x):\n        return x + 1\n\n"
                                          "def get_inputs():\n    return [torch.randn(16, 100)]\n\n"
                                          "def get_init_inputs():\n    return []\n";
  ImportOptions o;
  o.out_dir = tmp.path / "out";
  auto t = import_kernelbench(*b, tmp.path / "fixed.py", o);
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("no size to vary"), std::string::npos) << t.error().message;
}

TEST(Import, EvoEngineerRecords) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp;
  auto recs = parse_evoengineer(data("ee_records.json"));
  ASSERT_TRUE(recs) << recs.error().message;
  ASSERT_EQ(recs->size(), 2u);
  EXPECT_EQ((*recs)[0].name, "relu_scale");
  for (const auto& r : *recs) {
    ImportOptions o;
    o.out_dir = tmp.path;
    auto t = import_evoengineer_record(*b, r, data("ee_records.json"), o);
    ASSERT_TRUE(t) << t.error().message;
    TorchTaskInfo ti;
    auto task = load_task_with_torch(t->dir, &ti);
    ASSERT_TRUE(task) << task.error().message;
    EXPECT_TRUE(ti.oracle_is_torch);
    ASSERT_TRUE(ti.baseline);
    EXPECT_EQ(*read_file(*ti.baseline), r.cuda);
    EXPECT_EQ(*read_file(t->dir / "reference.py"), r.functional);
    EXPECT_EQ(*read_file(t->dir / "original.py"), r.original);
  }
  auto lin = load_task_with_torch(tmp.path / "linear_bias");
  ASSERT_TRUE(lin) << lin.error().message;
  EXPECT_EQ(find(lin->inputs, "weight")->shape, (std::vector<std::string>{"out_features", "in_features"}));
  EXPECT_EQ(find(lin->inputs, "weight")->role, Role::Weight);
}

TEST(Import, MalformedEvoEngineerFilesFailClearly) {
  auto bad = parse_evoengineer(data("malformed/ee_bad_json.json"));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("ee_bad_json.json: not valid JSON"), std::string::npos) << bad.error().message;
  EXPECT_EQ(bad.error().code, ErrorCode::kParse);
  auto missing = parse_evoengineer(data("malformed/ee_missing_key.json"));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("record 'relu': missing the functional module (func_py_code)"),
            std::string::npos)
      << missing.error().message;
  EXPECT_EQ(missing.error().code, ErrorCode::kParse);
  auto none = parse_evoengineer(data("does_not_exist.json"));
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::kNotFound);

  KEVO_BRIDGE_OR_SKIP(b);
  auto recs = parse_evoengineer(data("malformed/ee_functional_raises.json"));
  ASSERT_TRUE(recs) << recs.error().message;
  TempDir tmp;
  ImportOptions o;
  o.out_dir = tmp.path;
  auto t = import_evoengineer_record(*b, (*recs)[0], data("malformed/ee_functional_raises.json"), o);
  ASSERT_FALSE(t);
  const std::string& m = t.error().message;
  EXPECT_NE(m.find("ee_functional_raises.json (record 'broken')"), std::string::npos) << m;
  EXPECT_NE(m.find("NameError: name 'undefined_name' is not defined"), std::string::npos) << m;
  EXPECT_FALSE(fs::exists(tmp.path / "broken"));
}

TEST(Import, TaskNames) {
  EXPECT_EQ(task_name_from("19_ReLU"), "19_relu");
  EXPECT_EQ(task_name_from("1_Square_matrix_multiplication_"), "1_square_matrix_multiplication");
  EXPECT_EQ(task_name_from("a--b..c"), "a_b_c");
  EXPECT_EQ(task_name_from("___"), "imported");
}

TEST(TaskCompat, StripsOnlyTorchKeys) {
  std::string t = "name = \"x\"\noracle = \"torch\"\ntorch_reference = \"reference.py\"\n"
                  "torch_baseline = \"b.cu\"\n[[inputs]]\nname = \"oracle\"\n";
  std::string s = strip_torch_keys(t);
  EXPECT_EQ(s, "name = \"x\"\noracle = \"reference\"\n[[inputs]]\nname = \"oracle\"\n");
  auto info = torch_info_from_toml(t, "/d");
  ASSERT_TRUE(info);
  EXPECT_TRUE(info->oracle_is_torch);
  EXPECT_EQ(*info->reference, fs::path("/d/reference.py"));
  EXPECT_EQ(*info->baseline, fs::path("/d/b.cu"));
  auto bad = torch_info_from_toml("oracle = \"torch\"\n", "/d");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("needs torch_reference"), std::string::npos);
}

}  // namespace
}  // namespace kevo::interop
