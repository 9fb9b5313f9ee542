#include "results/table.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>

#include "results/run_config.h"
#include "results/stored_json.h"
#include "util/fs.h"

namespace kevo::results {

using nlohmann::json;

namespace {

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

std::string csv_num(const std::optional<double>& v) { return v ? fmt::format("{:.6g}", *v) : ""; }

std::string md_cell(const std::string& s) {
  std::string o;
  for (char c : s) o += c == '|' ? std::string("\\|") : std::string(1, c);
  return o;
}

std::string share(int part, int whole) { return whole > 0 ? fmt_pct(double(part) / whole) : "-"; }

bool is_sqlite(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  char head[16] = {};
  f.read(head, sizeof head);
  return f.gcount() == 16 && std::string(head, 15) == "SQLite format 3";
}

}  // namespace

// A speedup of 0 is never a measurement (an aggregate over no task, a run that measured nothing).
std::string fmt_speedup(const std::optional<double>& s) { return s && *s > 0 ? fmt::format("{:.3f}x", *s) : "-"; }
std::string fmt_ms(double ms) { return ms > 0 ? fmt::format("{:.4g}", ms) : "-"; }
std::string fmt_pct(double share) { return fmt::format("{:.1f}%", share * 100); }
std::string fmt_usd(double usd) { return fmt::format("${:.4f}", usd); }

std::string RunKey::label() const {
  std::string s = strategy + " / " + (llm.empty() ? "no model" : llm);
  if (fake) s += " (FAKE GPU)";
  return s;
}

RunKey key_of(const store::RunRow& run) {
  const RunConfig cfg = config_from_text(run.config_json);
  return {run.strategy, cfg.llm, cfg.fake_evaluator};
}

json BenchTable::to_json() const {
  json ts = json::array();
  for (const auto& t : tasks)
    ts.push_back({{"task", t.task}, {"run", t.run_id}, {"status", t.status}, {"stop_reason", t.stop_reason},
                  {"verified", t.verified}, {"best_candidate", t.best_candidate},
                  {"baseline_ms", t.baseline_ms > 0 ? json(t.baseline_ms) : json(nullptr)},
                  {"best_ms", opt(t.best_ms)}, {"speedup", opt(t.speedup)},
                  {"speedup_vs_eager", opt(t.speedup_vs_eager)}, {"speedup_vs_compile", opt(t.speedup_vs_compile)},
                  {"speedup_vs_extension", opt(t.speedup_vs_extension)}, {"pytorch_eager_ms", opt(t.eager_ms)},
                  {"pytorch_compile_ms", opt(t.compile_ms)}, {"pytorch_extension_ms", opt(t.extension_ms)},
                  {"sol_fraction", opt(t.sol_fraction)},
                  {"candidates", t.candidates}, {"valid", t.valid}, {"compiled", t.compiled},
                  {"valid_share", t.candidates ? json(double(t.valid) / t.candidates) : json(nullptr)},
                  {"compiled_share", t.candidates ? json(double(t.compiled) / t.candidates) : json(nullptr)},
                  {"llm_calls", t.llm_calls}, {"tokens", t.tokens}, {"cost_usd", t.cost_usd}, {"fake", t.fake}});
  auto speed = [](double x) { return x > 0 ? json(x) : json(nullptr); };  // none measured: null, never 0
  json a = {{"tasks", agg.tasks}, {"correct", agg.correct}, {"not_run", agg.not_run}, {"unverified", agg.unverified},
            {"median_speedup", speed(agg.median)}, {"geomean_speedup", speed(agg.geomean)},
            {"mean_speedup", speed(agg.mean)}, {"median_speedup_all", speed(agg.median_all)},
            {"geomean_speedup_all", speed(agg.geomean_all)}, {"mean_speedup_all", speed(agg.mean_all)},
            {"fast_1", agg.fast_1}, {"fast_1.5", agg.fast_1_5}, {"fast_2", agg.fast_2}, {"slower", agg.slower},
            {"candidates", agg.candidates}, {"valid", agg.valid}, {"compiled", agg.compiled},
            {"validity_rate", agg.validity_rate}, {"compile_rate", agg.compile_rate},
            {"llm_calls", agg.llm_calls}, {"tokens", agg.tokens}, {"cost_usd", agg.cost_usd}};
  return {{"strategy", key.strategy}, {"model", key.llm}, {"fake_gpu", key.fake}, {"label", key.label()},
          {"suite", suite}, {"db", db}, {"tasks", ts}, {"aggregates", a}};
}

Result<std::vector<RunKey>> keys_in(store::RunDb& db) {
  auto runs = db.list_runs();
  if (!runs) return runs.unexpected();
  std::vector<const store::RunRow*> order;
  for (const auto& r : *runs) order.push_back(&r);
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->id < b->id; });
  std::vector<RunKey> keys;
  for (const auto* r : order) {
    RunKey k = key_of(*r);
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  }
  return keys;
}

