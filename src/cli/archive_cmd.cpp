// `kevo archive list|show|export|import`: the kernel archive kept in the run database (every run's
// held-out winner and notable improvements), and its exchange as JSONL (docs/SUITE.md, "The kernel
// archive").
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>

#include <fmt/format.h>

#include "archive/jsonl.h"
#include "archive/task_features.h"
#include "cli/commands.h"
#include "cli/db_arg.h"
#include "lint/suite.h"
#include "store/run_db.h"
#include "util/fs.h"

namespace kevo::cli {

namespace {

int archive_fail(const std::string& what, const std::string& msg) {
  std::fprintf(stderr, "kevo archive %s: %s\n", what.c_str(), msg.c_str());
  return 2;
}

std::string sol_text(double before, double after) {
  if (before <= 0 || after <= 0) return "-";
  return fmt::format("{:.0f}%->{:.0f}%", before * 100, after * 100);
}

int list_cmd(const std::string& db_arg, const std::string& task) {
  auto db = store::RunDb::open_read_only(db_or_default(db_arg));
  if (!db) return archive_fail("list", db.error().message);
  auto rows = (*db)->archive(false);
  if (!rows) return archive_fail("list", rows.error().message);
  std::printf("%-5s %-11s %-20s %-12s %-10s %-7s %-28s %8s %-11s %-11s %s\n", "id", "kind", "task", "op kind", "dtypes",
              "bound", "gpu", "speedup", "SOL", "held-out", "origin");
  int shown = 0;
  for (const auto& r : *rows) {
    if (!task.empty() && r.task != task) continue;
    const auto f = archive::TaskFeatures::from_text(r.features_json);
    std::printf("%-5lld %-11s %-20s %-12s %-10s %-7s %-28s %7.3fx %-11s %-11s %s%s\n", static_cast<long long>(r.id),
                store::to_string(r.kind), r.task.c_str(), f.op_kind.c_str(), fmt::format("{}", fmt::join(f.dtypes, ",")).c_str(),
                f.bound.empty() ? "-" : f.bound.c_str(), r.gpu.c_str(), r.speedup, sol_text(r.sol_before, r.sol_after).c_str(),
                store::to_string(r.held_out), r.origin.c_str(), r.fake ? " FAKE" : "");
    ++shown;
  }
  std::fprintf(stderr, "kevo archive: %d entries%s in %s\n", shown, task.empty() ? "" : (" of " + task).c_str(),
               (*db)->where().c_str());
  return 0;
}

int show_cmd(const std::string& db_arg, int64_t id) {
  auto db = store::RunDb::open_read_only(db_or_default(db_arg));
  if (!db) return archive_fail("show", db.error().message);
  auto r = (*db)->archive_entry(id);
  if (!r) return archive_fail("show", r.error().message);
  const auto f = archive::TaskFeatures::from_text(r->features_json);
  std::printf("archive entry %lld: %s of task %s%s\n", static_cast<long long>(r->id), store::to_string(r->kind),
              r->task.c_str(), r->fake ? " (FAKE: measured by the marker evaluator)" : "");
  std::printf("origin:    %s (candidate %lld, parent %lld)\n", r->origin.c_str(), static_cast<long long>(r->candidate_id),
              static_cast<long long>(r->parent_id));
  std::printf("features:  %s; %s; %s-bound; %.0f elements on the timed config\n", f.op_kind.c_str(),
              fmt::format("{}", fmt::join(f.dtypes, ", ")).c_str(), f.bound.empty() ? "?" : f.bound.c_str(), f.main_elements);
  for (const auto& s : f.shapes) std::printf("  shape    %s\n", s.c_str());
  std::printf("measured:  %s (%s), config %s\n", r->gpu.c_str(), r->arch.c_str(), r->config.c_str());
  std::printf("speedup:   %.3fx [%.3f, %.3f], %.4g ms against %.4g ms; SOL %s\n", r->speedup, r->speedup_lo,
              r->speedup_hi, r->time_ms, r->baseline_ms, sol_text(r->sol_before, r->sol_after).c_str());
  std::printf("held-out:  %s\n", store::to_string(r->held_out));
  std::printf("name:      %s\nidea:      %s\n", r->name.c_str(), r->rationale.c_str());
  std::printf("\n--- diff against its parent ---\n%s\n--- source ---\n%s\n", r->diff.c_str(), r->source.c_str());
  return 0;
}

int export_cmd(const std::string& db_arg, const std::string& file) {
  auto db = store::RunDb::open_read_only(db_or_default(db_arg));
  if (!db) return archive_fail("export", db.error().message);
  auto rows = (*db)->archive(true);
  if (!rows) return archive_fail("export", rows.error().message);
  const std::string text = archive::to_jsonl(*rows);
  if (file.empty() || file == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else if (auto st = write_file_atomic(file, text); !st) {
    return archive_fail("export", st.error().message);
  }
  std::fprintf(stderr, "kevo archive: exported %zu entries%s\n", rows->size(),
               file.empty() || file == "-" ? "" : (" to " + file).c_str());
  return 0;
}

// What an import brought that this machine cannot vouch for: tasks it does not bundle, and the GPUs
// the speedups were measured on.
void say_unknowns(const std::vector<store::ArchiveRow>& rows) {
  const auto bundled = bundled_tasks();
  const std::set<std::string> known(bundled.begin(), bundled.end());
  std::set<std::string> foreign;
  std::map<std::string, int> gpus;
  for (const auto& r : rows) {
    if (!known.count(r.task)) foreign.insert(r.task);
    ++gpus[r.gpu];
  }
  if (!foreign.empty())
    std::fprintf(stderr,
                 "kevo archive import: %zu task(s) this kevo does not bundle (%s): kept; retrieval matches their "
                 "entries by their features\n",
                 foreign.size(), fmt::format("{}", fmt::join(foreign, ", ")).c_str());
  std::string list;
  for (const auto& [g, n] : gpus) list += fmt::format("{}{} ({})", list.empty() ? "" : ", ", g, n);
  if (!list.empty())
    std::fprintf(stderr, "kevo archive import: measured on %s; a prompt names each example's GPU\n", list.c_str());
}

int import_cmd(const std::string& db_arg, const std::string& file) {
  auto rows = archive::read_jsonl(file);  // every line checked before the database is opened
  if (!rows) return archive_fail("import", rows.error().message);
  auto db = store::RunDb::open(db_or_default(db_arg));
  if (!db) return archive_fail("import", db.error().message);
  auto added = (*db)->add_archive(*rows);
  if (!added) return archive_fail("import", fmt::format("{}; nothing was imported", added.error().message));
  say_unknowns(*rows);
  std::fprintf(stderr, "kevo archive: imported %d of %zu entries from %s into %s (%zu archived already)\n", *added,
               rows->size(), file.c_str(), (*db)->where().c_str(), rows->size() - static_cast<size_t>(*added));
  return 0;
}

}  // namespace

void register_archive(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "archive",
      "The kernel archive: every run's verified winner and notable improvements, kept across runs and shown to "
      "later runs' prompts with --strategy kevo-archive (or info = [..., \"archive\"]).\n"
      "Exit codes: 0 done, 2 bad arguments or input (the file and line named), 3 failure.");
  cmd->require_subcommand(1);
  struct Args {
    std::string db, task, file;
    int64_t id = 0;
  };
  auto a = std::make_shared<Args>();
  auto db_opt = [&](CLI::App* c) {
    c->add_option("--db", a->db, "Run database (default $KEVO_DB or ~/.local/share/kevo/runs.db)");
  };
  auto* list = cmd->add_subcommand("list", "One line per entry: task, features, GPU, speedup, SOL before->after");
  db_opt(list);
  list->add_option("--task", a->task, "Only this task's entries");
  list->callback([a, &exit_code] { exit_code = list_cmd(a->db, a->task); });
  auto* show = cmd->add_subcommand("show", "An entry whole: origin, features, measurement, idea, diff, source");
  db_opt(show);
  show->add_option("id", a->id, "Entry id (kevo archive list)")->required();
  show->callback([a, &exit_code] { exit_code = show_cmd(a->db, a->id); });
  auto* exp = cmd->add_subcommand("export", "Every entry as JSON Lines, to FILE or stdout");
  db_opt(exp);
  exp->add_option("file", a->file, "Where to write (default: stdout)");
  exp->callback([a, &exit_code] { exit_code = export_cmd(a->db, a->file); });
  auto* imp = cmd->add_subcommand("import", "Entries from a JSONL file, all or none; entries archived already are skipped");
  db_opt(imp);
  imp->add_option("file", a->file, "A file kevo archive export wrote")->required();
  imp->callback([a, &exit_code] { exit_code = import_cmd(a->db, a->file); });
}

}  // namespace kevo::cli
