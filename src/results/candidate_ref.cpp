#include "results/candidate_ref.h"

#include <fmt/format.h>

namespace kevo::results {

std::string candidate_ref(int64_t id, int seq) {
  return seq > 0 ? fmt::format("#{} (seq {})", id, seq) : fmt::format("#{}", id);
}

std::string candidate_ref(const store::CandidateRow& c) { return candidate_ref(c.id, c.seq); }

std::string candidate_ref(const std::vector<store::CandidateRow>& run_candidates, int64_t id) {
  for (const auto& c : run_candidates)
    if (c.id == id) return candidate_ref(c);
  return candidate_ref(id, 0);
}

}  // namespace kevo::results
