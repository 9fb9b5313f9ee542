// `kevo bench` (a suite through `kevo evolve` into one database, then the table) and
// `kevo bench table` (tables of finished runs, side by side).
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bench/campaign.h"
#include "bench/suite_runner.h"
#include "check/evaluator.h"
#include "cli/agent_mutator.h"
#include "cli/commands.h"
#include "cli/db_arg.h"
#include "cli/evaluator_factory.h"
#include "cli/pool_args.h"
#include "cli/signal_guard.h"
#include "cli/task_arg.h"
#include "evolve/task_context.h"
#include "lint/suite.h"
#include "llm/config.h"
#include "util/enum_text.h"
#include "llm/ensemble.h"
#include "results/table.h"
#include "torch/torch_timing.h"
#include "util/fs.h"

namespace kevo::cli {

namespace {

llm::CancelToken g_bench_cancel;

extern "C" void on_bench_sigint(int) {
  g_bench_cancel.cancel();
  std::signal(SIGINT, SIG_DFL);
}

struct BenchArgs {
  std::string suite, strategy = "kevo-default", db, out, config_file, llm_mode, mutator;
  int64_t budget_tokens = 0;
  std::vector<std::string> models;
  int budget_candidates = 0, parallel = 0, seeds = 3;
  double time_budget = 0;
  uint64_t seed = 0;
  bool fake_gpu = false, quiet = false, no_torch_time = false;
  PoolArgs pool;
  std::string campaign;  // UNIT:TOTAL: one budget over the suite (bench/campaign.h)
  int campaign_slice = 5;
  double stop_at_sol = 0;  // 0: not given
  bool flat = false;
};

int bench_fail(const std::string& msg, int code = 2) {
  std::fprintf(stderr, "kevo bench: %s\n", msg.c_str());
  return code;
}

// A campaign's run (one budget over the suite), its report, then the usual table.
int run_campaign_cmd(const BenchArgs& a, store::RunDb& db, const bench::BenchSetup& setup) {
  auto c = bench::parse_campaign_budget(a.campaign);
  if (!c) return bench_fail(c.error().message);
  c->slice = a.campaign_slice;
  c->flat = a.flat;
  if (a.stop_at_sol > 0) c->stop_at_sol = a.stop_at_sol;
  auto r = bench::run_campaign(db, setup, *c);
  if (!r) return bench_fail(r.error().message, 3);
  std::printf("%s\n", bench::campaign_markdown(db, *r).c_str());
  if (r->interrupted) {
    std::fprintf(stderr, "kevo bench: campaign interrupted\n");
    return 130;
  }
  return 0;
}

int run_bench_cmd(const BenchArgs& a, CLI::App* cmd) {
  if (a.suite.empty()) return bench_fail("give --suite NAME (or use `kevo bench table RUN_OR_DB...`)");
  auto tasks = load_suite(a.suite);
  if (!tasks) return bench_fail(tasks.error().message);
  std::string dbpath = db_or_default(a.db);
  auto db = store::RunDb::open(dbpath);
  if (!db) return bench_fail(db.error().message);

  evolve::EngineOptions opts;
  auto s = evolve::preset(a.strategy);
  if (!s) return bench_fail(s.error().message);
  opts.strategy = *s;
  llm::LlmConfig lcfg = llm::default_config();
  if (!a.config_file.empty()) {
    auto st = evolve::load_strategy_file(a.config_file, opts.strategy);
    if (!st) return bench_fail(st.error().message);
    opts.strategy = *st;
    auto has_llm = evolve::toml_has_table(a.config_file, "llm");
    if (!has_llm) return bench_fail(has_llm.error().message);
    if (*has_llm) {
      auto c = llm::load_config(a.config_file, lcfg);
      if (!c) return bench_fail(c.error().message);
      lcfg = *c;
    }
  }
  if (!a.models.empty()) lcfg.models = a.models;
  if (!a.llm_mode.empty()) {
    auto m = llm::parse_cache_mode(a.llm_mode);
    if (!m) return bench_fail(enum_unknown(llm::kCacheModeTexts, "LLM mode", a.llm_mode));
    lcfg.cache = *m;
  }
  if (cmd->count("--parallel")) opts.strategy.parallel = a.parallel;
  if (cmd->count("--mutator")) apply_mutator(opts.strategy, *evolve::parse_mutator(a.mutator));  // checked by CLI11
  if (cmd->count("--budget-tokens")) opts.budgets.max_tokens = a.budget_tokens;
  opts.budgets.max_candidates = opts.strategy.max_candidates;
  if (cmd->count("--budget-candidates")) opts.budgets.max_candidates = a.budget_candidates;
  if (cmd->count("--seed")) opts.seed = a.seed;
  if (cmd->count("--seeds")) opts.eval.seeds = a.seeds;
  if (cmd->count("--time-budget")) opts.eval.time_budget_s = a.time_budget;
  if (a.stop_at_sol > 0 && a.campaign.empty()) opts.budgets.stop_at_sol = a.stop_at_sol;
  if (a.flat && a.campaign.empty()) return bench_fail("--flat compares campaigns: give it with --campaign UNIT:TOTAL");
  if (opts.eval.seeds < 3)
    std::fprintf(stderr, "kevo bench: the checker draws %d seed(s) per config during the search (a smoke "
                         "setting; the protocol's default is 3); winners are still re-verified on held-out "
                         "shapes with fresh inputs\n", opts.eval.seeds);

  std::shared_ptr<llm::ResponseCache> cache;
  std::unique_ptr<llm::Ensemble> ensemble;
  if (!lcfg.models.empty()) {
    auto c = (*db)->handle() ? llm::ResponseCache::attach((*db)->handle())
                             : llm::ResponseCache::open((cache_dir() / "llm_cache.sqlite").string());
    if (!c) return bench_fail(c.error().message);
    cache = std::move(*c);
    auto ctx = llm::make_context(lcfg, {.cache = cache, .seed = opts.seed});
    auto e = llm::make_ensemble(ctx);
    if (!e) return bench_fail(e.error().message);
    ensemble = std::move(*e);
  }
  std::unique_ptr<evolve::CandidateEvaluator> evaluator = make_evaluator_said(a.fake_gpu, "kevo bench");

  bench::BenchSetup setup;
  setup.tasks = *tasks;
  setup.load_task = [](const std::string& name) { return resolve_task(name); };
  setup.options = opts;
  setup.evaluator = evaluator.get();
  setup.llm = ensemble.get();
  setup.ensemble = ensemble.get();
  setup.cancel = &g_bench_cancel;
  {  // --gpus / --queue: checked once here, so a bad value fails before the first task
    auto g = evolve::parse_gpus(a.pool.gpus);
    if (!g) return bench_fail(g.error().message);
  }
  auto gpu_util = gpu_util_of(a.pool, a.fake_gpu, "kevo bench");
  setup.gpu_util = gpu_util.get();
  if (opts.strategy.mutator == evolve::Mutator::kAgent) {
    if (!ensemble) return bench_fail("--mutator agent needs a model (--model PROVIDER:MODEL): its episodes are that model's");
    setup.episodes_for = [&, limits = opts.strategy.episode](const Task& t) {
      return llm_mutator(limits, t, *evaluator, *ensemble);
    };
  }
  setup.pool_for = [&a, cmd, &db, dbpath](const Task& t) {
    return pool_of(a.pool, a.fake_gpu, cmd, **db, t, dbpath, "kevo bench");
  };
  // PyTorch eager / torch.compile / extension on the same GPU, once each task's run is done. Not
  // with --fake-gpu: real PyTorch times next to marker verdicts would be a meaningless ratio.
  if (!a.fake_gpu && !a.no_torch_time)
    setup.time_torch = [budget = opts.eval.time_budget_s](const Task& t) {
      torch::TorchTimingOptions o;
      o.budget_s = budget;
      return time_torch_lent(t, /*seed=*/0x6b65766f, o);  // inputs drawn on the GPU, used in place
    };
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  bool shown = false;
  setup.progress = [&](const std::string& task, const evolve::Progress& p) {
    if (a.quiet || !tty) return;
    std::fprintf(stderr, "\r%s: %s\x1b[K", task.c_str(), p.status_line().c_str());
    shown = true;
  };
  setup.log = [&](const std::string& line) {
    if (shown) std::fprintf(stderr, "\n");
    shown = false;
    std::fprintf(stderr, "%s\n", line.c_str());
  };
  if (!a.campaign.empty()) {
    SignalGuard sigint(SIGINT, on_bench_sigint);
    const int rc = run_campaign_cmd(a, **db, setup);
    if (rc != 0) return rc;
  }
  auto out = [&] {
    SignalGuard sigint(SIGINT, on_bench_sigint);
    if (!a.campaign.empty()) return Result<bench::BenchOutcome>(bench::BenchOutcome{});  // the campaign ran them
    return bench::run_bench(**db, setup);
  }();
  if (shown) std::fprintf(stderr, "\n");
  if (!out) return bench_fail(out.error().message, 3);

  results::RunKey key = bench::key_for(opts, ensemble.get(), evaluator->is_fake());
  auto table = results::load_table(**db, key, &*tasks, a.suite);
  if (!table) return bench_fail(table.error().message, 3);
  std::printf("%s", results::markdown(*table).c_str());
  if (!a.out.empty()) {
    if (auto st = results::write_outputs({*table}, a.out); !st) return bench_fail(st.error().message, 3);
    std::fprintf(stderr, "kevo bench: wrote %s/bench.md, bench.csv, bench.json\n", a.out.c_str());
  }
  if (a.campaign.empty())
    std::fprintf(stderr, "kevo bench: %d started, %d resumed, %d skipped (already done), PyTorch timed for %d\n",
                 out->started, out->resumed, out->skipped, out->torch_timed);
  for (const auto& e : out->errors) std::fprintf(stderr, "kevo bench: %s\n", e.c_str());
  if (out->interrupted) {
    std::fprintf(stderr, "kevo bench: interrupted; run the same command again to resume\n");
    return 130;
  }
  return out->errors.empty() ? 0 : 1;
}

int table_cmd(const std::vector<std::string>& sources, const std::string& out_dir, const std::string& format) {
  std::vector<results::BenchTable> ts;
  for (const auto& s : sources) {
    auto t = results::load_tables(s);
    if (!t) {
      std::fprintf(stderr, "kevo bench table: %s\n", t.error().message.c_str());
      return 2;
    }
    for (auto& x : *t) ts.push_back(std::move(x));
  }
  if (format == "csv") std::printf("%s", results::compare_csv(ts).c_str());
  else if (format == "json") {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& t : ts) arr.push_back(t.to_json());
    std::printf("%s\n", nlohmann::json{{"kevo_bench", 1}, {"tables", arr}}.dump(2).c_str());
  } else {
    std::printf("%s", results::compare_markdown(ts).c_str());
  }
  if (!out_dir.empty()) {
    if (auto st = results::write_outputs(ts, out_dir); !st) {
      std::fprintf(stderr, "kevo bench table: %s\n", st.error().message.c_str());
      return 2;
    }
  }
  return 0;
}

}  // namespace

