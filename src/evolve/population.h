// Population policies: which valid candidates are kept, and how parents are drawn from them.
//   single-best  one solution: the current best (EvoEngineer-Free/Insight)
//   elite        the k fastest, parents by rank: p(r) proportional to 1/(r + N), r = 1 for the
//                fastest, N = population size (EoH's rule; EvoEngineer-Full)
//   islands      n independent elites; a candidate joins its parent's island; every
//                `migration_interval` completed candidates each island's best is copied into
//                the next island (a ring), replacing that island's worst (FunSearch, OpenEvolve);
//                every `reset_interval` completed candidates the worse half of the islands (by
//                their best) is emptied and each is re-seeded with the best of one of the better
//                half (FunSearch's island reset; deterministic, so a resumed run replays it)
//   map-elites   one elite per cell of kernel features (features.h); a candidate takes an empty
//                cell or replaces a slower occupant; parents uniformly over occupied cells
// Independently of the policy, the run's best is kept with the noise-aware rule (noise.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "evolve/noise.h"
#include "util/enum_text.h"
#include "util/result.h"

namespace kevo::evolve {

enum class PolicyKind { kSingleBest, kElite, kIslands, kMapElites };
// Stored with a run's strategy and named in [evolve] policy: a value's text never changes.
inline constexpr EnumText<PolicyKind> kPolicyKindTexts[] = {{PolicyKind::kSingleBest, "single-best"},
                                                            {PolicyKind::kElite, "elite"},
                                                            {PolicyKind::kIslands, "islands"},
                                                            {PolicyKind::kMapElites, "map-elites"}};
const char* to_string(PolicyKind k);
std::optional<PolicyKind> parse_policy(std::string_view s);  // nullopt for other text

struct PopulationConfig {
  PolicyKind kind = PolicyKind::kElite;
  int size = 5;                 // elite size (per island for islands)
  int islands = 1;
  int migration_interval = 10;  // completed candidates between migrations
  int migrants = 1;
  int reset_interval = 0;       // completed candidates between island resets; 0: never
};

// What a completed candidate set off (Population::note_completed).
struct Completion {
  bool migrated = false;
  std::vector<int> reset;  // islands emptied and re-seeded
};

struct Member {
  int64_t id = 0;
  Speed speed;
  int island = 0;
  int generation = 0;
  std::string cell;  // MAP-Elites cell (features.h)
};

// p(r) proportional to 1/(r + n) for ranks r = 1..n (1: the fastest), normalized.
std::vector<double> rank_probabilities(size_t n);

class Population {
 public:
  explicit Population(PopulationConfig cfg);

  // A valid candidate: may enter the population (per policy) and may become the best (noise-
  // aware). Returns true when it became the best.
  bool offer(const Member& m);
  // Every completed candidate, valid or not: drives the migration and reset clocks.
  Completion note_completed();

  const std::optional<Member>& best() const { return best_; }
  std::vector<Member> members(int island = -1) const;  // sorted fastest first; -1: all islands
  size_t size() const { return members(-1).size(); }
  bool empty() const { return size() == 0; }
  const PopulationConfig& config() const { return cfg_; }
  const std::map<std::string, Member>& cells() const { return cells_; }

  // Draws up to k distinct parents (fewer when fewer exist), from `island` (-1: all).
  std::vector<Member> select(int k, int island, std::mt19937_64& rng) const;
  // The island the next fresh proposal works on (round robin).
  int next_island();
  int completed() const { return completed_; }

 private:
  void insert_elite(std::vector<Member>& pool, const Member& m);
  void migrate();
  std::vector<int> reset_worse_half();
  PopulationConfig cfg_;
  std::vector<std::vector<Member>> islands_;  // elite / single-best / islands
  std::map<std::string, Member> cells_;       // map-elites
  std::optional<Member> best_;
  int completed_ = 0;
  int next_island_ = 0;
};

}  // namespace kevo::evolve
