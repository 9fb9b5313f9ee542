#include "serve/documents.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "results/metrics.h"
#include "results/stored_json.h"
#include "results/table.h"
#include "results/verdict_view.h"
#include "serve/run_summary.h"
#include "util/fs.h"

namespace kevo::serve {

using nlohmann::json;

namespace {

json candidate_summary(const store::CandidateRow& c, const results::CandidateFigures& f) {
  return {{"id", c.id}, {"seq", c.seq}, {"op", c.op}, {"parents", c.parents}, {"model", c.model},
          {"name", c.name}, {"outcome", to_string(c.outcome)}, {"reason", c.reason}, {"message", c.message},
          {"speedup", c.speedup}, {"speedup_ci", {c.speedup_lo, c.speedup_hi}}, {"time_ms", c.time_ms},
          {"accepted", c.accepted}, {"generation", c.generation}, {"island", c.island},
          {"compiled", f.compiled}, {"device", f.device},
          {"eval_s", f.eval_s}, {"sol_fraction", f.sol_fraction}, {"created_at", c.created_at}};
}

// ?outcome= read once: "" every candidate, "fail" every one but a pass, else the candidates of one
// outcome (its stored text; text this build does not know selects none).
struct OutcomeFilter {
  enum class Kind { kAll, kFailed, kOne, kNothing } kind = Kind::kAll;
  store::CandidateOutcome one = store::CandidateOutcome::kUnknown;

