// Replaying a resumed run: its stored candidates, in completion order, rebuild the counters, the
// population, the programs seen and the LLM totals, so it continues as it was.
#include <algorithm>
#include <utility>

#include "evolve/run_record.h"
#include "evolve/run_state.h"

namespace kevo::evolve {

Status replay_phase(RunState& s) {
  auto cands = s.db.candidates(s.row.id);
  if (!cands) return cands.unexpected();
  for (auto& c : *cands) {
    s.seq = std::max(s.seq, c.seq);
    if (is_valid(c)) {
      ++s.valid;
      if (s.pop.offer(member_of(c))) s.since_best = 0;
      else ++s.since_best;
    } else {
      ++s.since_best;
    }
    s.pop.note_completed();
    s.order.push_back(c.id);
    remember_source(s, c);
    s.rows[c.id] = std::move(c);
  }
  auto t = s.db.totals(s.row.id);
  if (!t) return t.unexpected();
  s.calls = t->llm_calls;
  s.tokens = t->tokens;
  s.cost = t->cost_usd;
  s.next_job = t->llm_calls + 1;
  return {};
}

}  // namespace kevo::evolve
