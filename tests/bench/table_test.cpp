// kevo bench on a CPU: a recorded run -> table files whose figures match the database, and the
// runner over two tasks with the marker evaluator and a scripted model (resume, skip).
#include <fstream>

#include "bench/suite_runner.h"
#include "fixture.h"  // tests/report
#include "harness.h"  // tests/evolve
#include "results/table.h"
#include "util/fs.h"

namespace kevo::bench {
namespace {

using namespace kevo::results;

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
  EXPECT_NE(md.find("| task | run | status | baseline ms | best ms | speedup | vs eager | vs torch.compile | SOL |"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("vs extension"), std::string::npos) << md;  // no task has an extension baseline
  EXPECT_NE(md.find("| alpha | 1 | finished | 2 | 0.8 | 2.400x | n/a | n/a | 12.5% | 4 | 50.0% | 75.0% | 600 | $0.0400 |"),
            std::string::npos)
      << md;
  std::string csvs = slurp(dir / "out" / "bench.csv");
  EXPECT_NE(csvs.find("speedup,speedup_vs_eager,speedup_vs_compile,speedup_vs_extension,sol_fraction,"),
            std::string::npos)
      << csvs;
  EXPECT_NE(csvs.find("evoengineer-full,fake:m1,1,alpha,1,finished,1,2,0.8,2.4,,,,0.125,4,2,3,0.5,0.75,4,600,0.040000"),
            std::string::npos)
      << csvs;
  EXPECT_NE(csvs.find(",beta,2,finished,0,3,,,,,,,1,1,1,"), std::string::npos) << csvs;
  json j = json::parse(slurp(dir / "out" / "bench.json"));
  const auto& a = j["tables"][0]["aggregates"];
  EXPECT_DOUBLE_EQ(a["median_speedup"].get<double>(), 2.0);
  EXPECT_NEAR(a["fast_1"].get<double>(), 2.0 / 3, 1e-12);
  EXPECT_EQ(a["tokens"].get<int>(), 900);
  EXPECT_TRUE(j["tables"][0]["tasks"][1]["speedup"].is_null());
  EXPECT_TRUE(j["tables"][0]["tasks"][0]["speedup_vs_eager"].is_null());
  EXPECT_TRUE(j["tables"][0]["tasks"][0]["speedup_vs_compile"].is_null());
  EXPECT_TRUE(j["tables"][0]["tasks"][0]["pytorch_eager_ms"].is_null());

  // The JSON result reloads to the same figures, and two tables compare side by side.
  auto again = load_tables((dir / "out").string());
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_DOUBLE_EQ(again->front().agg.geomean, t.agg.geomean);
  std::vector<BenchTable> two = {t, again->front()};
  two[1].key.strategy = "eoh";
  std::string cmp = compare_markdown(two);
  const auto* alpha = &t.tasks[0];
  const std::string cells = fmt::format("2.400x | {} | {} |", alpha->tokens, alpha->candidates);
  EXPECT_NE(cmp.find("| alpha | " + cells + " " + cells), std::string::npos) << "speedup, tokens, candidates side by side\n" << cmp;
  EXPECT_NE(cmp.find("| **fast_2** | 33.3% | | | 33.3% | | |"), std::string::npos) << cmp;
  EXPECT_NE(cmp.find("| **slower than the baseline** | 0 |"), std::string::npos) << cmp;
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

// A run that failed because the machine could not run it (no GPU) is not "done".
TEST(BenchPlan, RetriesRunsThatFailedForInfrastructure) {
  RunKey key{"eoh", "m", false};
  auto row = [&](int64_t id, const std::string& task, const std::string& stop, const std::string& base_outcome) {
    store::RunRow r;
    r.id = id;
    r.task = task;
    r.status = store::RunStatus::kFailed;
    r.strategy = "eoh";
    r.stop_reason = stop;
    r.baseline_json = nlohmann::json{{"outcome", base_outcome}}.dump();
    r.config_json = R"({"llm":"m","fake_evaluator":false})";
    return r;
  };
  std::vector<store::RunRow> runs = {row(1, "nogpu", "baseline_failed", "infra_error"),
                                     row(2, "crashed", "baseline_failed", "crash"),
                                     row(3, "badtask", "baseline_failed", "incorrect"),
                                     row(4, "midrun", "infra_error: no usable GPU", "pass")};
  auto p = plan(runs, {"nogpu", "crashed", "badtask", "midrun"}, key);
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0].action, Action::kStart);
  EXPECT_EQ(p[1].action, Action::kStart);
  EXPECT_EQ(p[2].action, Action::kSkip);  // the task's own baseline is wrong: done, and failed
  EXPECT_EQ(p[3].action, Action::kStart);
}

TEST(BenchTable, TasksNotRunAreMarkedAndLeftOutOfEveryAggregate) {
  store::RunRow nogpu;
  nogpu.id = 1;
  nogpu.task = "nogpu";
  nogpu.status = store::RunStatus::kFailed;
  nogpu.stop_reason = "baseline_failed";
  nogpu.baseline_json = R"({"outcome":"infra_error","message":"no usable GPU"})";
  TaskResult r = task_result(nogpu, {}, {});
  EXPECT_TRUE(r.not_run);
  EXPECT_EQ(r.status, "not run");
  BenchTable t;
  t.key = RunKey{"eoh", "m", false};
  t.tasks = {r};
  t.agg = aggregate(t.tasks);
  EXPECT_EQ(t.agg.tasks, 0);
  EXPECT_EQ(t.agg.not_run, 1);
  std::string md = markdown(t);
  EXPECT_EQ(md.find("0.000x"), std::string::npos) << md;
  EXPECT_NE(md.find("not run"), std::string::npos) << md;
  EXPECT_NE(md.find("NOT RUN"), std::string::npos) << md;
  auto j = t.to_json();
  EXPECT_TRUE(j["aggregates"]["median_speedup"].is_null());
  EXPECT_EQ(j["aggregates"]["not_run"], 1);
  // Next to a solved task, the unrun one does not dilute fast_p or the "_all" figures.
  TaskResult solved;
  solved.task = "ok";
  solved.status = "finished";
  solved.speedup = 2.0;
  solved.verified = true;
  auto a = aggregate({r, solved});
  EXPECT_EQ(a.tasks, 1);
  EXPECT_DOUBLE_EQ(a.fast_1, 1.0);
  EXPECT_DOUBLE_EQ(a.median_all, 2.0);
}

// An interrupted bench: a run's best so far is listed as unverified, counted as unsolved, and the
// table says how many such tasks there are.
TEST(BenchTable, AnUnverifiedResultIsShownNotCounted) {
  TaskResult verified, unfinished;
  verified.task = "a", verified.status = "finished", verified.speedup = 3.0, verified.verified = true;
  unfinished.task = "b", unfinished.status = "interrupted", unfinished.speedup = 2.5;
  BenchTable t;
  t.key = RunKey{"eoh", "m", false};
  t.tasks = {verified, unfinished};
  t.agg = aggregate(t.tasks);
  EXPECT_EQ(t.agg.correct, 1);
  std::string md = markdown(t);
  EXPECT_NE(md.find("interrupted (unverified)"), std::string::npos) << md;
  EXPECT_NE(md.find("tasks with an unverified result"), std::string::npos) << md;
  EXPECT_EQ(t.to_json()["aggregates"]["unverified"], 1);
}

TEST(SuiteRunner, RunsEveryTaskResumesAndSkips) {
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

TEST(SuiteRunner, RecordsPyTorchTimesOnceAndTheTableShowsThem) {
  using namespace evolve::testing;
  Harness h(improving_kernels());
  // A second task with a PyTorch reference (and an extension baseline); the first has none.
  std::string toml2 = std::string("torch_reference = \"reference.py\"\ntorch_baseline = \"ext.cu\"\n") + kTaskToml;
  toml2.replace(toml2.find("vec_scale"), 9, "vec_torch");
  auto dir2 = h.dir / "task2";
  std::filesystem::create_directories(dir2);
  write(dir2 / "task.toml", toml2);
  write(dir2 / "baseline.cu", kernel_source("pass time_ms=2.0"));
  write(dir2 / "reference.cpp", "#include <kevo/reference.h>\n");
  write(dir2 / "reference.py", "# not run: the test times PyTorch with a stand-in\n");
  write(dir2 / "ext.cu", "// not built\n");

  llm::CancelToken cancel;
  BenchSetup s;
  s.tasks = {"vec_scale", "vec_torch"};
  s.load_task = [&](const std::string& n) -> Result<Task> { return load_task(n == "vec_scale" ? h.dir / "task" : dir2); };
  s.options = h.options("evoengineer-full", 3);
  s.evaluator = h.eval;
  s.llm = h.client.get();
  s.cancel = &cancel;
  std::vector<std::string> lines;
  s.log = [&](const std::string& l) { lines.push_back(l); };
  std::vector<std::string> timed;
  s.time_torch = [&](const Task& t) -> Result<torch::TimeResult> {
    timed.push_back(t.name);
    torch::TimeResult r;
    r.device = "cuda";
    r.device_name = "Fake GPU";
    r.modes["eager"].ok = true;
    r.modes["eager"].median_ms = 8.0;
    r.modes["compile"].ok = true;
    r.modes["compile"].median_ms = 4.0;
    r.modes["extension"].ok = true;
    r.modes["extension"].median_ms = 2.0;
    return r;
  };
  auto out = run_bench(*h.db, s);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->started, 2);
  EXPECT_EQ(out->torch_timed, 1);
  EXPECT_EQ(timed, std::vector<std::string>{"vec_torch"});  // only the task with a torch_reference
  bool logged = false;
  for (const auto& l : lines) logged |= l.find("vec_torch: PyTorch timed: eager 8 ms, torch.compile 4 ms") != std::string::npos;
  EXPECT_TRUE(logged);

  // Done runs with the times recorded are not timed again.
  auto again = run_bench(*h.db, s);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->skipped, 2);
  EXPECT_EQ(timed.size(), 1u);

