// An imported task's tolerance means something: outputs far below 1 (a softmax's probabilities)
// get an atol scaled to them, so the lint finds no constant that passes; the import's vet drops
// the configs it finds degenerate and says so, and a degenerate main config refuses the task.
#include <gtest/gtest.h>

#include "interop/import.h"
#include "interop/import_toml.h"
#include "interop/task_compat.h"
#include "lint/torch_lint.h"
#include "test_support.h"
#include "util/fs.h"

namespace kevo::interop {
namespace {

using testing::data;
using testing::TempDir;

bool has(const std::vector<std::string>& notes, const std::string& what) {
  for (const auto& n : notes)
    if (n.find(what) != std::string::npos) return true;
  return false;
}

const LintFinding* finding(const LintReport& r, const std::string& check) {
  for (const auto& f : r.findings)
    if (f.check == check) return &f;
  return nullptr;
}

TEST(ImportTolerance, SoftmaxGetsABandScaledToItsOutputs) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp;
  ImportOptions o;
  o.out_dir = tmp.path;
  auto t = import_kernelbench(*b, data("kb_softmax.py"), o);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_TRUE(has(t->notes, "tolerance: f32 atol")) << fmt::format("{}", fmt::join(t->notes, "\n"));
  auto task = load_task_with_torch(t->dir);
  ASSERT_TRUE(task) << task.error().message;
  // Rows of up to 16384 probabilities (~6e-5 each, spread about as much): a band 1% of that.
  EXPECT_LT(task->tolerance_for(DType::F32).atol, 1e-6);
  EXPECT_GT(task->tolerance_for(DType::F32).atol, 1e-8);
  EXPECT_DOUBLE_EQ(task->tolerance_for(DType::F32).rtol, 1e-4);
  LintOptions lo;
  lo.configs = {task->main().name};
  auto rep = lint_torch_task(*b, *task, lo);
  ASSERT_TRUE(rep) << rep.error().message;
  ASSERT_NE(finding(*rep, "tiny_band"), nullptr);
  EXPECT_EQ(finding(*rep, "tiny_band")->severity, Severity::Pass) << format_report(*rep);
  EXPECT_TRUE(rep->ok()) << format_report(*rep);
}

TEST(ImportTolerance, OutputsOfOrderOneKeepTheDefault) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp;
  ImportOptions o;
  o.out_dir = tmp.path;
  auto t = import_kernelbench(*b, data("kb_linear_gelu.py"), o);
  ASSERT_TRUE(t) << t.error().message;
  auto toml = read_file(t->dir / "task.toml");
  ASSERT_TRUE(toml);
  EXPECT_EQ(toml->find("[tolerance]"), std::string::npos) << *toml;
}

TEST(ImportTolerance, TheVetDropsADegenerateConfigAndRefusesADegenerateMain) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp;
  ImportOptions o;
  o.out_dir = tmp.path;
  std::string victim;
  o.vet = [&](torch::TorchBridge&, const Task& t) -> Result<VetResult> {
    for (const auto& c : t.configs)
      if (c.held_out) victim = c.name;
    return VetResult{{{victim, "tiny_band a constant passes"}}, {"input 'x' changes the outputs on no config"}};
  };
  auto t = import_kernelbench(*b, data("kb_softmax.py"), o);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_TRUE(has(t->notes, "config '" + victim + "' dropped: tiny_band")) << fmt::format("{}", fmt::join(t->notes, "\n"));
  EXPECT_TRUE(has(t->notes, "lint: input 'x' changes")) << fmt::format("{}", fmt::join(t->notes, "\n"));
  auto task = load_task_with_torch(t->dir);
  ASSERT_TRUE(task) << task.error().message;
  for (const auto& c : task->configs) EXPECT_NE(c.name, victim);

  o.overwrite = true;
  o.vet = [](torch::TorchBridge&, const Task& t) -> Result<VetResult> {
    return VetResult{{{t.main().name, "tiny_band a constant passes"}}, {}};
  };
  auto refused = import_kernelbench(*b, data("kb_softmax.py"), o);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("refused: the main config is degenerate"), std::string::npos)
      << refused.error().message;
  EXPECT_TRUE(fs::exists(tmp.path / "kb_softmax")) << "a refused re-import removed the task it would replace";
}