Result<BenchTable> load_table(store::RunDb& db, const RunKey& key, const std::vector<std::string>* suite_tasks,
                              const std::string& suite) {
  auto runs = db.list_runs();
  if (!runs) return runs.unexpected();
  std::map<std::string, const store::RunRow*> latest;
  for (const auto& r : *runs) {
    if (!(key_of(r) == key)) continue;
    auto& slot = latest[r.task];
    if (!slot || r.id > slot->id) slot = &r;
  }
  BenchTable t;
  t.key = key;
  t.suite = suite;
  t.db = store::is_postgres_url(db.where()) ? db.where() : std::filesystem::absolute(db.where()).string();
  std::vector<std::string> names;
  if (suite_tasks) names = *suite_tasks;
  else
    for (const auto& [n, r] : latest) names.push_back(n);
  for (const auto& n : names) {
    auto it = latest.find(n);
    if (it == latest.end()) {
      t.tasks.push_back(missing_task(n));
      continue;
    }
    auto cands = db.candidates(it->second->id);
    if (!cands) return cands.unexpected();
    auto tot = db.totals(it->second->id);
    if (!tot) return tot.unexpected();
    t.tasks.push_back(task_result(*it->second, *cands, *tot));
  }
  t.agg = aggregate(t.tasks);
  return t;
}

Result<std::vector<BenchTable>> load_tables(const std::string& db_or_run) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = db_or_run;
  const bool url = store::is_postgres_url(db_or_run);  // a PostgreSQL run database
  if (!url && fs::is_directory(p, ec)) p /= "bench.json";
  if (!url && !fs::exists(p, ec)) return fail("{}: no such database or bench result", p.string());
  std::vector<BenchTable> out;
  if (url || is_sqlite(p)) {
    auto db = store::RunDb::open_read_only(p.string());
    if (!db) return db.unexpected();
    auto keys = keys_in(**db);
    if (!keys) return keys.unexpected();
    for (const auto& k : *keys) {
      auto t = load_table(**db, k);
      if (!t) return t.unexpected();
      out.push_back(std::move(*t));
    }
    if (out.empty()) return fail("{}: the database holds no runs", (*db)->where());
    return out;
  }
  auto text = read_file(p);
  if (!text) return text.unexpected();
  json j = json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("tables") || !j["tables"].is_array())
    return fail("{}: neither a run database nor a kevo bench JSON file", p.string());
  for (const auto& tj : j["tables"]) {
    std::string dbp = results::text(tj, "db");
    auto db = store::RunDb::open_read_only(dbp);
    if (!db) return fail("{}: its database {}: {}", p.string(), dbp, db.error().message);
    RunKey k{results::text(tj, "strategy"), results::text(tj, "model"), results::flag(tj, "fake_gpu")};
    std::vector<std::string> names;
    if (tj.contains("tasks") && tj["tasks"].is_array())
      for (const auto& x : tj["tasks"]) names.push_back(results::text(x, "task"));
    std::string suite = results::text(tj, "suite");
    auto t = load_table(**db, k, suite.empty() ? nullptr : &names, suite);
    if (!t) return t.unexpected();
    out.push_back(std::move(*t));
  }
  return out;
}

