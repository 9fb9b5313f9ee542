// A resumed run continues as it was started: `kevo evolve --resume RUN --db DB`, the command kevo
// prints after Ctrl-C, restores the models, their settings and the evaluator kind with no other
// flag; a resume that would change the evaluator is refused, by the engine and by the command.
#include "harness.h"
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

// The checker's kind without a GPU: the marker evaluator's verdicts from one that says it is not
// a test double.
class NotFake : public CandidateEvaluator {
 public:
  Verdict evaluate(const Task& t, const fs::path& f, const EvalOptions& o) override { return m_.evaluate(t, f, o); }
  Verdict evaluate_baseline(const Task& t, const EvalOptions& o) override { return m_.evaluate_baseline(t, o); }

 private:
  MarkerEvaluator m_;
};

}  // namespace

TEST(Resume, TheEngineRefusesAnotherEvaluator) {
  Harness h(improving_kernels());
  auto o = h.options("evoengineer-full", 2);
  auto out = h.run(o);
  ASSERT_TRUE(out) << out.error().message;
  NotFake real;
  Engine e(h.task, real, *h.db, h.client.get(), nullptr, h.cancel);
  auto more = e.resume(out->run_id, h.options("evoengineer-full", 4));
  ASSERT_FALSE(more) << "a fake run was resumed on the checker";
  EXPECT_TRUE(contains(more.error().message, "was evaluated with --fake-gpu")) << more.error().message;
  EXPECT_EQ(h.candidates(out->run_id).size(), 2u);
}

TEST(Resume, TheStoredLaunchComesBack) {
  Harness h(improving_kernels());
  auto o = h.options("evoengineer-full", 1);
  o.launch = {{"models", {"m"}}, {"fake_gpu", true}};
  auto out = h.run(o);
  ASSERT_TRUE(out) << out.error().message;
  auto back = options_of_run(*h.db->get_run(out->run_id));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->launch, o.launch);
}

TEST(ResumeCli, AsPrintedItContinuesWithTheModelAndTheFakeEvaluator) {
  Harness h(improving_kernels());
  const std::string db = (h.dir / "cli.db").string();
  auto first = kevo_run({"evolve", h.task.dir.string(), "--fake-gpu", "--db", db, "--model", h.server.base_url() + "#m1",
                         "--strategy", "evoengineer-full", "--budget-candidates", "2", "--parallel", "1", "--quiet"},
                        h.dir);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  const size_t asked = h.server.prompts().size();
  auto more = kevo_run({"evolve", "--resume", "1", "--db", db, "--budget-candidates", "4", "--quiet"}, h.dir);
  EXPECT_EQ(more.exit_code, 0) << more.out << more.err;
  EXPECT_TRUE(contains(more.out, "(fake evaluator: no kernel was run)")) << more.out;
  EXPECT_FALSE(contains(more.out + more.err, "offline")) << more.out << more.err;
  EXPECT_GE(h.server.prompts().size(), asked + 2) << "the resumed run did not ask the model";
  auto rows = store::RunDb::open(db);
  ASSERT_TRUE(rows);
  auto cands = (*rows)->candidates(1);
  ASSERT_TRUE(cands);
  EXPECT_EQ(cands->size(), 4u);
}

// The model came from --config's [llm] table; a --config given to the resume with only [evolve]
// leaves it in place.
TEST(ResumeCli, ModelsFromAConfigFileComeBack) {
  Harness h(improving_kernels());
  const std::string db = (h.dir / "cli.db").string();
  const fs::path llm_toml = h.dir / "llm.toml", evolve_toml = h.dir / "evolve.toml";
  write(llm_toml, "[llm]\nmodels = [\"" + h.server.base_url() + "#m1\"]\n");
  write(evolve_toml, "[evolve]\n");
  auto first = kevo_run({"evolve", h.task.dir.string(), "--fake-gpu", "--db", db, "--config", llm_toml.string(),
                         "--strategy", "evoengineer-full", "--budget-candidates", "2", "--parallel", "1", "--quiet"},
                        h.dir);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  const size_t asked = h.server.prompts().size();
  auto more = kevo_run({"evolve", "--resume", "1", "--db", db, "--config", evolve_toml.string(), "--budget-candidates",
                        "4", "--quiet"},
                       h.dir);
  EXPECT_EQ(more.exit_code, 0) << more.out << more.err;
  EXPECT_GE(h.server.prompts().size(), asked + 2) << more.out << more.err;
}

TEST(ResumeCli, RefusesToChangeTheEvaluator) {
  Harness h(improving_kernels());
  // A run the checker evaluated (made here: this host may have no GPU to make one).
  store::RunRow row;
  row.task = h.task.name;
  row.task_dir = h.task.dir.string();
  row.strategy = "evoengineer-full";
  row.config_json = R"({"fake_evaluator": false, "budgets": {"max_candidates": 2}})";
  const fs::path db = h.dir / "cli.db";
  {
    auto d = store::RunDb::open(db);
    ASSERT_TRUE(d);
    ASSERT_TRUE((*d)->create_run(row));
  }
  auto r = kevo_run({"evolve", "--resume", "1", "--db", db.string(), "--fake-gpu", "--quiet"}, h.dir);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "run 1 was evaluated on the GPU checker; resuming it with a fake evaluator")) << r.err;
}
