// The winner's lineage: the chain of first parents back to the baseline (drawn by the report's
// lineage_svg), and the whole tree of ancestors through every parent (a crossover has two), as JSON
// and as a nested list whose nodes link to their candidate pages.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/run_cache.h"

namespace kevo::serve {

// Nodes at most in a tree (a run's ancestry is normally tens of candidates).
inline constexpr size_t kMaxLineageNodes = 400;
// The nearest ancestors a run summary lists and a chain drawing shows (a long run's winner may
// descend from thousands).
inline constexpr size_t kChainInSummary = 50;
inline constexpr size_t kChainDrawn = 30;

// The candidate and its first parents back to the baseline, candidate first (results::lineage's
// order, through the run's index).
std::vector<const store::CandidateRow*> chain_of(const RunData& d, int64_t candidate);
// [{id, seq, op, outcome, speedup, name, parents}] of the first `max` of chain_of.
nlohmann::json lineage_chain_json(const RunData& d, int64_t candidate, size_t max = kMaxLineageNodes);
// Every ancestor through all parents, breadth first: [{id, ..., parents, depth}]; `truncated` when
// more than kMaxLineageNodes.
nlohmann::json lineage_tree_json(const RunData& d, int64_t candidate);
// The nearest kChainDrawn of the chain as the report's SVG ("" when the candidate is not in the run).
std::string lineage_chain_svg(const RunData& d, int64_t candidate);
// The tree as nested <ul> lists with links (an ancestor reached twice is shown once, then named).
std::string lineage_tree_html(const RunData& d, int64_t candidate);

}  // namespace kevo::serve
