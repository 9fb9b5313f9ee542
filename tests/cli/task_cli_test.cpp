// `kevo task lint` as a user runs it on imported (PyTorch-oracle) tasks: the lints run over the
// PyTorch reference's outputs, so a task whose outputs are all zero is degenerate (exit 1) and a
// sound one is ok (exit 0).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <thread>

#include "support/temp_dir.h"
#include "torch/bridge.h"
#include "util/fs.h"
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

// Ctrl-C in the middle of an import stops it between files: the tasks written so far stay, the
// last line says how far it got, and the exit code is 130.
TEST(TaskCli, AnInterruptedImportSaysHowFarItGot) {
  if (auto py = torch::find_torch_python(); !py) GTEST_SKIP() << "needs python3 with torch: " << py.error().message;
  kevo::test::TempDir dir("kevo-import-int");
  const fs::path in = dir.path / "in", out = dir.path / "out", log = dir.path / "log.txt";
  fs::create_directories(in);
  for (int i = 0; i < 40; ++i)
    fs::copy_file(kSrc / "tests/interop/data/kb_gelu.py", in / ("kb_gelu_" + std::to_string(100 + i) + ".py"));
  auto c = spawn_process({.argv = {"/bin/sh", "-c",
                                   "exec '" + kKevo.string() + "' import kernelbench '" + in.string() + "' --out '" +
                                       out.string() + "' >'" + log.string() + "' 2>&1"},
                          .null_stdio = true,
                          .die_with_parent = true});
  ASSERT_TRUE(c) << c.error().message;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  auto text = [&] { auto t = read_file(log); return t ? *t : std::string(); };
  while (text().find("[2/40]") == std::string::npos && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_NE(text().find("[2/40]"), std::string::npos) << text();
  kill(c->pid, SIGINT);
  auto st = wait_for_exit(*c, std::chrono::seconds(120));
  ASSERT_TRUE(st) << text();
  ASSERT_TRUE(WIFEXITED(*st)) << text();
  EXPECT_EQ(WEXITSTATUS(*st), 130) << text();
  const std::string t = text();
  EXPECT_NE(t.find("interrupted: "), std::string::npos) << t;
  EXPECT_NE(t.find(" of 40 imported"), std::string::npos) << t;
  EXPECT_NE(t.find("the tasks written are kept"), std::string::npos) << t;
  EXPECT_TRUE(fs::exists(out / "kb_gelu_100" / "task.toml")) << t;
  EXPECT_FALSE(fs::exists(out / "kb_gelu_139")) << "the import went on to the last file\n" << t;
}