TEST(ImportTolerance, TheLintVetDropsSomeConfigsAndRefusesATaskDegenerateOnAll) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp;
  ImportOptions o;
  o.out_dir = tmp.path;
  auto t = import_kernelbench(*b, data("kb_softmax.py"), o);
  ASSERT_TRUE(t) << t.error().message;
  auto task = load_task_with_torch(t->dir);
  ASSERT_TRUE(task) << task.error().message;
  // As derived: nothing to drop on the two smallest configs.
  std::vector<std::string> two;
  for (const auto& c : task->configs)
    if (c.name == "small" || c.name == "held_unit") two.push_back(c.name);
  ASSERT_EQ(two.size(), 2u);
  auto clean = vet_configs(*b, *task, two, LintOptions{});
  ASSERT_TRUE(clean) << clean.error().message;
  EXPECT_TRUE(clean->drop.empty()) << clean->drop.front().why;
  // Looser than the outputs: a constant passes; on one config of two it is dropped, on both the
  // task is refused.
  task->tolerance[DType::F32] = {1.0, 1e-4};
  auto one = vet_configs(*b, *task, {two.front()}, LintOptions{});
  ASSERT_TRUE(one) << one.error().message;
  ASSERT_EQ(one->drop.size(), 1u);
  EXPECT_NE(one->drop.front().why.find("tiny_band"), std::string::npos) << one->drop.front().why;
  // Where a constant passes, every input looks ignored: that is no finding about the inputs.
  EXPECT_TRUE(one->notes.empty()) << one->notes.front();
  auto both = vet_configs(*b, *task, two, LintOptions{});
  ASSERT_FALSE(both);
  EXPECT_NE(both.error().message.find("degenerate on every config checked"), std::string::npos)
      << both.error().message;
}

// An input the outputs ignore on every config is the op's own: the configs stay, and a note says a
// kernel may ignore it too.
TEST(ImportTolerance, AnInputIgnoredEverywhereIsNotedNotDropped) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp;
  ImportOptions o;
  o.out_dir = tmp.path;
  o.vet = [](torch::TorchBridge& br, const Task& t) -> Result<VetResult> {
    std::vector<std::string> names;
    for (const auto& c : t.configs) names.push_back(c.name);
    auto v = vet_configs(br, t, names, LintOptions{});
    if (!v) return v.unexpected();
    VetResult r;
    for (const auto& d : v->drop) r.dropped.push_back({d.config, d.why});
    r.notes = v->notes;
    return r;
  };
  auto t = import_kernelbench(*b, data("kb_ignores_input.py"), o);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_TRUE(has(t->notes, "lint: input 'y' changes the outputs on no config checked"))
      << fmt::format("{}", fmt::join(t->notes, "\n"));
  EXPECT_FALSE(has(t->notes, "dropped")) << fmt::format("{}", fmt::join(t->notes, "\n"));
}

TEST(ImportToml, DropConfigBlocks) {
  const std::string toml = "name = \"t\"\n\n[[configs]]\nname = \"main\"\ndims = { N = 8 }\nmain = true\n\n"
                           "[[configs]]\nname = \"small\"\ndims = { N = 3 }\n\n[[configs]]\nname = \"held\"\n"
                           "dims = { N = 5 }\nheld_out = true\n\n# Derived\n[tolerance]\nf32 = { atol = 1e-9 }\n";
  auto out = drop_config_blocks(toml, {"small", "held"});
  EXPECT_EQ(out, "name = \"t\"\n\n[[configs]]\nname = \"main\"\ndims = { N = 8 }\nmain = true\n\n# Derived\n"
                 "[tolerance]\nf32 = { atol = 1e-9 }\n");
}

}  // namespace
}  // namespace kevo::interop
