// `kevo evolve --profile --verifier-model` and `kevo show` end to end (fake GPU, loopback model):
// the baseline's and the winner's diagnoses and the verifier's matrix are printed with the run, a
// candidate's whole profile with it, and --no-profile-feedback keeps profiles out of the prompts.
#include <cctype>
#include <sstream>

#include "harness.h"
#include "util/fs.h"
#include "util/subprocess.h"

using namespace kevo;
using namespace kevo::evolve;
using namespace kevo::evolve::testing;
namespace fs = std::filesystem;

namespace {

const fs::path kKevo = fs::path(KEVO_BINARY_DIR) / "bin" / "kevo";

RunResult kevo_run(const std::vector<std::string>& args, const fs::path& home) {
  std::vector<std::string> argv{kKevo.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = run_process({.argv = argv, .env_add = {{"HOME", home.string()}, {"KEVO_DB", ""}},
                        .timeout = std::chrono::seconds(120)});
  EXPECT_TRUE(r);
  return r ? *r : RunResult{};
}

PromptServer::Responder memory_bound_kernels() {
  return [](const std::string& prompt, int n) {
    if (contains(prompt, "## Checklist")) return std::string("VERDICT: PASS\nREASONS: none\n");  // the verifier
    return answer("v" + std::to_string(n), "idea " + std::to_string(n),
                  kernel_source("pass time_ms=" + std::to_string(1.8 * std::pow(0.9, n)) + " noise=0.01 dram=85 sm=12"));
  };
}

}  // namespace

TEST(ShowCli, ProfilesAndTheVerifierMatrixAreShownWithTheRun) {
  Harness h(memory_bound_kernels());
  fs::path db = h.dir / "cli.db";
  auto ev = kevo_run({"evolve", h.task.dir.string(), "--fake-gpu", "--db", db.string(), "--model",
                      h.server.base_url() + "#m1", "--strategy", "evoengineer-full", "--budget-candidates", "5", "--parallel", "1",
                      "--profile", "--verifier-model", h.server.base_url() + "#m1", "--quiet"},
                     h.dir);
  ASSERT_EQ(ev.exit_code, 0) << ev.err;
  auto show = kevo_run({"show", "1", "--db", db.string()}, h.dir);
  ASSERT_EQ(show.exit_code, 0) << show.err;
  // The candidates' model column names the model, not the server's address cut at 16 columns.
  int rows_naming_m1 = 0;
  std::istringstream lines(show.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || !std::isdigit(static_cast<unsigned char>(line[0]))) continue;
    EXPECT_FALSE(contains(line, "http://")) << line;
    rows_naming_m1 += contains(line, " m1 ");
  }
  EXPECT_GE(rows_naming_m1, 1) << show.out;
  EXPECT_TRUE(contains(show.out, "baseline profile: neither bound: DRAM 45%, SM 10% of peak")) << show.out;
  EXPECT_TRUE(contains(show.out, "profile: memory-bound: DRAM 85% of peak")) << show.out;
  // The verifier passed all five, and the checker did too.
  EXPECT_TRUE(contains(show.out, "against the checker, 5 candidates judged by both")) << show.out;
  EXPECT_TRUE(contains(show.out, "TN 5")) << show.out;
  auto js = kevo_run({"show", "1", "--db", db.string(), "--json"}, h.dir);
  auto j = nlohmann::json::parse(js.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << js.out;
  EXPECT_EQ(j["verifier"]["tn"], 5);
  EXPECT_TRUE(j["verifier"]["precision"].is_null());  // it failed nothing
  auto one = kevo_run({"show", "1", "--db", db.string(), "--candidate", "2"}, h.dir);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_TRUE(contains(one.out, "--- profile (Nsight Compute on config 'main'")) << one.out;
  EXPECT_TRUE(contains(one.out, "DRAM 85% L2 ? SM 12%")) << one.out;
  EXPECT_TRUE(contains(one.out, "diagnosis: memory-bound: DRAM 85% of peak")) << one.out;
  auto prompts = h.server.prompts();
  EXPECT_GE(std::count_if(prompts.begin(), prompts.end(),
                          [](const std::string& p) { return contains(p, "profile: memory-bound"); }),
            1);
}

TEST(ShowCli, NoProfileFeedbackKeepsThemOutOfPrompts) {
  Harness h(memory_bound_kernels());
  fs::path db = h.dir / "cli.db";
  auto ev = kevo_run({"evolve", h.task.dir.string(), "--fake-gpu", "--db", db.string(), "--model",
                      h.server.base_url() + "#m1", "--strategy", "evoengineer-full", "--budget-candidates", "5", "--parallel", "1",
                      "--profile", "--no-profile-feedback", "--quiet"},
                     h.dir);
  ASSERT_EQ(ev.exit_code, 0) << ev.err;
  auto prompts = h.server.prompts();
  ASSERT_GE(prompts.size(), 3u);
  for (const auto& p : prompts) EXPECT_FALSE(contains(p, "rofile: ")) << p;
  // Profiles are still taken and shown: only the prompts go without.
  auto show = kevo_run({"show", "1", "--db", db.string()}, h.dir);
  EXPECT_TRUE(contains(show.out, "profile: memory-bound: DRAM 85% of peak")) << show.out;
}
