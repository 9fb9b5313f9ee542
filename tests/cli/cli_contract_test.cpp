// The command line's contract: --version, argument errors with each command's
// documented exit code (never CLI11's 100-series), unknown commands named with the closest one,
// `--events jsonl` without a file, `kevo doctor`'s table, and examples at the end of every --help.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <sstream>

#include "util/subprocess.h"

namespace fs = std::filesystem;
using namespace kevo;

namespace {
const fs::path kKevo = fs::path(KEVO_BINARY_DIR) / "bin" / "kevo";

RunResult kevo_run(std::vector<std::string> args, std::optional<std::string> cwd = std::nullopt) {
  args.insert(args.begin(), kKevo.string());
  auto r = run_process({.argv = args, .cwd = cwd, .timeout = std::chrono::seconds(120)});
  EXPECT_TRUE(r);
  return r ? *r : RunResult{};
}

// A temp folder removed with the test.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::path(testing::TempDir()) / ("kevo-cli-" + std::to_string(::getpid()));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

// The commands listed under "SUBCOMMANDS:" in a --help text.
std::vector<std::string> subcommands_in(const std::string& help) {
  std::vector<std::string> out;
  std::istringstream in(help);
  std::string line;
  bool in_list = false;
  while (std::getline(in, line)) {
    if (line.rfind("Subcommands:", 0) == 0 || line.rfind("SUBCOMMANDS:", 0) == 0) {
      in_list = true;
      continue;
    }
    if (in_list) {
      std::smatch m;
      if (std::regex_search(line, m, std::regex("^  ([a-z][a-z-]*)\\b"))) out.push_back(m[1]);
      else if (line.empty() || line[0] != ' ') in_list = false;
    }
  }
  return out;
}
}  // namespace

TEST(CliContract, VersionNamesTheVersionAndCommit) {
  auto r = kevo_run({"--version"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("^kevo [0-9]+\\.[0-9]+\\.[0-9]+ \\(git ([0-9a-f]{7,}|unknown)\\)")))
      << r.out;
}

TEST(CliContract, ArgumentErrorsExitWithTheDocumentedCode) {
  struct Case {
    std::vector<std::string> args;
    int code;
  };
  const Case cases[] = {
      {{}, 2},                                          // no command
      {{"--bogus"}, 2},                                 // unknown root option
      {{"eval"}, 21},                                   // TASK missing
      {{"eval", "gelu", "x.cu", "--seeds", "0"}, 21},   // out of range
      {{"eval", "gelu", "x.cu", "--no-such-flag"}, 21}, // unknown option
      {{"eval", "gelu", "x.cu", "--oracle-check"}, 21}, // the oracle alone: no candidate
      {{"eval", "gelu", "--baseline", "--oracle-check"}, 21},
      {{"task", "lint", "--seeds", "many"}, 21},        // not a number
      {{"export-torch", "gelu"}, 21},                   // KERNEL and DIR missing
      // a pair whose second task is not the first's backward; a kernel that is not there; '-'
      // (PyTorch's forward) without a backward task: checked before anything is written
      {{"export-torch", "linear", "-", "/nonexistent/pair", "--backward", "gelu"}, 21},
      {{"export-torch", "linear", "/nonexistent/k.cu", "/nonexistent/pair", "--backward", "linear_backward"}, 21},
      {{"export-torch", "linear", "-", "/nonexistent/pair"}, 21},
      {{"evolve", "gelu", "--budget-candidates", "x"}, 2},
      {{"llm", "ping"}, 2},                             // MODEL missing
      {{"llm", "ping", "nosuchprovider:m"}, 2},         // a spec no provider serves
      // a provider whose key variable is not set: the configuration, not the call
      {{"llm", "ping", "keyless:m", "--set", "providers.keyless.base_url=http://127.0.0.1:9/v1", "--set",
        "providers.keyless.api_key_env=KEVO_TEST_UNSET_KEY", "--set", "providers.keyless.key_required=true"}, 2},
      {{"bench", "table"}, 2},                          // SOURCES missing
      {{"show"}, 2},                                    // RUN missing
      {{"report"}, 2},
  };
  for (const auto& c : cases) {
    auto r = kevo_run(c.args);
    std::string cmd;
    for (const auto& a : c.args) cmd += " " + a;
    EXPECT_EQ(r.exit_code, c.code) << "kevo" << cmd << "\n" << r.out << r.err;
    EXPECT_FALSE(r.err.empty()) << "kevo" << cmd << " said nothing on stderr";
  }
}

