// The agent episodes of a run (evolve/episode.h) as its events store them: one "episode" event per
// finished episode with its accounting, how it ended, and (for an LLM's tool-using episode) every
// turn with its tool calls and what they answered. Read here once, for `kevo show`, the report and
// the web view. Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/records.h"

namespace kevo::results {

// The run event kind the engine writes for each finished episode.
inline constexpr const char* kEpisodeEvent = "episode";

struct EpisodeCallView {
  std::string tool;
  nlohmann::json arguments;  // sources replaced by their size
  bool error = false, malformed = false;
  std::string result;        // the first part of what the model was answered
  int64_t candidate = 0;     // the candidate it evaluated (0: none)
  std::string outcome;
  double speedup = 0;
  double seconds = 0;        // the call's wall time (an evaluation: waiting for the pool included)
};

struct EpisodeTurnView {
  int turn = 0;
  int64_t input_tokens = 0, output_tokens = 0;
  double usd = 0;
  std::string text, error;  // the model's text, or why the turn's call failed
  std::vector<EpisodeCallView> calls;
};

struct EpisodeView {
  int64_t episode = 0;
  std::string model, end, end_detail, summary, error;
  bool ok = false, submitted = false;
  int64_t answer = 0;
  int turn_count = 0, tool_calls = 0, malformed_calls = 0, tool_errors = 0, evaluations = 0;
  int64_t input_tokens = 0, output_tokens = 0;
  double cost_usd = 0;
  std::vector<EpisodeTurnView> turns;  // empty for an agent CLI's episode (its turns are its own)

  int64_t tokens() const { return input_tokens + output_tokens; }
  // The candidates its evaluations recorded, in order.
  std::vector<int64_t> candidates() const;
  nlohmann::json to_json() const;
};

// Every episode event of a run, in order; an event whose data is not an object is skipped.
std::vector<EpisodeView> episodes_of(const std::vector<store::EventRow>& events);
// The episode that recorded `candidate` (nullptr: none), so a winner is traced to its episode.
const EpisodeView* episode_of(const std::vector<EpisodeView>& episodes, int64_t candidate);
// `kevo show`'s section: one line per episode, then its turns; empty without episodes.
std::string episodes_text(const std::vector<EpisodeView>& episodes, const std::vector<store::CandidateRow>& cands);

}  // namespace kevo::results
