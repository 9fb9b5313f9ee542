// KernelBench modules whose state is not plain parameters: recurrent modules (LSTM, GRU) whose
// initial states are tensor attributes reassigned in forward, and a ResNet built in training mode
// whose batch norms never read their running statistics. Each imports with derived FLOPs, keeps
// only the tensors its outputs read as inputs, and runs as the task's oracle on the CPU.
#include <gtest/gtest.h>

#include <algorithm>

#include "interop/import.h"
#include "interop/task_compat.h"
#include "task/tensor.h"
#include "test_support.h"
#include "torch/oracle.h"
#include "util/fs.h"

namespace kevo::interop {
namespace {

using testing::data;
using testing::TempDir;

bool has_input(const Task& t, const std::string& name) {
  return std::any_of(t.inputs.begin(), t.inputs.end(), [&](const TensorSpec& s) { return s.name == name; });
}

struct Imported {
  ImportedTask info;
  Task task;
};

Result<Imported> import_one(torch::TorchBridge& b, const std::string& file, const fs::path& out) {
  ImportOptions o;
  o.out_dir = out;
  auto t = import_kernelbench(b, data(file), o);
  if (!t) return t.unexpected();
  auto task = load_task_with_torch(t->dir);
  if (!task) return task.unexpected();
  return Imported{*t, std::move(*task)};
}

class Recurrent : public ::testing::TestWithParam<const char*> {};

TEST_P(Recurrent, ImportsWithFlopsOverTheTimeSteps) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp;
  auto im = import_one(*b, std::string("recurrent/") + GetParam(), tmp.path);
  ASSERT_TRUE(im) << im.error().message;
  const Task& t = im->task;
  auto toml = read_file(t.dir / "task.toml");
  ASSERT_TRUE(toml);
  EXPECT_NE(toml->find("flops: derived"), std::string::npos) << *toml;
  // The loop over time steps is in the count: one step more costs one step's matmuls more.
  EXPECT_NE(t.flops_expr.find("steps"), std::string::npos) << t.flops_expr;
  EXPECT_TRUE(has_input(t, "h0"));
  const auto& d = t.main().dims;
  auto f = t.flops(t.main());
  ASSERT_TRUE(f) << f.error().message;
  // At least the first layer's input and hidden matmuls (3 gates for a GRU, 4 for an LSTM).
  const double gates = std::string(GetParam()).find("gru") != std::string::npos ? 3 : 4;
  EXPECT_GE(*f, 2.0 * gates * static_cast<double>(d.at("hidden_size") * (d.at("input_size") + d.at("hidden_size")) *
                                                  d.at("batch") * d.at("steps")));
}

INSTANTIATE_TEST_SUITE_P(Import, Recurrent,
                         ::testing::Values("kb_lstm_last.py", "kb_lstm_cell_state.py", "kb_gru_bidirectional.py",
                                           "kb_gru_hidden.py"));

// c0 is overwritten from h0 before it is read: not an input. The oracle gives the same outputs for
// the same inputs call after call (the forward's rebinding of its attributes does not leak into
// the next call) and other outputs when h0 changes.
TEST(ImportRecurrent, AnOverwrittenStateIsNoInputAndTheOracleIsRepeatable) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp;
  auto im = import_one(*b, "recurrent/kb_lstm_cell_state.py", tmp.path);
  ASSERT_TRUE(im) << im.error().message;
  const Task& t = im->task;
  EXPECT_FALSE(has_input(t, "c0"));
  EXPECT_TRUE(std::any_of(im->info.notes.begin(), im->info.notes.end(),
                          [](const std::string& n) { return n.find("1 attribute: c0") != std::string::npos; }));
  auto oracle = torch::TorchOracle::create(*b, t, t.dir / "reference.py");
  ASSERT_TRUE(oracle) << oracle.error().message;
  const Config& c = t.main();
  auto in = generate_inputs(t, c, 7, false);
  ASSERT_TRUE(in) << in.error().message;
  auto first = oracle->outputs(c, *in);
  auto again = oracle->outputs(c, *in);
  ASSERT_TRUE(first && again);
  EXPECT_EQ((*first)[0].bytes, (*again)[0].bytes);
  auto h0 = std::find_if(in->begin(), in->end(), [](const HostTensor& x) { return x.name == "h0"; });
  ASSERT_NE(h0, in->end());
  auto other = generate_inputs(t, c, 8, false);
  ASSERT_TRUE(other);
  *h0 = *std::find_if(other->begin(), other->end(), [](const HostTensor& x) { return x.name == "h0"; });
  auto moved = oracle->outputs(c, *in);
  ASSERT_TRUE(moved) << moved.error().message;
  EXPECT_NE((*first)[0].bytes, (*moved)[0].bytes);
}

// A forward that rebinds one attribute to another (self.shift = self.scale) starts every call
// from the tensors the module was built with, so equal inputs give equal outputs.
TEST(ImportRecurrent, AForwardThatRebindsItsStateStartsFromTheGivenValue) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp;
  auto im = import_one(*b, "kb_rebinds_state.py", tmp.path);
  ASSERT_TRUE(im) << im.error().message;
  EXPECT_TRUE(has_input(im->task, "scale"));
  EXPECT_TRUE(has_input(im->task, "shift"));
  auto oracle = torch::TorchOracle::create(*b, im->task, im->task.dir / "reference.py");
  ASSERT_TRUE(oracle) << oracle.error().message;
  const Config& c = im->task.main();
  auto in = generate_inputs(im->task, c, 3, false);
  ASSERT_TRUE(in) << in.error().message;
  auto first = oracle->outputs(c, *in);
  auto again = oracle->outputs(c, *in);
  ASSERT_TRUE(first && again);
  EXPECT_EQ((*first)[0].bytes, (*again)[0].bytes);
}

TEST(ImportRecurrent, ATrainingModeResNetHasNoRunningStatisticsAsInputs) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp;
  auto im = import_one(*b, "kb_resnet_train.py", tmp.path);
  ASSERT_TRUE(im) << im.error().message;
  for (const auto& in : im->task.inputs) {
    EXPECT_EQ(in.name.find("running_"), std::string::npos) << in.name;
    EXPECT_EQ(in.name.find("num_batches_tracked"), std::string::npos) << in.name;
  }
  EXPECT_TRUE(has_input(im->task, "blocks_2_bn2_weight"));
  // One note names them, shortly: 21 buffers, a few shown.
  auto note = std::find_if(im->info.notes.begin(), im->info.notes.end(),
                           [](const std::string& n) { return n.find("never read them") != std::string::npos; });
  ASSERT_NE(note, im->info.notes.end());
  EXPECT_NE(note->find("21 buffers: bn.running_mean"), std::string::npos) << *note;
  EXPECT_NE(note->find("and 15 more"), std::string::npos) << *note;
  EXPECT_LT(note->size(), 400u) << *note;
}

}  // namespace
}  // namespace kevo::interop
