// The campaign budget on a CPU: the bandit's choices, the budget's text, and a scripted campaign
// (bench/campaign/outcomes.json through the marker evaluator) against a flat one at the same total.
#include <gtest/gtest.h>

#include <fstream>

#include "bench/campaign.h"
#include "bench/task_bandit.h"
#include "evolve/marker_evaluator.h"
#include "scripted_model.h"  // bench/campaign
#include "support/temp_dir.h"
#include "task/task.h"

namespace kevo::bench {
namespace {

TEST(TaskBandit, FavoursHeadroomAndProgressAndSkipsStoppedTasks) {
  TaskBandit b({{"near", 0, 0, 0.9}, {"far", 0, 0, 0.1}, {"mid", 0, 0, 0.5}});
  EXPECT_GT(b.headroom(1), b.headroom(2));
  EXPECT_EQ(b.next(), 1u);  // before any slice: the most headroom
  b.record(1, 1.0, 1.0, 0.1);  // no progress on "far"
  b.record(2, 1.0, 3.0, 0.5);  // "mid" tripled
  EXPECT_EQ(b.next(), 2u);
  b.stop(2);
  EXPECT_NE(b.next(), 2u);
  b.stop(0), b.stop(1);
  EXPECT_FALSE(b.next());
}

TEST(CampaignBudget, ParsesUnitAndTotalAndNamesWhatIsWrong) {
  auto c = parse_campaign_budget("tokens:2000000");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->unit, BudgetUnit::kTokens);
  EXPECT_EQ(c->total, 2e6);
  auto bad_unit = parse_campaign_budget("hours:3");
  ASSERT_FALSE(bad_unit);
  EXPECT_NE(bad_unit.error().message.find("unknown budget unit 'hours' (candidates, tokens, usd)"), std::string::npos)
      << bad_unit.error().message;
  EXPECT_FALSE(parse_campaign_budget("candidates:-4"));
  EXPECT_FALSE(parse_campaign_budget("candidates:lots"));
  EXPECT_FALSE(parse_campaign_budget("400"));
}

struct Outcome {
  CampaignReport report;
  std::map<std::string, TaskLedger> by_task;
};

Outcome run(const campaign::Script& script, bool flat, double total, const std::filesystem::path& dir) {
  for (const auto& [name, t] : script.tasks) {
    std::filesystem::create_directories(dir / name);
    std::ofstream(dir / name / "task.toml") << campaign::task_toml(name, t.category);
    std::ofstream(dir / name / "baseline.cu") << campaign::kernel(name, -1, {1, 2.0, ""});
    std::ofstream(dir / name / "reference.cpp") << "#include <kevo/reference.h>\n";
  }
  auto db = store::RunDb::open((dir / "runs.db").string());
  EXPECT_TRUE(db) << db.error().message;
  evolve::MarkerEvaluator eval;
  campaign::ScriptedModel model(script, 3);
  llm::CancelToken cancel;
  BenchSetup s;
  for (const auto& [name, t] : script.tasks) s.tasks.push_back(name);
  s.load_task = [dir](const std::string& n) { return load_task(dir / n); };
  s.options.strategy = *evolve::preset("kevo-default");
  s.options.strategy.parallel = 1;
  s.options.strategy.repair_rounds = 0;
  s.options.seed = 3;
  s.options.work_dir = dir / "work";
  s.evaluator = &eval, s.llm = &model, s.cancel = &cancel;
  CampaignOptions c;
  c.total = total, c.slice = 4, c.flat = flat;
  auto r = run_campaign(**db, s, c);
  EXPECT_TRUE(r) << r.error().message;
  Outcome out{*r, {}};
  for (const auto& t : r->tasks) out.by_task[t.task] = t;
  return out;
}

TEST(Campaign, MovesTheBudgetAwayFromTasksAtTheLimitAtTheSameTotal) {
  const auto script = campaign::load_script(std::string(KEVO_SOURCE_DIR) + "/bench/campaign/outcomes.json");
  test::TempDir dir("kevo-campaign-test");
  const Outcome flat = run(script, true, 64, dir.path / "flat");
  const Outcome guided = run(script, false, 64, dir.path / "guided");
  EXPECT_EQ(flat.report.spent, 64);
  EXPECT_EQ(guided.report.spent, 64);
  int64_t flat_limit = 0, guided_limit = 0, flat_rest = 0, guided_rest = 0;
  for (const char* t : {"at_limit_copy", "near_limit_scale"}) {
    EXPECT_EQ(flat.by_task.at(t).candidates, 16) << t;  // an equal share
    EXPECT_EQ(guided.by_task.at(t).stop, TaskStop::kNearSol) << t;
    EXPECT_GE(guided.by_task.at(t).sol, 0.85) << t;
    flat_limit += flat.by_task.at(t).candidates, guided_limit += guided.by_task.at(t).candidates;
  }
  for (const char* t : {"headroom_reduce", "headroom_matmul"}) {
    EXPECT_LT(guided.by_task.at(t).sol, 0.85) << t;
    EXPECT_EQ(guided.by_task.at(t).stop, TaskStop::kBudgetSpent) << t;
    flat_rest += flat.by_task.at(t).candidates, guided_rest += guided.by_task.at(t).candidates;
  }
  EXPECT_LT(guided_limit, flat_limit);
  EXPECT_GT(guided_rest, flat_rest);
  EXPECT_EQ(guided_limit + guided_rest, 64);
}

}  // namespace
}  // namespace kevo::bench
