// `kevo runs`: the runs in the run database, one line each (docs/EVOLVE.md).
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/db_arg.h"
#include "evolve/engine.h"
#include "results/run_final.h"
#include "store/run_db.h"

namespace kevo::cli {

namespace {

std::string fmt_time(double unix_s) {
  std::time_t t = static_cast<std::time_t>(unix_s);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", std::localtime(&t));
  return buf;
}

// The held-out column: "-" before the run finished, then whether a winner was verified.
std::string held_out_text(const store::RunRow& r) {
  const results::RunFinal f = results::final_from_text(r.final_json);
  std::string verified = !f.recorded ? "-" : f.winner ? "ok" : "no winner";
  if (f.best_failed_held_out) verified = "best FAILED";
  if (evolve::run_was_fake(r)) verified += " FAKE";
  return verified;
}

int runs_cmd(const std::string& dbpath) {
  auto db = store::RunDb::open_read_only(db_or_default(dbpath));
  if (!db) {
    std::fprintf(stderr, "kevo runs: %s\n", db.error().message.c_str());
    return 2;
  }
  auto runs = (*db)->list_runs();
  if (!runs) {
    std::fprintf(stderr, "kevo runs: %s\n", runs.error().message.c_str());
    return 2;
  }
  std::printf("%-5s %-16s %-20s %-20s %-12s %6s %6s %8s %-10s\n", "run", "started", "task", "strategy", "status",
              "cands", "valid", "best", "held-out");
  bool any_fake = false;
  for (const auto& r : *runs) {
    auto t = (*db)->totals(r.id);
    any_fake |= evolve::run_was_fake(r);
    std::printf("%-5lld %-16s %-20s %-20s %-12s %6lld %6lld %8s %-10s\n", static_cast<long long>(r.id),
                fmt_time(r.created_at).c_str(), r.task.c_str(), r.strategy.c_str(), store::to_string(r.status),
                static_cast<long long>(t ? t->candidates : 0), static_cast<long long>(t ? t->valid : 0),
                r.best_speedup > 0 ? fmt::format("{:.3f}x", r.best_speedup).c_str() : "-", held_out_text(r).c_str());
  }
  if (any_fake) std::printf("FAKE: a --fake-gpu run: its verdicts and speedups come from '// fake:' markers, no kernel was run\n");
  return 0;
}

}  // namespace

void register_runs(CLI::App& app, int& exit_code) {
  auto* runs = app.add_subcommand("runs", "List the runs in the run database");
  auto runs_db = std::make_shared<std::string>();
  runs->add_option("--db", *runs_db, "Run database");
  runs->callback([runs_db, &exit_code] { exit_code = runs_cmd(*runs_db); });
}

}  // namespace kevo::cli
