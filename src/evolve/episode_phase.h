// The search's side of agent episodes (episode.h), used by evolve_phase.cpp. Internal to evolve/.
#pragma once

#include <functional>

#include "evolve/run_state.h"

namespace kevo::evolve {

// Hands the attempts episodes are waiting on to the pool while `slot_free()`; a stopping run
// closes the broker, so its episodes' later attempts are refused.
Status feed_episode_attempts(RunState& s, const std::function<bool()>& slot_free);
// A finished attempt: recorded as a candidate (a compile is only answered), then the episode told.
// A compile that succeeded starts a speculative evaluation of its source (EpisodeLimits::speculate).
Status complete_episode_attempt(RunState& s, Pending pe, const Verdict& v);
// A finished speculative evaluation nobody has claimed yet: kept for the evaluate that asks for it,
// or counted as wasted when its episode is over.
void complete_speculation(RunState& s, const Pending& pe, const Verdict& v, double busy_s);
// A speculative evaluation left in the pool by a run that stops at once: wasted.
void leave_speculation(RunState& s, const Pending& pe);
// The run's end: what speculation is left is wasted; a "speculation" event says what it did.
void finish_speculation(RunState& s);
// One episode on a proposal thread: the runner's outcome as a proposal that holds no kernel.
Proposal run_episode(RunState& s, Job j);
// A finished episode: one call's accounting (its cost and tokens count against the budgets).
Status account_episode(RunState& s, const Proposal& p);

}  // namespace kevo::evolve
