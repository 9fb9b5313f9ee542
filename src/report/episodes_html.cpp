#include "report/episodes_html.h"

#include <map>

#include <fmt/format.h>

#include "report/html.h"
#include "results/candidate_ref.h"

namespace kevo::report {

namespace {

std::string call_cell(const results::EpisodeCallView& c, const std::vector<store::CandidateRow>& cands) {
  if (c.malformed) return "malformed: " + escape(c.result.substr(0, 160));
  if (c.error) return "error: " + escape(c.result.substr(0, 160));
  if (c.candidate && !c.outcome.empty())
    return escape(results::candidate_ref(cands, c.candidate) + " " + c.outcome +
                  (c.speedup > 0 ? fmt::format(" {:.3f}x", c.speedup) : ""));
  return escape(c.result.substr(0, c.result.find('\n')).substr(0, 160));
}

}  // namespace

std::string winner_episode_html(const std::vector<results::EpisodeView>& episodes,
                                const std::vector<store::CandidateRow>& cands, int64_t winner) {
  const results::EpisodeView* e = results::episode_of(episodes, winner);
  if (!e) return {};
  std::string h = fmt::format("<p>from agent episode {} ({}): {}, {} turn(s), {} tokens, ${:.4f}, {} evaluation(s)</p>\n",
                              e->episode, escape(e->model), escape(e->end), e->turn_count, e->tokens(), e->cost_usd,
                              e->evaluations);
  if (e->turns.empty()) return h;
  h += "<table><tr><th>turn</th><th>tool</th><th>result</th><th>s</th></tr>\n";
  for (const auto& t : e->turns)
    for (const auto& c : t.calls)
      h += fmt::format("<tr><td class=num>{}</td><td>{}</td><td>{}</td><td class=num>{:.2f}</td></tr>\n", t.turn,
                       escape(c.tool), call_cell(c, cands), c.seconds);
  return h + "</table>\n";
}

std::string episodes_summary_html(const std::vector<results::EpisodeView>& episodes, const std::string& task) {
  if (episodes.empty()) return {};
  std::map<std::string, int> ends;
  int64_t tokens = 0;
  int evaluations = 0;
  double usd = 0;
  for (const auto& e : episodes) {
    ++ends[e.end.empty() ? (e.ok ? "ended" : "failed") : e.end];
    tokens += e.tokens(), evaluations += e.evaluations, usd += e.cost_usd;
  }
  std::string how;
  for (const auto& [end, n] : ends) how += fmt::format("{}{} {}", how.empty() ? "" : ", ", n, end);
  return fmt::format("<p>{}: {} agent episode(s) ({}), {} tokens, ${:.4f}, {} evaluation(s)</p>\n", escape(task),
                     episodes.size(), escape(how), tokens, usd, evaluations);
}

}  // namespace kevo::report
