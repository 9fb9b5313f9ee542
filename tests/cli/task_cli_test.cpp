// `kevo task lint` as a user runs it on imported (PyTorch-oracle) tasks: the lints run over the
// PyTorch reference's outputs, so a task whose outputs are all zero is degenerate (exit 1) and a
// sound one is ok (exit 0).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>

#include "support/temp_dir.h"
#include "torch/bridge.h"
#include "util/subprocess.h"

namespace fs = std::filesystem;
using namespace kevo;

namespace {
const fs::path kSrc = KEVO_SOURCE_DIR;
const fs::path kKevo = fs::path(KEVO_BINARY_DIR) / "bin" / "kevo";

RunResult kevo_run(std::vector<std::string> args) {
  args.insert(args.begin(), kKevo.string());
  auto r = run_process({.argv = args, .timeout = std::chrono::seconds(300)});
  EXPECT_TRUE(r);
  return r ? *r : RunResult{};
}

std::string severity_of(const nlohmann::json& report, const std::string& check) {
  for (const auto& f : report["findings"])
    if (f["check"] == check) return f["severity"];
  return "absent";
}
}  // namespace

TEST(TaskCli, LintOfImportedTasksUsesTheirPyTorchReference) {
  if (auto py = torch::find_torch_python(); !py)
    GTEST_SKIP() << "needs python3 with torch and numpy: lint of torch tasks skipped (" << py.error().message << ")";
  kevo::test::TempDir dir("kevo-task-lint");
  // The import lints a task itself and refuses one degenerate on every config; --no-lint writes it.
  auto refused = kevo_run({"import", "kernelbench", (kSrc / "tests/interop/data/kb_dead_relu.py").string(), "--out",
                           dir.path.string()});
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("refused: lint: degenerate on every config checked"), std::string::npos) << refused.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path / "kb_dead_relu"));
  auto imp = kevo_run({"import", "kernelbench", (kSrc / "tests/interop/data/kb_dead_relu.py").string(),
                       (kSrc / "tests/interop/data/kb_gelu.py").string(), "--out", dir.path.string(), "--no-lint"});
  ASSERT_EQ(imp.exit_code, 0) << imp.out << imp.err;

  auto dead = kevo_run({"task", "lint", (dir.path / "kb_dead_relu").string(), "--json"});
  EXPECT_EQ(dead.exit_code, 1) << dead.out << dead.err;  // degenerate
  auto j = nlohmann::json::parse(dead.out, nullptr, false);
  ASSERT_TRUE(j.is_array() && j.size() == 1) << dead.out;
  EXPECT_FALSE(j[0]["ok"].get<bool>());
  EXPECT_EQ(severity_of(j[0], "tiny_band"), "FAIL") << dead.out;  // zeros pass on every config

  auto sound = kevo_run({"task", "lint", (dir.path / "kb_gelu").string(), "--json"});
  EXPECT_EQ(sound.exit_code, 0) << sound.out << sound.err;
  auto k = nlohmann::json::parse(sound.out, nullptr, false);
  ASSERT_TRUE(k.is_array() && k.size() == 1) << sound.out;
  EXPECT_TRUE(k[0]["ok"].get<bool>()) << sound.out;
  EXPECT_EQ(severity_of(k[0], "tiny_band"), "PASS") << sound.out;
}
