// A run's agent episodes in the report: the episode a winner came from, as a thread of its turns
// (each tool call with what it returned), inside the winner's lineage section.
#pragma once

#include <string>
#include <vector>

#include "results/episode_view.h"

namespace kevo::report {

// The episode that recorded `winner`, its accounting and its turns; empty when none did.
std::string winner_episode_html(const std::vector<results::EpisodeView>& episodes,
                                const std::vector<store::CandidateRow>& cands, int64_t winner);
// One line per run with episodes: how many, how they ended, their tokens and evaluations.
std::string episodes_summary_html(const std::vector<results::EpisodeView>& episodes, const std::string& task);

}  // namespace kevo::report
