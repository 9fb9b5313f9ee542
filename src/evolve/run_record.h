// Recording a run's candidates (run_state.h): each completed candidate is stored in the run
// database in its own transaction with the LLM calls that produced it, then the population, the
// noise-aware best and the run's events follow. Internal to evolve/.
#pragma once

#include <string>
#include <vector>

#include "evolve/run_state.h"

namespace kevo::evolve {

// A stored candidate as the population knows it.
Member member_of(const store::CandidateRow& r);
// Passed with a speedup: a candidate the population may keep.
bool is_valid(const store::CandidateRow& r);
// `s` cut to `n` characters, saying so.
std::string clip(std::string s, size_t n);

// Candidates that were really evaluated (not invalid answers, not repeats) define a program seen;
// a profiled one's diagnosis is kept for its children's prompts.
void remember_source(RunState& s, const store::CandidateRow& c);

// The row of a candidate judged by `v`, with the search's timing figures.
store::CandidateRow row_from_verdict(const Verdict& v, const std::string& source);
// The row of a program already judged (or being judged): `same_as` names which.
store::CandidateRow duplicate_row(const std::string& source, const std::string& same_as);

// Stores a completed candidate, updates the population and the best; returns the stored row.
Result<store::CandidateRow> record(RunState& s, store::CandidateRow c, const std::vector<store::LlmCallRow>& calls);
// Records a proposal's candidate (judged, invalid or a repeat) with the calls that produced it,
// rewards the model and queues a repair where `repair_feedback` says what failed.
Status store_proposal(RunState& s, store::CandidateRow c, const Proposal& p, const std::string& repair_feedback,
                      const std::string& repair_source);
// The call that produced `p`, as stored; `error` for one that failed or was discarded.
store::LlmCallRow call_row(const RunState& s, const Proposal& p, const std::string& error);

}  // namespace kevo::evolve