  explicit OutcomeFilter(const std::string& text) {
    if (text.empty()) return;
    if (text == "fail") {
      kind = Kind::kFailed;
    } else if (auto o = store::parse_candidate_outcome(text)) {
      kind = Kind::kOne, one = *o;
    } else {
      kind = Kind::kNothing;
    }
  }
  bool matches(const store::CandidateRow& c) const {
    switch (kind) {
      case Kind::kAll: return true;
      case Kind::kFailed: return !c.passed();
      case Kind::kOne: return c.outcome == one;
      case Kind::kNothing: return false;
    }
    return false;
  }
};

// The campaign: per strategy/model, the latest run of each task and bench's aggregates over them.
json campaign_json(const std::vector<std::pair<store::RunRow, results::TaskResult>>& runs) {
  std::vector<results::RunKey> keys;
  std::map<std::pair<size_t, std::string>, const results::TaskResult*> latest;  // (key, task) -> result
  for (const auto& [row, r] : runs) {
    auto k = results::key_of(row);
    size_t ki = std::find(keys.begin(), keys.end(), k) - keys.begin();
    if (ki == keys.size()) keys.push_back(k);
    latest[{ki, row.task}] = &r;  // runs come in id order: the last one wins
  }
  json out = json::array();
  for (size_t ki = 0; ki < keys.size(); ++ki) {
    std::vector<results::TaskResult> tasks;
    for (const auto& [key, r] : latest)
      if (key.first == ki) tasks.push_back(*r);
    const auto a = results::aggregate(tasks);
    out.push_back({{"label", keys[ki].label()}, {"strategy", keys[ki].strategy}, {"llm", keys[ki].llm},
                   {"fake", keys[ki].fake}, {"tasks", a.tasks}, {"correct", a.correct}, {"not_run", a.not_run},
                   {"median", a.median}, {"geomean", a.geomean}, {"fast_1", a.fast_1},
                   {"validity", a.validity_rate}, {"compile", a.compile_rate}, {"candidates", a.candidates},
                   {"llm_calls", a.llm_calls}, {"tokens", a.tokens}, {"cost_usd", a.cost_usd},
                   {"display",
                    {{"median", results::fmt_speedup(a.median)}, {"geomean", results::fmt_speedup(a.geomean)},
                     {"fast_1", results::fmt_pct(a.fast_1)}, {"validity", results::fmt_pct(a.validity_rate)},
                     {"compile", results::fmt_pct(a.compile_rate)}, {"cost", results::fmt_usd(a.cost_usd)}}}});
  }
  return out;
}

const char* op_name(report::DiffOp op) {
  switch (op) {
    case report::DiffOp::kSame: return "same";
    case report::DiffOp::kRemoved: return "removed";
    case report::DiffOp::kAdded: return "added";
  }
  return "same";
}

// The verdict's timing in a few named figures: the candidate's median and its 95% interval, the
// baseline's, the speedup and its interval, the speed-of-light fraction.
json timing_json(const results::VerdictView& v) {
  if (!v.timing) return nullptr;
  const results::TimingView& t = *v.timing;
  auto interval = [](const std::optional<std::pair<double, double>>& ci) {
    return ci ? json::array({ci->first, ci->second}) : json(nullptr);
  };
  return {{"config", t.config},
          {"time_ms", t.candidate.median_ms},
          {"time_ci_ms", interval(t.candidate.median_ci_ms)},
          {"samples", t.candidate.n},
          {"cv", t.candidate.cv},
          {"baseline_ms", t.baseline ? t.baseline->median_ms : 0.0},
          {"speedup", t.speedup},
          {"speedup_ci", interval(t.speedup_ci95)},
          {"sol_fraction", t.sol_fraction},
          {"floor_ms", t.floor_ms},
          {"bound", t.bound},
          {"outside_clock", t.outside_clock}};
}

}  // namespace

Result<json> runs_doc(RunCache& cache, double now) {
  auto rows = cache.db().list_runs();
  if (!rows) return rows.unexpected();
  json runs = json::array();
  std::vector<std::pair<store::RunRow, results::TaskResult>> results;
  for (const auto& row : *rows) {
    KEVO_TRY(cache.with_run(row.id, [&](const RunData& d) {
      runs.push_back(run_brief(d, now));
      results.emplace_back(d.run, task_result(d));
    }));
  }
  return json{{"database", cache.db().where()}, {"generated_at", now}, {"runs", runs},
              {"campaign", campaign_json(results)}};
}

json candidates_doc(const RunData& d, const ListQuery& q) {
  const OutcomeFilter filter(q.outcome);
  std::vector<size_t> picked;
  for (size_t i = 0; i < d.candidates.size(); ++i)
    if (filter.matches(d.candidates[i])) picked.push_back(i);
  if (q.newest_first) std::reverse(picked.begin(), picked.end());
  json list = json::array();
  for (size_t k = size_t(std::max<int64_t>(q.offset, 0)); k < picked.size() && int64_t(list.size()) < q.limit; ++k)
    list.push_back(candidate_summary(d.candidates[picked[k]], d.figures[picked[k]]));
  return {{"run", d.run.id}, {"total", picked.size()}, {"offset", q.offset}, {"limit", q.limit},
          {"order", q.newest_first ? "desc" : "asc"}, {"outcome", q.outcome}, {"candidates", list}};
}

Result<json> events_doc(store::RunDb& db, int64_t run_id, int64_t after, int64_t limit, bool tail) {
  auto ev = db.events(run_id);
  if (!ev) return ev.unexpected();
  auto first = std::partition_point(ev->begin(), ev->end(), [&](const store::EventRow& e) { return e.id <= after; });
  if (tail && ev->end() - first > limit) first = ev->end() - limit;
  json list = json::array();
  for (auto it = first; it != ev->end() && int64_t(list.size()) < limit; ++it) {
    json data = json::parse(it->data_json, nullptr, false);
    list.push_back({{"id", it->id}, {"t", it->t}, {"kind", it->kind},
                    {"data", data.is_discarded() ? json(it->data_json) : data}});
  }
  return json{{"run", run_id}, {"total", ev->size()}, {"last_id", ev->empty() ? 0 : ev->back().id},
              {"events", list}};
}

json CandidateDoc::to_json() const {
  const auto& c = row;
  const json verdict = results::parse_object(c.verdict_json);
  const results::VerdictView view = results::verdict_view(verdict);
  json flags = json::parse(c.flags_json, nullptr, false);
  if (flags.is_discarded()) flags = json::array();
  json lines = json::array();
  int added = 0, removed = 0;
  for (const auto& l : diff) {
    added += l.op == report::DiffOp::kAdded;
    removed += l.op == report::DiffOp::kRemoved;
    lines.push_back({{"op", op_name(l.op)}, {"left", l.left}, {"right", l.right}, {"text", l.text}});
  }
  return {{"id", c.id}, {"run", c.run_id}, {"seq", c.seq}, {"generation", c.generation}, {"island", c.island},
          {"repair_round", c.repair_round}, {"op", c.op}, {"parents", c.parents}, {"model", c.model},
          {"name", c.name}, {"rationale", c.rationale}, {"outcome", to_string(c.outcome)}, {"reason", c.reason},
          {"message", c.message}, {"speedup", c.speedup}, {"speedup_ci", {c.speedup_lo, c.speedup_hi}},
          {"time_ms", c.time_ms}, {"accepted", c.accepted}, {"created_at", c.created_at},
          {"source", c.source}, {"prompt", c.prompt}, {"answer", c.answer},
          {"compile", results::parse_object(c.compile_json)}, {"features", results::parse_object(c.features_json)},
          {"flags", flags},
          {"verdict", verdict}, {"configs", results::member(verdict, "configs")}, {"timing", timing_json(view)},
          {"diff", {{"against", parent_label}, {"added", added}, {"removed", removed}, {"lines", lines}}}};
}

Result<CandidateDoc> candidate_doc(store::RunDb& db, const store::RunRow& run, int64_t id) {
  auto c = db.candidate(id);
  if (!c) return c.unexpected();
  if (c->run_id != run.id) return fail("run {} has no candidate {}", run.id, id);
  CandidateDoc doc;
  doc.row = std::move(*c);
  if (!doc.row.parents.empty()) {
    auto p = db.candidate(doc.row.parents.front());
    if (p) {
      doc.parent_label = "parent #" + std::to_string(p->id);
      doc.parent_source = std::move(p->source);
    }
  } else if (auto base = read_file(std::filesystem::path(run.task_dir) / "baseline.cu"); base) {
    doc.parent_label = "baseline";
    doc.parent_source = std::move(*base);
  }
  if (!doc.parent_label.empty()) doc.diff = report::line_diff(doc.parent_source, doc.row.source);
  return doc;
}

}  // namespace kevo::serve
