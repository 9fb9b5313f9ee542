#include "results/episode_view.h"

#include <fmt/format.h>

#include "results/candidate_ref.h"

namespace kevo::results {

using nlohmann::json;

namespace {

template <class T>
T field(const json& j, const char* k, T fallback) {
  if (!j.is_object() || !j.contains(k)) return fallback;
  const json& v = j[k];
  if constexpr (std::is_same_v<T, std::string>) return v.is_string() ? v.get<std::string>() : fallback;
  else if constexpr (std::is_same_v<T, bool>) return v.is_boolean() ? v.get<bool>() : fallback;
  else return v.is_number() ? v.get<T>() : fallback;
}

EpisodeCallView call_of(const json& c) {
  EpisodeCallView v;
  v.tool = field<std::string>(c, "tool", "");
  v.arguments = c.is_object() ? c.value("arguments", json::object()) : json::object();
  v.error = field(c, "error", false);
  v.malformed = field(c, "malformed", false);
  v.result = field<std::string>(c, "result", "");
  v.candidate = field<int64_t>(c, "candidate", 0);
  v.outcome = field<std::string>(c, "outcome", "");
  v.speedup = field(c, "speedup", 0.0);
  v.seconds = field(c, "seconds", 0.0);
  return v;
}

EpisodeTurnView turn_of(const json& t) {
  EpisodeTurnView v;
  v.turn = field(t, "turn", 0);
  v.input_tokens = field<int64_t>(t, "input_tokens", 0);
  v.output_tokens = field<int64_t>(t, "output_tokens", 0);
  v.usd = field(t, "usd", 0.0);
  v.text = field<std::string>(t, "text", "");
  v.error = field<std::string>(t, "error", "");
  if (t.contains("calls") && t["calls"].is_array())
    for (const auto& c : t["calls"]) v.calls.push_back(call_of(c));
  return v;
}

EpisodeView view_of(const json& e) {
  EpisodeView v;
  v.episode = field<int64_t>(e, "episode", 0);
  v.model = field<std::string>(e, "model", "");
  v.end = field<std::string>(e, "end", "");
  v.end_detail = field<std::string>(e, "end_detail", "");
  v.summary = field<std::string>(e, "summary", "");
  v.error = field<std::string>(e, "error", "");
  v.ok = field(e, "ok", false);
  v.submitted = field(e, "submitted", false);
  v.answer = field<int64_t>(e, "answer", 0);
  v.turn_count = field(e, "turn_count", 0);
  v.tool_calls = field(e, "tool_calls", 0);
  v.malformed_calls = field(e, "malformed_calls", 0);
  v.tool_errors = field(e, "tool_errors", 0);
  v.evaluations = field(e, "evaluations", 0);
  v.input_tokens = field<int64_t>(e, "input_tokens", 0);
  v.output_tokens = field<int64_t>(e, "output_tokens", 0);
  v.cost_usd = field(e, "cost_usd", 0.0);
  if (e.contains("turns") && e["turns"].is_array())
    for (const auto& t : e["turns"]) v.turns.push_back(turn_of(t));
  return v;
}

std::string first_line(const std::string& s, size_t n = 70) {
  std::string l = s.substr(0, s.find('\n'));
  return l.size() <= n ? l : l.substr(0, n) + "...";
}

std::string call_text(const EpisodeCallView& c, const std::vector<store::CandidateRow>& cands) {
  std::string name = c.arguments.is_object() && c.arguments.contains("name") && c.arguments["name"].is_string()
                         ? " \"" + c.arguments["name"].get<std::string>() + "\""
                         : "";
  std::string what = c.malformed ? "MALFORMED: " + first_line(c.result)
                     : c.error   ? "error: " + first_line(c.result)
                     : c.candidate && !c.outcome.empty()
                         ? fmt::format("{} {}{}", candidate_ref(cands, c.candidate), c.outcome,
                                       c.speedup > 0 ? fmt::format(" {:.3f}x", c.speedup) : "")
                         : first_line(c.result);
  return fmt::format("{}{} -> {}", c.tool, name, what);
}

}  // namespace

std::vector<int64_t> EpisodeView::candidates() const {
  std::vector<int64_t> ids;
  for (const auto& t : turns)
    for (const auto& c : t.calls)
      if (c.candidate && !c.outcome.empty() && (ids.empty() || ids.back() != c.candidate)) ids.push_back(c.candidate);
  return ids;
}

json EpisodeView::to_json() const {
  return {{"episode", episode},         {"model", model},       {"end", end},
          {"end_detail", end_detail},   {"summary", summary},   {"ok", ok},
          {"submitted", submitted},     {"answer", answer},     {"turns", turn_count},
          {"tool_calls", tool_calls},   {"malformed_calls", malformed_calls},
          {"tool_errors", tool_errors}, {"evaluations", evaluations},
          {"input_tokens", input_tokens}, {"output_tokens", output_tokens}, {"cost_usd", cost_usd},
          {"candidates", candidates()}};
}

std::vector<EpisodeView> episodes_of(const std::vector<store::EventRow>& events) {
  std::vector<EpisodeView> out;
  for (const auto& e : events) {
    if (e.kind != kEpisodeEvent) continue;
    json j = json::parse(e.data_json, nullptr, false);
    if (j.is_object()) out.push_back(view_of(j));
  }
  return out;
}

const EpisodeView* episode_of(const std::vector<EpisodeView>& episodes, int64_t candidate) {
  for (const auto& e : episodes)
    for (int64_t id : e.candidates())
      if (id == candidate) return &e;
  return nullptr;
}

std::string episodes_text(const std::vector<EpisodeView>& episodes, const std::vector<store::CandidateRow>& cands) {
  if (episodes.empty()) return "";
  std::string s = fmt::format("\nepisodes ({}):\n", episodes.size());
  for (const auto& e : episodes) {
    s += fmt::format("episode {}  {}  {}  {} tokens  ${:.4f}  {} evaluation(s)  {}\n", e.episode, e.model,
                     e.end.empty() ? (e.ok ? "ended" : "failed") : e.end, e.tokens(), e.cost_usd, e.evaluations,
                     e.answer ? "answer " + candidate_ref(cands, e.answer) + (e.submitted ? " (submitted)" : " (its best)")
                              : "no answer");
    if (!e.summary.empty()) s += "  " + e.summary + "\n";
    if (!e.error.empty()) s += "  error: " + e.error + "\n";
    for (const auto& t : e.turns) {
      if (!t.error.empty()) s += fmt::format("  turn {:<3} model error: {}\n", t.turn, first_line(t.error, 120));
      if (t.calls.empty() && t.error.empty()) s += fmt::format("  turn {:<3} (text only) {}\n", t.turn, first_line(t.text));
      for (const auto& c : t.calls) s += fmt::format("  turn {:<3} {}\n", t.turn, call_text(c, cands));
    }
  }
  return s;
}

}  // namespace kevo::results
