#include "evolve/archive_record.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "archive/fingerprint.h"
#include "archive/retrieval.h"
#include "archive/source_diff.h"
#include "results/verdict_view.h"
#include "task/dtype.h"

namespace kevo::evolve {

namespace {

std::string dims_text(const Task& task, const Config& c) {
  std::string s;
  for (size_t i = 0; i < task.dims.size(); ++i) {
    auto it = c.dims.find(task.dims[i]);
    s += fmt::format("{}{}={}", i ? ", " : "", task.dims[i], it == c.dims.end() ? 0 : it->second);
  }
  return s;
}

store::HeldOut held_out_of(const RunOutcome& out, int64_t candidate) {
  for (const auto& a : out.verification)
    if (a.candidate == candidate)
      return a.outcome == Outcome::Pass ? store::HeldOut::kPassed : store::HeldOut::kFailed;
  return store::HeldOut::kNotChecked;
}

// The entry of one candidate of this run, measured as the search (or, for the winner, held-out
// verification) measured it.
store::ArchiveRow entry_of(const RunState& s, const store::CandidateRow& c, store::ArchiveKind kind) {
  store::ArchiveRow r;
  r.kind = kind;
  r.task = s.task.name;
  r.gpu = s.ctx.gpu.empty() ? "unknown GPU" : s.ctx.gpu;
  r.arch = s.ctx.arch;
  r.config = fmt::format("{} ({})", s.task.main().name, dims_text(s.task, s.task.main()));
  r.features_json = task_features(s.task, s.ctx).to_json().dump();
  r.name = c.name;
  r.rationale = c.rationale;
  r.source = c.source;
  r.run_id = c.run_id;
  r.candidate_id = c.id;
  r.parent_id = c.parents.empty() ? 0 : c.parents[0];
  auto parent = r.parent_id ? s.rows.find(r.parent_id) : s.rows.end();
  r.diff = archive::source_diff(parent != s.rows.end() ? parent->second.source : s.ctx.baseline_code, c.source);
  r.speedup = c.speedup, r.speedup_lo = c.speedup_lo, r.speedup_hi = c.speedup_hi;
  r.time_ms = c.time_ms;
  r.baseline_ms = s.ctx.baseline_ms;
  if (s.ctx.sol_floor_ms > 0 && s.ctx.baseline_ms > 0) r.sol_before = s.ctx.sol_floor_ms / s.ctx.baseline_ms;
  r.sol_after = results::verdict_view(c.verdict_json).sol_fraction();
  r.fake = s.ev.is_fake();
  r.origin = fmt::format("run {} of {}", c.run_id, s.db.where());
  return r;
}

// New bests in completion order that beat the best before them by kNotableStep.
std::vector<const store::CandidateRow*> notable(const RunState& s) {
  std::vector<const store::CandidateRow*> out;
  double best = 1.0;
  for (int64_t id : s.order) {
    const auto& c = s.rows.at(id);
    if (!c.accepted || !c.passed() || c.speedup < best * kNotableStep) continue;
    best = c.speedup;
    out.push_back(&c);
  }
  return out;
}

}  // namespace

archive::TaskFeatures task_features(const Task& task, const TaskContext& ctx) {
  archive::TaskFeatures f;
  f.op_kind = task.category;
  std::set<std::string> dtypes;
  for (const auto* list : {&task.inputs, &task.outputs})
    for (const auto& t : *list) dtypes.insert(dtype_name(t.dtype));
  f.dtypes.assign(dtypes.begin(), dtypes.end());
  f.bound = ctx.sol_bound;
  for (const auto& c : task.configs)
    if (!c.held_out) f.shapes.push_back(fmt::format("{}: {}", c.name, dims_text(task, c)));
  if (auto r = task.resolve(task.main()))
    for (const auto* list : {&r->inputs, &r->outputs})
      for (const auto& t : *list) f.main_elements += static_cast<double>(t.numel);
  return f;
}

void archive_run(RunState& s, const RunOutcome& out) {
  std::vector<store::ArchiveRow> rows;
  for (const auto* c : notable(s)) {
    store::ArchiveRow r = entry_of(s, *c, store::ArchiveKind::kImprovement);
    r.held_out = held_out_of(out, c->id);
    if (c->id == out.winner) {
      r.kind = store::ArchiveKind::kWinner;
      r.speedup = out.winner_speedup;  // re-timed on held-out verification: the winner's figure
      if (r.sol_before > 0) r.sol_after = r.sol_before * r.speedup;
    }
    rows.push_back(std::move(r));
  }
  // A winner that was never a notable step (a runner-up, or a small gain) is archived all the same.
  if (out.winner && std::none_of(rows.begin(), rows.end(), [&](const auto& r) { return r.candidate_id == out.winner; })) {
    store::ArchiveRow r = entry_of(s, s.rows.at(out.winner), store::ArchiveKind::kWinner);
    r.held_out = store::HeldOut::kPassed;
    r.speedup = out.winner_speedup;
    if (r.sol_before > 0) r.sol_after = r.sol_before * r.speedup;
    rows.push_back(std::move(r));
  }
  for (auto& r : rows) r.fingerprint = archive::fingerprint_of(r);
  if (rows.empty()) return;
  auto added = s.db.add_archive(rows);
  if (!added) s.emit("archive_error", {{"error", added.error().message}});
  else s.emit("archived", {{"entries", *added}, {"offered", rows.size()}});
}

std::vector<ArchiveExampleView> archive_examples(RunState& s) {
  archive::Query q;
  q.task = s.task.name;
  q.features = task_features(s.task, s.ctx);
  for (const auto& c : s.task.configs)
    if (c.held_out) q.held_out_configs.push_back(c.name);
  q.gpu = s.ctx.gpu;
  q.fake = s.ev.is_fake();
  q.source = s.ctx.baseline_code;
  const size_t k = static_cast<size_t>(std::max(0, s.opts.strategy.archive_shown));
  auto matches = archive::retrieve(s.db, q, k);
  std::vector<ArchiveExampleView> out;
  if (!matches) {
    s.emit("archive_error", {{"error", matches.error().message}});
    return out;
  }
  for (const auto& m : *matches) {
    const auto& e = m.entry;
    const auto f = archive::TaskFeatures::from_text(e.features_json);
    out.push_back({e.id, e.origin, e.task, f.op_kind, f.bound, fmt::format("{}", fmt::join(f.dtypes, ", ")), e.gpu,
                   e.config, e.name, e.rationale, e.diff, e.source, e.speedup, e.sol_before, e.sol_after,
                   store::to_string(e.kind)});
  }
  s.emit("archive_examples", {{"entries", out.size()}});
  return out;
}

}  // namespace kevo::evolve
