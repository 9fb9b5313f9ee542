// Bench tables: the per-task results of one strategy/model in a run database, with aggregates,
// written as Markdown, CSV and JSON, and several tables side by side. Figures come from
// results/metrics.h only.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/metrics.h"
#include "store/run_db.h"
#include "util/result.h"

namespace kevo::results {

// What identifies the runs of one bench in a database: the strategy (offline-tuning when no model
// was configured), the model (or ensemble) name, and whether the marker evaluator stood in.
struct RunKey {
  std::string strategy, llm;
  bool fake = false;
  std::string label() const;  // "kevo-default / anthropic:claude-sonnet-4-5 (FAKE GPU)"
  bool operator==(const RunKey&) const = default;
};
RunKey key_of(const store::RunRow& run);

struct BenchTable {
  RunKey key;
  std::string suite;                 // empty: every task of the key found in the database
  std::string db;                    // the database the figures come from
  std::vector<TaskResult> tasks;
  Aggregates agg;
  nlohmann::json to_json() const;
};

// The latest run of `key` for each task. With `suite_tasks`, those tasks in that order (a task
// without a run is listed as missing); else every task the key has a run for, sorted by name.
Result<BenchTable> load_table(store::RunDb& db, const RunKey& key,
                              const std::vector<std::string>* suite_tasks = nullptr,
                              const std::string& suite = "");
// Every key with a run in the database, in order of first appearance.
Result<std::vector<RunKey>> keys_in(store::RunDb& db);
// A database path: one table per key in it. A bench JSON file (kevo bench --out), or a folder
// holding bench.json: the tables it names, reloaded from their database.
Result<std::vector<BenchTable>> load_tables(const std::string& db_or_run);

std::string markdown(const BenchTable& t);
std::string csv(const BenchTable& t);
// Several tables: one row per task, one speedup column per table, then the aggregates.
std::string compare_markdown(const std::vector<BenchTable>& ts);
std::string compare_csv(const std::vector<BenchTable>& ts);
// bench.md, bench.csv, bench.json in `dir` (a single table, or the comparison of several).
Status write_outputs(const std::vector<BenchTable>& ts, const std::filesystem::path& dir);

// Shared number formats (the report uses them too, so figures read the same everywhere).
std::string fmt_speedup(const std::optional<double>& s);  // "1.532x" or "-"
std::string fmt_ms(double ms);                            // "1.234" (4 significant digits) or "-"
std::string fmt_pct(double share);                        // "87.5%"
std::string fmt_usd(double usd);                          // "$0.1234"

}  // namespace kevo::results