void register_bench(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "bench",
      "Run `kevo evolve` over every task of a suite into one database (resumable), then write the table.\n"
      "Exit codes: 0 all tasks ran, 1 some could not be run, 2 bad arguments, 3 failure, 130 interrupted.");
  auto a = std::make_shared<BenchArgs>();
  cmd->add_option("--suite", a->suite, "Bundled suite name (quick, full) or a suite file");
  cmd->add_option("--strategy", a->strategy, "Strategy preset (see kevo evolve --help)");
  cmd->add_option("--model", a->models, "Model spec (repeat for an ensemble); none: offline tuning");
  cmd->add_option("--db", a->db, "Run database (default $KEVO_DB or ~/.local/share/kevo/runs.db)");
  cmd->add_option("--mutator", a->mutator,
                  "single or agent (each proposal a tool-using episode); changes the strategy's name (NAME+agent), "
                  "so the two are separate tables to compare")
      ->check(CLI::IsMember({"single", "agent"}));
  cmd->add_option("--budget-tokens", a->budget_tokens, "LLM tokens per task (input + output, every turn counted)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 50));
  cmd->add_option("--budget-candidates", a->budget_candidates, "Candidates per task (default: the strategy's)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--parallel", a->parallel, "Proposals in flight")->check(CLI::Range(1, 256));
  cmd->add_option("--out", a->out, "Write bench.md, bench.csv and bench.json into this folder");
  cmd->add_option("-c,--config", a->config_file, "TOML file: [llm] and [evolve] tables")->check(CLI::ExistingFile);
  cmd->add_option("--llm", a->llm_mode, "LLM answers: live, cache (default) or replay");
  cmd->add_option("--seed", a->seed, "Seed for parent and operator choices");
  cmd->add_option("--seeds", a->seeds, "Checker seeds per configuration during the search (default 3)")
      ->check(CLI::Range(1, 100));
  cmd->add_option("--time-budget", a->time_budget, "Seconds per timing session")->check(CLI::Range(0.1, 600.0));
  add_pool_options(cmd, a->pool);
  cmd->add_option("--campaign", a->campaign,
                  "One budget over the whole suite, UNIT:TOTAL (candidates:400, tokens:2000000, usd:5): slices go "
                  "to the tasks with the most headroom and recent progress; see docs/SUITE.md");
  cmd->add_option("--campaign-slice", a->campaign_slice, "Candidates per campaign slice (default 5)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--stop-at-sol", a->stop_at_sol,
                  "Stop a task once its best is within this fraction of its speed-of-light floor (campaign default 0.85)")
      ->check(CLI::Range(0.01, 1.0));
  cmd->add_flag("--flat", a->flat, "With --campaign: equal shares in turn and no early stop (the comparison)");
  cmd->add_flag("--quiet", a->quiet, "No status line");
  cmd->add_flag("--no-torch-time", a->no_torch_time,
                "Do not time tasks' PyTorch side (eager, torch.compile, extension) for the vs-PyTorch columns");
  cmd->add_flag("--fake-gpu", a->fake_gpu, "Test only: verdicts from '// fake:' markers, no GPU")->group("");

  auto* table = cmd->add_subcommand("table", "Tables of recorded runs, side by side (strategies, models)");
  struct TableArgs {
    std::vector<std::string> sources;
    std::string out, format = "md";
  };
  auto ta = std::make_shared<TableArgs>();
  table->add_option("sources", ta->sources, "Run databases, bench JSON files or --out folders")->required();
  table->add_option("--out", ta->out, "Also write bench.md, bench.csv and bench.json here");
  table->add_option("--format", ta->format, "Printed format: md, csv or json")
      ->check(CLI::IsMember({"md", "csv", "json"}));
  table->callback([ta, &exit_code] { exit_code = table_cmd(ta->sources, ta->out, ta->format); });
  cmd->callback([a, cmd, table, &exit_code] {
    if (table->parsed()) return;
    exit_code = run_bench_cmd(*a, cmd);
  });

}

}  // namespace kevo::cli
