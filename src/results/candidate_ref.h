// How a candidate is named to people: "#13 (seq 8)". The id is what `kevo show --candidate` and
// the web view's links take, but ids count across every run in a database, so a run's 8th
// candidate can be #13; its sequence number in the run says where in the search it came.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/records.h"

namespace kevo::results {

// "#ID (seq N)"; "#ID" alone when the sequence number is not known (seq 0).
std::string candidate_ref(int64_t id, int seq);
std::string candidate_ref(const store::CandidateRow& c);
// The candidate `id` among a run's candidates; "#ID" alone when it is not among them.
std::string candidate_ref(const std::vector<store::CandidateRow>& run_candidates, int64_t id);

}  // namespace kevo::results