std::string markdown(const BenchTable& t) {
  std::string s = fmt::format("## {}{}\n\n", md_cell(t.key.label()), t.suite.empty() ? "" : " - suite " + t.suite);
  if (t.key.fake) s += "**FAKE GPU: verdicts came from `// fake:` markers; nothing was run on a GPU.**\n\n";
  // The extension column only where a task has a PyTorch extension baseline (EvoEngineer records).
  bool ext = std::any_of(t.tasks.begin(), t.tasks.end(), [](const TaskResult& r) { return r.extension_ms.has_value(); });
  s += fmt::format("| task | run | status | baseline ms | best ms | speedup | vs eager | vs torch.compile |{} SOL "
                   "| candidates | valid | compiled | tokens | cost |\n|---|---:|---|---:|---:|---:|---:|---:|{}---:|---:"
                   "|---:|---:|---:|---:|\n",
                   ext ? " vs extension |" : "", ext ? "---:|" : "");
  auto vs = [](const std::optional<double>& x) { return x ? fmt_speedup(x) : std::string("n/a"); };
  for (const auto& r : t.tasks) {
    std::string status = r.status;
    if (r.correct() && !r.verified) status += " (unverified)";
    s += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |{} {} | {} | {} | {} | {} | {} |\n", md_cell(r.task),
                     r.run_id ? std::to_string(r.run_id) : "-", status, fmt_ms(r.baseline_ms),
                     r.best_ms ? fmt_ms(*r.best_ms) : "-", fmt_speedup(r.speedup), vs(r.speedup_vs_eager),
                     vs(r.speedup_vs_compile), ext ? " " + vs(r.speedup_vs_extension) + " |" : "",
                     r.sol_fraction ? fmt_pct(*r.sol_fraction) : "-", r.candidates, share(r.valid, r.candidates),
                     share(r.compiled, r.candidates), r.tokens, fmt_usd(r.cost_usd));
  }
  const auto& a = t.agg;
  s += fmt::format(
      "\n| aggregate | value |\n|---|---:|\n"
      "| tasks with a correct candidate | {} of {} |\n"
      "| median speedup (correct tasks) | {} |\n| geometric mean speedup (correct tasks) | {} |\n"
      "| mean speedup (correct tasks) | {} |\n| correct tasks slower than their baseline | {} |\n"
      "| median / geomean / mean, unsolved as 1.0x | {} / {} / {} |\n"
      "| fast_1 | {} |\n| fast_1.5 | {} |\n| fast_2 | {} |\n"
      "| validity rate | {} ({} of {}) |\n| compile rate | {} ({} of {}) |\n"
      "| LLM calls | {} |\n| total tokens | {} |\n| total cost | {} |\n{}",
      a.correct, a.tasks, fmt_speedup(a.median), fmt_speedup(a.geomean), fmt_speedup(a.mean), a.slower,
      fmt_speedup(a.median_all), fmt_speedup(a.geomean_all), fmt_speedup(a.mean_all), fmt_pct(a.fast_1),
      fmt_pct(a.fast_1_5), fmt_pct(a.fast_2), fmt_pct(a.validity_rate), a.valid, a.candidates,
      fmt_pct(a.compile_rate), a.compiled, a.candidates, a.llm_calls, a.tokens, fmt_usd(a.cost_usd),
      (a.not_run ? fmt::format("| tasks NOT RUN (infrastructure: no GPU, baseline could not run, runner crash; "
                               "excluded above, retried by the next kevo bench) | {} |\n", a.not_run)
                 : std::string()) +
          (a.unverified ? fmt::format("| tasks with an unverified result (run not finished; counted as unsolved "
                                      "above, resumed by the next kevo bench) | {} |\n", a.unverified)
                        : std::string()));
  s += fmt::format(
      "\nfast_p: share of all tasks whose held-out-verified result is more than p times faster than the "
      "baseline (no correct candidate: not fast). vs eager / vs torch.compile{}: the task's PyTorch reference{} "
      "timed through the PyTorch bridge on the same GPU and inputs, over the result's time; n/a where not "
      "recorded (no PyTorch reference, no torch or CUDA, or the mode failed).\n",
      ext ? " / vs extension" : "", ext ? " (and its PyTorch extension baseline)" : "");
  return s;
}

std::string csv(const BenchTable& t) {
  std::string s =
      "strategy,model,fake_gpu,task,run,status,verified,baseline_ms,best_ms,speedup,speedup_vs_eager,"
      "speedup_vs_compile,speedup_vs_extension,sol_fraction,"
      "candidates,valid,compiled,valid_share,compiled_share,llm_calls,tokens,cost_usd\n";
  for (const auto& r : t.tasks)
    s += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.6f}\n", csv_field(t.key.strategy),
                     csv_field(t.key.llm), t.key.fake ? 1 : 0, csv_field(r.task), r.run_id, r.status,
                     r.verified ? 1 : 0, r.baseline_ms > 0 ? fmt::format("{:.6g}", r.baseline_ms) : "",
                     csv_num(r.best_ms), csv_num(r.speedup), csv_num(r.speedup_vs_eager),
                     csv_num(r.speedup_vs_compile), csv_num(r.speedup_vs_extension), csv_num(r.sol_fraction),
                     r.candidates, r.valid, r.compiled,
                     r.candidates ? fmt::format("{:.6g}", double(r.valid) / r.candidates) : "",
                     r.candidates ? fmt::format("{:.6g}", double(r.compiled) / r.candidates) : "", r.llm_calls,
                     r.tokens, r.cost_usd);
  return s;
}

