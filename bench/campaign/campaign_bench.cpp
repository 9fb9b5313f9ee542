// kevo-campaign-bench: the SOL-guided campaign budget against a flat one at the same total, on a
// CPU: four tasks whose proposals are drawn from recorded outcome distributions (outcomes.json,
// scripted_model.h), evaluated by the marker evaluator. Two tasks reach 85% of their floor within
// a few candidates; two have headroom that more candidates keep finding. Prints, per seed, each
// campaign's report and the per-task comparison, then the means over the seeds.
//
//   kevo-campaign-bench [--outcomes bench/campaign/outcomes.json] [--total 120] [--slice 5] [--seeds 5]
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "bench/campaign.h"
#include "evolve/marker_evaluator.h"
#include "results/metrics.h"
#include "results/table.h"
#include "scripted_model.h"
#include "task/task.h"

namespace {

using namespace kevo;
namespace fs = std::filesystem;

struct Args {
  std::string outcomes = std::string(KEVO_SOURCE_DIR) + "/bench/campaign/outcomes.json";
  double total = 120;
  int slice = 5, seeds = 5;
};

struct TaskFigures {
  int64_t candidates = 0, tokens = 0;
  std::optional<double> speedup, sol;
  std::string stop;
};

struct ModeResult {
  std::map<std::string, TaskFigures> tasks;
  std::string markdown;
  double geomean = 0;
};

fs::path make_tasks(const fs::path& dir, const campaign::Script& script) {
  for (const auto& [name, t] : script.tasks) {
    fs::create_directories(dir / name);
    std::ofstream(dir / name / "task.toml") << campaign::task_toml(name, t.category);
    std::ofstream(dir / name / "baseline.cu") << campaign::kernel(name, -1, {1, 2.0, ""});
    std::ofstream(dir / name / "reference.cpp") << "#include <kevo/reference.h>\n";
  }
  return dir;
}

ModeResult run_mode(const Args& a, const campaign::Script& script, bool flat, uint64_t seed, const fs::path& dir) {
  const fs::path tasks = make_tasks(dir / "tasks", script);
  auto db = store::RunDb::open((dir / "runs.db").string());
  if (!db) throw std::runtime_error(db.error().message);
  evolve::MarkerEvaluator eval;
  campaign::ScriptedModel model(script, seed);
  llm::CancelToken cancel;
  bench::BenchSetup s;
  for (const auto& [name, t] : script.tasks) s.tasks.push_back(name);
  s.load_task = [tasks](const std::string& n) { return load_task(tasks / n); };
  auto preset = evolve::preset("kevo-default");
  s.options.strategy = *preset;
  s.options.strategy.parallel = 1;
  s.options.strategy.repair_rounds = 0;
  s.options.seed = seed;
  s.options.work_dir = dir / "work";
  s.evaluator = &eval;
  s.llm = &model;
  s.cancel = &cancel;
  bench::CampaignOptions c;
  c.total = a.total, c.slice = a.slice, c.flat = flat;
  auto r = bench::run_campaign(**db, s, c);
  if (!r) throw std::runtime_error(r.error().message);
  ModeResult out;
  out.markdown = bench::campaign_markdown(**db, *r);
  std::vector<double> speedups;
  for (const auto& t : r->tasks) {
    TaskFigures f{t.candidates, t.tokens, std::nullopt, std::nullopt, bench::to_string(t.stop)};
    auto run = (*db)->get_run(t.run_id);
    auto cands = (*db)->candidates(t.run_id);
    auto tot = (*db)->totals(t.run_id);
    if (run && cands && tot) {
      auto tr = results::task_result(*run, *cands, *tot);
      f.speedup = tr.speedup, f.sol = tr.sol_fraction;
    }
    speedups.push_back(f.speedup.value_or(1.0));  // no verified winner: the baseline stands
    out.tasks[t.task] = f;
  }
  out.geomean = results::geomean(speedups);
  return out;
}

std::string opt_x(const std::optional<double>& v) { return results::fmt_speedup(v); }
std::string opt_pct(const std::optional<double>& v) { return v ? results::fmt_pct(*v) : "-"; }

void print_comparison(const ModeResult& flat, const ModeResult& guided) {
  std::printf("| task | flat: candidates | tokens | speedup | SOL | guided: candidates | tokens | speedup | SOL | stopped |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (const auto& [name, f] : flat.tasks) {
    const TaskFigures& g = guided.tasks.at(name);
    std::printf("| %s | %lld | %lld | %s | %s | %lld | %lld | %s | %s | %s |\n", name.c_str(),
                static_cast<long long>(f.candidates), static_cast<long long>(f.tokens), opt_x(f.speedup).c_str(),
                opt_pct(f.sol).c_str(), static_cast<long long>(g.candidates), static_cast<long long>(g.tokens),
                opt_x(g.speedup).c_str(), opt_pct(g.sol).c_str(), g.stop.c_str());
  }
  std::printf("geomean over all tasks (no winner: 1.0x): flat %.3fx, guided %.3fx\n\n", flat.geomean, guided.geomean);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--outcomes") a.outcomes = v;
    else if (k == "--total") a.total = std::stod(v);
    else if (k == "--slice") a.slice = std::stoi(v);
    else if (k == "--seeds") a.seeds = std::stoi(v);
    else throw std::runtime_error("unknown option " + k);
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) try {
  const Args a = parse(argc, argv);
  const campaign::Script script = campaign::load_script(a.outcomes);
  std::string tmpl = (fs::temp_directory_path() / "kevo-campaign-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp");
  const fs::path root = tmpl;
  std::map<std::string, std::pair<double, double>> spent;  // task -> mean candidates flat, guided
  double gflat = 0, gguided = 0;
  for (int seed = 1; seed <= a.seeds; ++seed) {
    const ModeResult flat = run_mode(a, script, true, seed, root / fmt::format("flat-{}", seed));
    const ModeResult guided = run_mode(a, script, false, seed, root / fmt::format("guided-{}", seed));
    std::printf("## seed %d\n\n%s\n%s\n", seed, flat.markdown.c_str(), guided.markdown.c_str());
    print_comparison(flat, guided);
    for (const auto& [n, f] : flat.tasks) {
      spent[n].first += double(f.candidates) / a.seeds;
      spent[n].second += double(guided.tasks.at(n).candidates) / a.seeds;
    }
    gflat += std::log(flat.geomean) / a.seeds, gguided += std::log(guided.geomean) / a.seeds;
  }
  std::printf("## over %d seeds (total %.0f candidates per campaign, slices of %d)\n\n", a.seeds, a.total, a.slice);
  std::printf("| task | mean candidates, flat | mean candidates, SOL-guided |\n| --- | --- | --- |\n");
  for (const auto& [n, p] : spent) std::printf("| %s | %.1f | %.1f |\n", n.c_str(), p.first, p.second);
  std::printf("geometric mean of the campaigns' geomean speedups: flat %.3fx, SOL-guided %.3fx\n", std::exp(gflat),
              std::exp(gguided));
  std::error_code ec;
  fs::remove_all(root, ec);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "kevo-campaign-bench: %s\n", e.what());
  return 1;
}