  auto t = load_table(*h.db, key_for(s.options, h.client.get(), true), &s.tasks, "test");
  ASSERT_TRUE(t) << t.error().message;
  const TaskResult& plain = t->tasks[0];
  const TaskResult& torch = t->tasks[1];
  EXPECT_FALSE(plain.speedup_vs_eager);
  ASSERT_TRUE(torch.best_ms);
  ASSERT_TRUE(torch.speedup_vs_eager);
  EXPECT_DOUBLE_EQ(*torch.speedup_vs_eager, 8.0 / *torch.best_ms);
  EXPECT_DOUBLE_EQ(*torch.speedup_vs_compile, 4.0 / *torch.best_ms);
  EXPECT_DOUBLE_EQ(*torch.speedup_vs_extension, 2.0 / *torch.best_ms);
  std::string md = markdown(*t);
  EXPECT_NE(md.find("| vs eager | vs torch.compile | vs extension | SOL |"), std::string::npos) << md;
  EXPECT_NE(md.find(fmt::format("| {} | {} | {} |", fmt_speedup(torch.speedup_vs_eager),
                                fmt_speedup(torch.speedup_vs_compile), fmt_speedup(torch.speedup_vs_extension))),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| n/a | n/a | n/a |"), std::string::npos) << md;  // the task without a reference
  std::string c = csv(*t);
  EXPECT_NE(c.find(fmt::format(",{:.6g},{:.6g},{:.6g},", *torch.speedup_vs_eager, *torch.speedup_vs_compile,
                               *torch.speedup_vs_extension)),
            std::string::npos)
      << c;
  json j = t->to_json();
  EXPECT_DOUBLE_EQ(j["tasks"][1]["pytorch_compile_ms"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(j["tasks"][1]["speedup_vs_compile"].get<double>(), *torch.speedup_vs_compile);
  auto run = h.db->get_run(torch.run_id);
  ASSERT_TRUE(run);
  json base = json::parse(run->baseline_json);
  EXPECT_EQ(base["pytorch"]["device_name"], "Fake GPU");
  EXPECT_EQ(base.value("time_ms", 0.0), 2.0);  // the engine's record is kept
}

TEST(SuiteRunner, NoTorchHereIsOneLineAndNothingRecorded) {
  using namespace evolve::testing;
  Harness h(improving_kernels());
  std::vector<std::filesystem::path> dirs;
  for (const char* name : {"vec_t1", "vec_t2"}) {
    std::string toml = std::string("torch_reference = \"reference.py\"\n") + kTaskToml;
    toml.replace(toml.find("vec_scale"), 9, name);
    auto d = h.dir / name;
    std::filesystem::create_directories(d);
    write(d / "task.toml", toml);
    write(d / "baseline.cu", kernel_source("pass time_ms=2.0"));
    write(d / "reference.cpp", "#include <kevo/reference.h>\n");
    write(d / "reference.py", "# not run\n");
    dirs.push_back(d);
  }
  llm::CancelToken cancel;
  BenchSetup s;
  s.tasks = {"vec_t1", "vec_t2"};
  s.load_task = [&](const std::string& n) -> Result<Task> { return load_task(n == "vec_t1" ? dirs[0] : dirs[1]); };
  s.options = h.options("evoengineer-full", 2);
  s.evaluator = h.eval;
  s.llm = h.client.get();
  s.cancel = &cancel;
  std::vector<std::string> lines;
  s.log = [&](const std::string& l) { lines.push_back(l); };
  int calls = 0;
  s.time_torch = [&](const Task&) -> Result<torch::TimeResult> {
    ++calls;
    return fail(ErrorCode::kNoCuda, "no CUDA: torch 1.13.1 sees no CUDA device (torch.cuda.is_available() is False)");
  };
  auto out = run_bench(*h.db, s);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(calls, 1);  // off for the rest of the bench
  EXPECT_EQ(out->torch_timed, 0);
  int notes = 0;
  for (const auto& l : lines) notes += l.find("PyTorch not timed in this bench: no CUDA") != std::string::npos;
  EXPECT_EQ(notes, 1);
  auto runs = h.db->list_runs();
  ASSERT_TRUE(runs);
  for (const auto& r : *runs) EXPECT_EQ(r.baseline_json.find("pytorch"), std::string::npos) << r.baseline_json;
}

}  // namespace
}  // namespace kevo::bench
