// `kevo show RUN [--candidate ID] [--json]`: a run's candidates, held-out verification, the
// winner's lineage and kernel; or one candidate's prompt, answer, source and verdict (docs/EVOLVE.md).
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "check/kernel_profile.h"
#include "check/profile_diagnosis.h"
#include "cli/commands.h"
#include "cli/db_arg.h"
#include "evolve/task_context.h"
#include "results/candidate_ref.h"
#include "results/episode_view.h"
#include "results/verifier_matrix.h"
#include "store/run_db.h"

namespace kevo::cli {

namespace {

using nlohmann::json;

struct ShowArgs {
  std::string db;
  int64_t run = 0, candidate = 0;
  bool json = false;
};

// A stored JSON column as an object ({} when empty or unreadable).
json object_of(const std::string& text) {
  json j = json::parse(text.empty() ? "{}" : text, nullptr, false);
  return j.is_object() ? j : json::object();
}

// A stored JSON column as it is (null when empty).
json value_of(const std::string& text) { return json::parse(text.empty() ? "null" : text, nullptr, false); }

void show_profile(const store::CandidateRow& c) {
  auto v = json::parse(c.verdict_json.empty() ? "{}" : c.verdict_json, nullptr, false);
  if (!v.is_object() || !v.contains("profile")) return;
  auto p = profile_from_json(v["profile"]);
  if (!p) {
    std::printf("\n--- profile ---\n(unreadable: %s)\n", p.error().message.c_str());
    return;
  }
  std::string d = diagnose_profile(*p);
  std::printf("\n--- profile (Nsight Compute on config '%s'; advice, not part of the verdict) ---\n%s%s%s\n",
              p->config.c_str(), p->to_text().c_str(), d.empty() ? "" : "diagnosis: ", d.c_str());
}

// `kevo show RUN --candidate ID`: prompt, answer, source, and the profile when there is one.
void show_candidate(const store::CandidateRow& c, int64_t run, bool as_json) {
  if (as_json) {
    json j = {{"id", c.id}, {"seq", c.seq}, {"operator", c.op}, {"parents", c.parents}, {"model", c.model},
              {"prompt", c.prompt}, {"answer", c.answer}, {"source", c.source}, {"outcome", to_string(c.outcome)},
              {"reason", c.reason}, {"message", c.message}, {"verdict", value_of(c.verdict_json)}};
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::printf("candidate #%lld (run %lld, seq %d, %s, parents %s, model %s)\n", static_cast<long long>(c.id),
              static_cast<long long>(run), c.seq, c.op.c_str(), json(c.parents).dump().c_str(), c.model.c_str());
  std::printf("outcome: %s %s %s\n", to_string(c.outcome), c.reason.c_str(), c.message.c_str());
  if (c.speedup > 0) std::printf("speedup: %.3fx [%.3f, %.3f]\n", c.speedup, c.speedup_lo, c.speedup_hi);
  std::printf("\n--- prompt ---\n%s\n\n--- answer ---\n%s\n\n--- source ---\n%s\n", c.prompt.c_str(),
              c.answer.c_str(), c.source.c_str());
  show_profile(c);
}

// A model as 16 columns show it: the model's name, not the server's address it is reached at
// ("http://127.0.0.1:8080/v1#qwen" is "qwen"), its end where it is still too long.
std::string model_column(const std::string& model) {
  std::string m = model;
  if (auto hash = m.rfind('#'); hash != std::string::npos) m = m.substr(hash + 1);
  else if (m.find("://") != std::string::npos) m = m.substr(m.rfind('/') + 1);
  return m.size() <= 16 ? m : "~" + m.substr(m.size() - 15);
}

void show_run_json(store::RunDb& db, const store::RunRow& r, const std::vector<store::CandidateRow>& cands) {
  json cs = json::array();
  for (const auto& c : cands)
    cs.push_back({{"id", c.id}, {"seq", c.seq}, {"operator", c.op}, {"parents", c.parents},
                  {"generation", c.generation}, {"island", c.island}, {"model", c.model},
                  {"outcome", to_string(c.outcome)}, {"reason", c.reason}, {"speedup", c.speedup}, {"speedup_ci", {c.speedup_lo, c.speedup_hi}},
                  {"accepted", c.accepted}, {"name", c.name}});
  json j = {{"run", r.id}, {"task", r.task}, {"strategy", r.strategy}, {"status", store::to_string(r.status)},
            {"stop_reason", r.stop_reason}, {"best_candidate", r.best_candidate},
            {"best_speedup", r.best_speedup}, {"final", object_of(r.final_json)}, {"note", r.note},
            {"baseline", value_of(r.baseline_json)}, {"candidates", cs}};
  if (auto ev = db.events(r.id); ev) {
    if (auto m = results::verifier_matrix(*ev, cands); m.calls > 0) j["verifier"] = m.to_json();
    if (auto eps = results::episodes_of(*ev); !eps.empty()) {
      j["episodes"] = json::array();
      for (const auto& e : eps) j["episodes"].push_back(e.to_json());
    }
  }
  std::printf("%s\n", j.dump(2).c_str());
}

// The run's line, its baseline and the baseline's profile.
void show_header(const store::RunRow& r) {
  std::printf("run %lld  task %s  strategy %s  %s%s%s\n", static_cast<long long>(r.id), r.task.c_str(),
              r.strategy.c_str(), store::to_string(r.status), r.stop_reason.empty() ? "" : "  stop: ",
              r.stop_reason.c_str());
  json base = json::parse(r.baseline_json.empty() ? "{}" : r.baseline_json, nullptr, false);
  if (base.is_object() && base.contains("time_ms"))
    std::printf("baseline %.4g ms on %s%s\n", base.value("time_ms", 0.0), base.value("gpu", "?").c_str(),
                base.value("fake_evaluator", false) ? "  (FAKE evaluator: nothing was run on a GPU)" : "");
  if (auto a = evolve::profile_advice(r.baseline_json); !a.diagnosis.empty() || !a.not_profiled.empty())
    std::printf("baseline profile: %s\n", (a.diagnosis.empty() ? "not profiled: " + a.not_profiled : a.diagnosis).c_str());
  if (!r.note.empty()) std::printf("note: %s\n", r.note.c_str());
}

void show_candidate_table(const std::vector<store::CandidateRow>& cands) {
  std::printf("\n%-6s %-4s %-10s %-12s %-4s %-3s %-16s %-15s %-20s %-22s\n", "id", "seq", "operator", "parents", "gen",
              "isl", "model", "outcome", "reason", "speedup [95% CI]");
  for (const auto& c : cands) {
    std::string parents;
    for (auto p : c.parents) parents += (parents.empty() ? "" : ",") + std::to_string(p);
    std::string sp = c.speedup > 0 ? fmt::format("{:.3f}x [{:.3f},{:.3f}]{}", c.speedup, c.speedup_lo, c.speedup_hi,
                                                 c.accepted ? " *" : "")
                                   : "-";
    std::printf("%-6lld %-4d %-10s %-12s %-4d %-3d %-16.16s %-15s %-20.20s %-22s\n", static_cast<long long>(c.id),
                c.seq, c.op.c_str(), parents.empty() ? "baseline" : parents.c_str(), c.generation, c.island,
                model_column(c.model).c_str(), to_string(c.outcome), c.reason.c_str(), sp.c_str());
  }
  std::printf("(* = became the best, with confidence)\n");
}

void show_held_out(const json& f, const std::vector<store::CandidateRow>& cands) {
  if (!f.contains("attempts")) return;
  std::printf("\nheld-out re-verification (fresh seed):\n");
  for (const auto& at : f["attempts"])
    std::printf("  %s: %s %s %s%s\n", results::candidate_ref(cands, at.value("candidate", int64_t{0})).c_str(),
                at.value("outcome", "").c_str(), at.value("reason", "").c_str(), at.value("message", "").c_str(),
                at.value("speedup", 0.0) > 0 ? fmt::format("  re-timed {:.3f}x", at.value("speedup", 0.0)).c_str() : "");
  if (f.value("best_failed_held_out", false)) std::printf("  the best candidate FAILED held-out verification\n");
}

void show_winner_pytorch(const json& f) {
  if (!f.contains("winner_pytorch") || !f["winner_pytorch"].contains("pytorch")) return;
  const auto& w = f["winner_pytorch"];
  const auto& pt = w["pytorch"];
  std::string line;
  for (const auto& [mode, label] : {std::pair{"eager", "eager"}, {"compile", "torch.compile"}, {"extension", "extension"}}) {
    std::string ms = std::string(mode) + "_ms", sp = std::string("speedup_vs_") + mode;
    if (!pt.contains(ms) || !pt[ms].is_number()) continue;
    line += fmt::format("{}{} {:.4f} ms", line.empty() ? "" : ", ", label, pt[ms].get<double>());
    if (w.contains(sp) && w[sp].is_number()) line += fmt::format(" (winner {:.2f}x)", w[sp].get<double>());
  }
  if (!line.empty()) std::printf("the winner vs PyTorch (same GPU, same inputs): %s\n", line.c_str());
}

const store::CandidateRow* find_candidate(const std::vector<store::CandidateRow>& cands, int64_t id) {
  for (const auto& c : cands)
    if (c.id == id) return &c;
  return nullptr;
}

// The winner's (else the best's) lineage back to the baseline, its idea, profile and source.
void show_lineage(const std::vector<store::CandidateRow>& cands, int64_t shown, bool is_winner) {
  // Lineage: follow the first parent back to the baseline.
  std::string chain;
  for (int64_t id = shown; id;) {
    const store::CandidateRow* c = find_candidate(cands, id);
    if (!c) break;
    chain += fmt::format("{} {}{} <- ", results::candidate_ref(*c), c->op, c->name.empty() ? "" : " (" + c->name + ")");
    id = c->parents.empty() ? 0 : c->parents.front();
  }
  std::printf("\nlineage of %s %s: %sbaseline\n", is_winner ? "the winner" : "the best",
              results::candidate_ref(cands, shown).c_str(), chain.c_str());
  const store::CandidateRow* c = find_candidate(cands, shown);
  if (!c) return;
  if (!c->rationale.empty()) std::printf("idea: %s\n", c->rationale.c_str());
  if (auto a = evolve::profile_advice(c->verdict_json); !a.diagnosis.empty())
    std::printf("profile: %s\n", a.diagnosis.c_str());
  std::printf("\n%s\n", c->source.c_str());
}

int show_cmd(const ShowArgs& a) {
  auto say = [](const std::string& msg) {
    std::fprintf(stderr, "kevo show: %s\n", msg.c_str());
    return 2;
  };
  auto db = store::RunDb::open_read_only(db_or_default(a.db));
  if (!db) return say(db.error().message);
  auto r = (*db)->get_run(a.run);
  if (!r) return say(r.error().message);
  auto cands = (*db)->candidates(a.run);
  if (!cands) return say(cands.error().message);
  if (a.candidate) {
    const store::CandidateRow* c = find_candidate(*cands, a.candidate);
    if (!c) return say(fmt::format("run {} has no candidate {}", a.run, a.candidate));
    show_candidate(*c, a.run, a.json);
    return 0;
  }
  if (a.json) {
    show_run_json(**db, *r, *cands);
    return 0;
  }
  show_header(*r);
  show_candidate_table(*cands);
  std::vector<results::EpisodeView> episodes;
  if (auto ev = (*db)->events(a.run); ev) {
    std::string m = results::verifier_matrix(*ev, *cands).to_text();
    if (!m.empty()) std::printf("\n%s", m.c_str());
    episodes = results::episodes_of(*ev);
    std::printf("%s", results::episodes_text(episodes, *cands).c_str());
  }
  const json f = object_of(r->final_json);
  show_held_out(f, *cands);
  show_winner_pytorch(f);
  const int64_t winner = f.value("winner", int64_t{0});
  if (const auto* e = winner ? results::episode_of(episodes, winner) : nullptr)
    std::printf("the winner came from episode %lld: %lld tokens, $%.4f, %d evaluation(s)\n",
                static_cast<long long>(e->episode), static_cast<long long>(e->tokens()), e->cost_usd, e->evaluations);
  if (const int64_t shown = winner ? winner : r->best_candidate) show_lineage(*cands, shown, winner != 0);
  return 0;
}

}  // namespace

void register_show(CLI::App& app, int& exit_code) {
  auto* show = app.add_subcommand("show", "A run: per-candidate outcomes, held-out verification, lineage, best kernel");
  auto sa = std::make_shared<ShowArgs>();
  show->add_option("run", sa->run, "Run id (kevo runs)")->required();
  show->add_option("--db", sa->db, "Run database");
  show->add_option("--candidate", sa->candidate, "Show one candidate: prompt, answer, source, verdict");
  show->add_flag("--json", sa->json, "JSON output");
  show->callback([sa, &exit_code] { exit_code = show_cmd(*sa); });
}

}  // namespace kevo::cli
