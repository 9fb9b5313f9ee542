// kevo bench on a CPU: a recorded run -> table files whose figures match the database, and the
// runner over two tasks with the marker evaluator and a scripted model (resume, skip).
#include <fstream>

#include "bench/runner.h"
#include "bench/table.h"
#include "fixture.h"  // tests/report
#include "harness.h"  // tests/evolve
#include "util/fs.h"

namespace kevo::bench {
namespace {

using nlohmann::json;

std::string slurp(const std::filesystem::path& p) {
  auto s = read_file(p);
  EXPECT_TRUE(s) << p;
  return s ? *s : "";
}

TEST(BenchTable, RecordedRunTablesMatchTheDatabase) {
  auto dir = evolve::testing::temp_dir("table");
  auto db = kevo::testing::write_fixture(dir / "data");
  ASSERT_TRUE(db) << db.error().message;
  auto ts = load_tables(db->string());
  ASSERT_TRUE(ts) << ts.error().message;
  ASSERT_EQ(ts->size(), 1u);
  const auto& t = ts->front();
  EXPECT_EQ(t.key.strategy, "evoengineer-full");
  EXPECT_EQ(t.key.llm, "fake:m1");
  EXPECT_TRUE(t.key.fake);
  ASSERT_EQ(t.tasks.size(), 3u);
  EXPECT_EQ(t.tasks[0].task, "alpha");
  EXPECT_DOUBLE_EQ(*t.tasks[0].speedup, 2.4);
  EXPECT_FALSE(t.tasks[1].speedup);  // beta failed held-out
  EXPECT_DOUBLE_EQ(*t.tasks[2].speedup, 1.6);
  EXPECT_EQ(t.agg.correct, 2);
  EXPECT_DOUBLE_EQ(t.agg.median, 2.0);
  EXPECT_NEAR(t.agg.geomean, std::sqrt(2.4 * 1.6), 1e-12);
  EXPECT_NEAR(t.agg.fast_2, 1.0 / 3, 1e-12);
  EXPECT_NEAR(t.agg.validity_rate, 4.0 / 6, 1e-12);
  EXPECT_NEAR(t.agg.compile_rate, 5.0 / 6, 1e-12);
  EXPECT_EQ(t.agg.tokens, 900);
  EXPECT_NEAR(t.agg.cost_usd, 0.06, 1e-12);

  ASSERT_TRUE(write_outputs(*ts, dir / "out"));
  std::string md = slurp(dir / "out" / "bench.md");
  for (const char* f : kevo::testing::kFixtureFigures) EXPECT_NE(md.find(f), std::string::npos) << f;
  EXPECT_NE(md.find("| alpha | 1 | finished | 2 | 0.8 | 2.400x | n/a | 12.5% | 4 | 50.0% | 75.0% | 600 | $0.0400 |"),
            std::string::npos)
      << md;
  std::string csvs = slurp(dir / "out" / "bench.csv");
  EXPECT_NE(csvs.find("evoengineer-full,fake:m1,1,alpha,1,finished,1,2,0.8,2.4,,0.125,4,2,3,0.5,0.75,4,600,0.040000"),
            std::string::npos)
      << csvs;
  EXPECT_NE(csvs.find(",beta,2,finished,0,3,,,,,1,1,1,"), std::string::npos) << csvs;
  json j = json::parse(slurp(dir / "out" / "bench.json"));
  const auto& a = j["tables"][0]["aggregates"];
  EXPECT_DOUBLE_EQ(a["median_speedup"].get<double>(), 2.0);
  EXPECT_NEAR(a["fast_1"].get<double>(), 2.0 / 3, 1e-12);
  EXPECT_EQ(a["tokens"].get<int>(), 900);
  EXPECT_TRUE(j["tables"][0]["tasks"][1]["speedup"].is_null());

  // The JSON result reloads to the same figures, and two tables compare side by side.
  auto again = load_tables((dir / "out").string());
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_DOUBLE_EQ(again->front().agg.geomean, t.agg.geomean);
  std::vector<BenchTable> two = {t, again->front()};
  two[1].key.strategy = "eoh";
  std::string cmp = compare_markdown(two);
  EXPECT_NE(cmp.find("| alpha | 2.400x | 2.400x |"), std::string::npos) << cmp;
  EXPECT_NE(cmp.find("| **fast_2** | 33.3% | 33.3% |"), std::string::npos) << cmp;
  EXPECT_NE(compare_csv(two).find("eoh,fake:m1,1,gamma"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(BenchPlan, SkipsFinishedResumesInterruptedStartsTheRest) {
  RunKey key{"eoh", "m", false};
  auto row = [&](int64_t id, const std::string& task, store::RunStatus st, const std::string& strategy = "eoh") {
    store::RunRow r;
    r.id = id;
    r.task = task;
    r.status = st;
    r.strategy = strategy;
    r.config_json = R"({"llm":"m","fake_evaluator":false})";
    return r;
  };
  std::vector<store::RunRow> runs = {row(1, "a", store::RunStatus::kFinished), row(2, "b", store::RunStatus::kInterrupted),
                                     row(3, "c", store::RunStatus::kFinished, "funsearch"),
                                     row(4, "d", store::RunStatus::kRunning), row(5, "e", store::RunStatus::kFailed)};
  auto p = plan(runs, {"a", "b", "c", "d", "e"}, key);
  ASSERT_EQ(p.size(), 5u);
  EXPECT_EQ(p[0].action, Action::kSkip);
  EXPECT_EQ(p[1].action, Action::kResume);
  EXPECT_EQ(p[1].run_id, 2);
  EXPECT_EQ(p[2].action, Action::kStart);  // another strategy's run does not count
  EXPECT_EQ(p[3].action, Action::kResume);  // killed: still marked running
  EXPECT_EQ(p[4].action, Action::kSkip);
}

TEST(BenchRunner, RunsEveryTaskResumesAndSkips) {
  using namespace evolve::testing;
  Harness h(improving_kernels());
  std::string toml2 = kTaskToml;
  toml2.replace(toml2.find("vec_scale"), 9, "vec_scale2");
  auto dir2 = h.dir / "task2";
  std::filesystem::create_directories(dir2);
  write(dir2 / "task.toml", toml2);
  write(dir2 / "baseline.cu", kernel_source("pass time_ms=2.0"));
  write(dir2 / "reference.cpp", "#include <kevo/reference.h>\n");

  // Task 1 was interrupted after its first candidate in an earlier session.
  auto o = h.options("evoengineer-full", 4);
  h.progress = [&](const evolve::Progress& p) {
    if (p.done >= 1) h.cancel.cancel();
  };
  auto first = h.run(o);
  ASSERT_TRUE(first) << first.error().message;
  ASSERT_EQ(first->status, store::RunStatus::kInterrupted);
  h.progress = nullptr;

  llm::CancelToken cancel;
  BenchSetup s;
  s.tasks = {"vec_scale", "vec_scale2"};
  s.load_task = [&](const std::string& n) -> Result<Task> {
    return load_task(n == "vec_scale" ? h.dir / "task" : dir2);
  };
  s.options = o;
  s.evaluator = h.eval;
  s.llm = h.client.get();
  s.cancel = &cancel;
  std::vector<std::string> lines;
  s.log = [&](const std::string& l) { lines.push_back(l); };
  auto out = run_bench(*h.db, s);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->resumed, 1);
  EXPECT_EQ(out->started, 1);
  EXPECT_EQ(out->skipped, 0);
  EXPECT_TRUE(out->errors.empty());
  auto runs = h.db->list_runs();
  ASSERT_TRUE(runs);
  EXPECT_EQ(runs->size(), 2u);  // the interrupted run was continued, not restarted

  // Running again does nothing: both tasks are done.
  auto again = run_bench(*h.db, s);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->skipped, 2);
  EXPECT_EQ(again->started + again->resumed, 0);

  // The table's figures are the database's.
  auto key = key_for(o, h.client.get(), true);
  auto t = load_table(*h.db, key, &s.tasks, "test");
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_EQ(t->tasks.size(), 2u);
  for (const auto& r : t->tasks) {
    auto run = h.db->get_run(r.run_id);
    ASSERT_TRUE(run);
    EXPECT_EQ(run->status, store::RunStatus::kFinished);
    auto tot = h.db->totals(r.run_id);
    ASSERT_TRUE(tot);
    EXPECT_EQ(r.candidates, tot->candidates);
    EXPECT_EQ(r.candidates, 4);
    EXPECT_EQ(r.valid, tot->valid);
    EXPECT_EQ(r.tokens, tot->tokens);
    json fin = json::parse(run->final_json);
    ASSERT_NE(fin.value("winner", int64_t{0}), 0);
    EXPECT_EQ(r.best_candidate, fin["winner"].get<int64_t>());
    EXPECT_DOUBLE_EQ(*r.speedup, fin["winner_speedup"].get<double>());
    EXPECT_DOUBLE_EQ(r.baseline_ms, 2.0);
  }
  EXPECT_EQ(t->agg.correct, 2);
  EXPECT_DOUBLE_EQ(t->agg.fast_1, 1.0);
  EXPECT_DOUBLE_EQ(t->agg.validity_rate, 1.0);
}

}  // namespace
}  // namespace kevo::bench