namespace {
std::vector<std::string> union_tasks(const std::vector<BenchTable>& ts) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const auto& t : ts)
    for (const auto& r : t.tasks)
      if (seen.insert(r.task).second) names.push_back(r.task);
  return names;
}
const TaskResult* row_of(const BenchTable& t, const std::string& task) {
  for (const auto& r : t.tasks)
    if (r.task == task) return &r;
  return nullptr;
}
}  // namespace

std::string compare_markdown(const std::vector<BenchTable>& ts) {
  if (ts.size() == 1) return markdown(ts.front());
  std::string s = "## Comparison\n\n| task |";
  std::string rule = "|---|";
  for (size_t i = 0; i < ts.size(); ++i) {
    s += fmt::format(" [{0}] speedup | [{0}] tokens | [{0}] candidates |", i + 1);
    rule += "---:|---:|---:|";
  }
  s += "\n" + rule + "\n";
  // What each result cost beside it, so a search that spends more per winner shows it.
  for (const auto& n : union_tasks(ts)) {
    s += "| " + md_cell(n) + " |";
    for (const auto& t : ts) {
      const auto* r = row_of(t, n);
      s += r ? fmt::format(" {} | {} | {} |", fmt_speedup(r->speedup), r->tokens, r->candidates) : " - | - | - |";
    }
    s += "\n";
  }
  const std::string pad = " | | |";  // closes the value, then the empty tokens and candidates cells
  auto agg_row = [&](const char* name, auto f) {
    s += fmt::format("| **{}** |", name);
    for (const auto& t : ts) s += " " + f(t.agg) + pad;
    s += "\n";
  };
  agg_row("correct tasks", [](const Aggregates& a) { return fmt::format("{} of {}", a.correct, a.tasks); });
  agg_row("median", [](const Aggregates& a) { return fmt_speedup(a.median); });
  agg_row("geomean", [](const Aggregates& a) { return fmt_speedup(a.geomean); });
  agg_row("mean", [](const Aggregates& a) { return fmt_speedup(a.mean); });
  agg_row("slower than the baseline", [](const Aggregates& a) { return std::to_string(a.slower); });
  agg_row("fast_1", [](const Aggregates& a) { return fmt_pct(a.fast_1); });
  agg_row("fast_1.5", [](const Aggregates& a) { return fmt_pct(a.fast_1_5); });
  agg_row("fast_2", [](const Aggregates& a) { return fmt_pct(a.fast_2); });
  agg_row("validity rate", [](const Aggregates& a) { return fmt_pct(a.validity_rate); });
  agg_row("compile rate", [](const Aggregates& a) { return fmt_pct(a.compile_rate); });
  agg_row("tokens", [](const Aggregates& a) { return std::to_string(a.tokens); });
  agg_row("cost", [](const Aggregates& a) { return fmt_usd(a.cost_usd); });
  agg_row("tokens per correct task", [](const Aggregates& a) {
    return a.correct ? std::to_string(a.tokens / a.correct) : std::string("-");
  });
  agg_row("candidates per correct task", [](const Aggregates& a) {
    return a.correct ? fmt::format("{:.1f}", static_cast<double>(a.candidates) / a.correct) : std::string("-");
  });
  s += "\n";
  for (size_t i = 0; i < ts.size(); ++i)
    s += fmt::format("[{}] {} ({}{})\n", i + 1, md_cell(ts[i].key.label()), ts[i].db,
                     ts[i].suite.empty() ? "" : ", suite " + ts[i].suite);
  s += "\n";
  for (const auto& t : ts) s += markdown(t) + "\n";
  return s;
}

std::string compare_csv(const std::vector<BenchTable>& ts) {
  std::string s;
  for (size_t i = 0; i < ts.size(); ++i) {
    std::string c = csv(ts[i]);
    s += i == 0 ? c : c.substr(c.find('\n') + 1);  // one header
  }
  return s;
}

Status write_outputs(const std::vector<BenchTable>& ts, const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return fail("cannot create {}: {}", dir.string(), ec.message());
  json tables = json::array();
  for (const auto& t : ts) tables.push_back(t.to_json());
  json j = {{"kevo_bench", 1}, {"tables", tables}};
  KEVO_TRY(write_file_atomic(dir / "bench.md", compare_markdown(ts)));
  KEVO_TRY(write_file_atomic(dir / "bench.csv", compare_csv(ts)));
  KEVO_TRY(write_file_atomic(dir / "bench.json", j.dump(2) + "\n"));
  return {};
}

}  // namespace kevo::results