// An export replaces an earlier one only with --force (as import does), and names its folder once:
// "ext/" is shown as "ext", never "ext//kernel.cu".
TEST(CliContract, ExportTorchReplacesNothingUnasked) {
  TempDir dir;
  const std::string out = (dir.path / "ext").string() + "/";
  const std::string kernel = (fs::path(KEVO_SOURCE_DIR) / "tasks" / "gelu" / "baseline.cu").string();
  auto first = kevo_run({"export-torch", "gelu", kernel, out});
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_EQ(first.out.find("//"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find((dir.path / "ext").string() + "/{kernel.cu"), std::string::npos) << first.out;
  auto again = kevo_run({"export-torch", "gelu", kernel, out});
  EXPECT_EQ(again.exit_code, 21) << again.out << again.err;
  EXPECT_NE(again.err.find("ext/kernel.cu exists: --force replaces"), std::string::npos) << again.err;
  auto forced = kevo_run({"export-torch", "gelu", kernel, out, "--force"});
  EXPECT_EQ(forced.exit_code, 0) << forced.out << forced.err;
}

TEST(CliContract, MissingCandidateIsABadArgumentNotAnInfrastructureError) {
  auto r = kevo_run({"eval", "gelu", "/nonexistent/cand.cu", "--compile-only"});
  EXPECT_EQ(r.exit_code, 21) << r.out << r.err;
  EXPECT_NE(r.err.find("/nonexistent/cand.cu"), std::string::npos) << r.err;
  TempDir dir;  // a directory is not a candidate either
  auto d = kevo_run({"eval", "gelu", dir.path.string(), "--compile-only"});
  EXPECT_EQ(d.exit_code, 21) << d.out << d.err;
}

TEST(CliContract, UnknownCommandNamesTheClosest) {
  auto r = kevo_run({"evl", "gelu"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("unknown command 'evl'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did you mean 'eval'?"), std::string::npos) << r.err;
  auto f = kevo_run({"-v", "frobnicate"});
  EXPECT_EQ(f.exit_code, 2) << f.err;
  EXPECT_NE(f.err.find("did you mean"), std::string::npos) << f.err;
  EXPECT_EQ(f.err.find("A subcommand is required"), std::string::npos) << f.err;
  auto t = kevo_run({"task", "lnt", "gelu"});  // ("lnit" is as far from list as from lint)
  EXPECT_EQ(t.exit_code, 21) << t.err;
  EXPECT_NE(t.err.find("kevo task: unknown command 'lnt' (did you mean 'lint'?)"), std::string::npos) << t.err;
  // Asking for the help of a command that does not exist is the same usage error, not the root's help.
  auto h = kevo_run({"frobnicate", "--help"});
  EXPECT_EQ(h.exit_code, 2) << h.out << h.err;
  EXPECT_NE(h.err.find("kevo: unknown command 'frobnicate'"), std::string::npos) << h.err;
  EXPECT_EQ(h.out.find("Usage"), std::string::npos) << h.out;
  auto th = kevo_run({"task", "lnt", "--help"});
  EXPECT_EQ(th.exit_code, 21) << th.err;
  EXPECT_NE(th.err.find("did you mean 'lint'?"), std::string::npos) << th.err;
  auto ok = kevo_run({"eval", "--help"});  // a real command's help is still a success
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  // A task name with a typo: the bundled task it was meant as, said once.
  auto tn = kevo_run({"task", "lint", "softmx"});
  EXPECT_EQ(tn.exit_code, 21) << tn.err;
  EXPECT_NE(tn.err.find("kevo task lint: softmx: no such task directory"), std::string::npos) << tn.err;
  EXPECT_NE(tn.err.find("(did you mean 'softmax'?)"), std::string::npos) << tn.err;
  EXPECT_EQ(tn.err.find("softmx: softmx:"), std::string::npos) << tn.err;
  auto far = kevo_run({"eval", "no_task_near_this_name", "c.cu", "--compile-only"});
  EXPECT_EQ(far.exit_code, 21) << far.err;
  EXPECT_EQ(far.err.find("did you mean"), std::string::npos) << far.err;
  // An option's value is not taken for a command.
  auto b = kevo_run({"bench", "--suite", "quick", "--no-such-flag"});
  EXPECT_EQ(b.exit_code, 2) << b.err;
  EXPECT_EQ(b.err.find("unknown command"), std::string::npos) << b.err;
}

// An option the command does not have is named (CLI11 alone said "A subcommand is required" for
// `kevo --bogus` and "task is required" for `kevo eval --bogus`), with the closest one.
TEST(CliContract, UnknownOptionIsNamed) {
  auto top = kevo_run({"--bogus"});
  EXPECT_EQ(top.exit_code, 2) << top.err;
  EXPECT_NE(top.err.find("kevo: unknown option '--bogus'"), std::string::npos) << top.err;
  auto e = kevo_run({"eval", "--bogus"});
  EXPECT_EQ(e.exit_code, 21) << e.err;
  EXPECT_NE(e.err.find("kevo eval: unknown option '--bogus'"), std::string::npos) << e.err;
  auto near = kevo_run({"eval", "gelu", "c.cu", "--time-budgt", "1"});
  EXPECT_EQ(near.exit_code, 21) << near.err;
  EXPECT_NE(near.err.find("unknown option '--time-budgt' (did you mean '--time-budget'?)"), std::string::npos)
      << near.err;
  auto val = kevo_run({"bench", "--suite=quick", "--no-such-flag"});
  EXPECT_EQ(val.exit_code, 2) << val.err;
  EXPECT_NE(val.err.find("kevo bench: unknown option '--no-such-flag'"), std::string::npos) << val.err;
}

TEST(CliContract, EventsJsonlWithoutAFileIsAnError) {
  TempDir dir;
  auto r = kevo_run({"evolve", "gelu", "--fake-gpu", "--db", (dir.path / "runs.db").string(), "--quiet",
                     "--events", "jsonl"},
                    dir.path.string());
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--events jsonl FILE"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.path / "jsonl"));
}

// --evals-per-gpu: a slot per evaluation in flight on each GPU; out of range is a usage error that
// names the option.
TEST(CliContract, EvalsPerGpuIsRangeChecked) {
  TempDir dir;
  auto r = kevo_run({"evolve", "gelu", "--fake-gpu", "--db", (dir.path / "runs.db").string(), "--quiet",
                     "--evals-per-gpu", "9"},
                    dir.path.string());
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--evals-per-gpu"), std::string::npos) << r.err;
}

TEST(CliContract, DoctorTableStaysATable) {
  auto r = kevo_run({"doctor"});
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  std::istringstream in(r.out);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "kevo doctor");
  const std::regex row("^  [a-zA-Z/ -]{14} (ok     |MISSING) .*|^ {25}fix: .*");
  int rows = 0;
  while (std::getline(in, line)) {
    EXPECT_TRUE(std::regex_match(line, row)) << "not a table row: '" << line << "'\n" << r.out;
    ++rows;
  }
  EXPECT_GE(rows, 4) << r.out;
  auto help = kevo_run({"doctor", "--help"});  // the 1 it exits with on a GPU-less host is documented
  EXPECT_NE(help.out.find("Exit codes: 0 a usable GPU"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("1 no usable GPU"), std::string::npos) << help.out;
  if (find_program("nvcc")) {
    EXPECT_TRUE(std::regex_search(r.out, std::regex("\n  nvcc +ok +release [0-9]+\\.[0-9]+"))) << r.out;
  }
}

TEST(CliContract, EveryHelpEndsWithExamples) {
  std::vector<std::vector<std::string>> todo = {{}};
  int checked = 0;
  while (!todo.empty()) {
    auto path = todo.back();
    todo.pop_back();
    auto args = path;
    args.push_back("--help");
    auto r = kevo_run(args);
    std::string cmd = "kevo";
    for (const auto& a : path) cmd += " " + a;
    EXPECT_EQ(r.exit_code, 0) << cmd << r.err;
    auto at = r.out.rfind("\nExamples:\n  kevo ");
    EXPECT_NE(at, std::string::npos) << cmd << " --help has no examples:\n" << r.out;
    // Nothing but examples after them.
    if (at != std::string::npos) {
      for (size_t p = r.out.find('\n', at + 11); p != std::string::npos && p + 1 < r.out.size(); p = r.out.find('\n', p + 1)) {
        EXPECT_EQ(r.out.compare(p + 1, 7, "  kevo "), 0) << cmd << ":\n" << r.out.substr(at);
      }
    }
    for (const auto& s : subcommands_in(r.out)) {
      auto next = path;
      next.push_back(s);
      todo.push_back(next);
    }
    ++checked;
  }
  EXPECT_GE(checked, 20);
}
