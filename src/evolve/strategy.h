// A strategy is configuration, not code: which information goes into prompts, which operators
// propose candidates and how often, how the population is kept, and the run's default budgets.
// The presets reproduce published methods (docs/EVOLVE.md says what each sends to the model).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "evolve/population.h"
#include "util/result.h"

namespace kevo::evolve {

// init: a first kernel from the task and baseline. mutate: improve one parent (full code back).
// crossover: combine two parents. rewrite: a fresh kernel for the task, parents as background
// only. diff_edit: SEARCH/REPLACE edits to one parent. repair: fix a failed candidate from its
// diagnostic. tune: offline substitution of annotated constants (no model).
// kAgent: an attempt an agent's episode evaluated (episode.h), not a prompt's answer.
enum class Op { kInit, kMutate, kCrossover, kRewrite, kDiffEdit, kRepair, kTune, kAgent };
const char* to_string(Op op);
std::optional<Op> parse_op(std::string_view s);  // nullopt for other text

struct InfoSources {
  bool task = true;       // I1: description, ABI, GPU, CUDA, visible shapes, baseline code/time, SOL
  bool solutions = false;  // I2: earlier solutions (code) with their times
  bool insights = false;   // I3: the stated rationale of earlier candidates and what came of it
  // Examples from the kernel archive: other runs' verified kernels for the most similar tasks,
  // with where each came from and the GPU it was measured on (archive/retrieval.h).
  bool archive = false;
};

// How a proposal is made: one model answer (single), or an episode in which the model calls kevo's
// tools (compile, evaluate, profile, submit) over several turns before it answers (agent).
enum class Mutator { kSingle, kAgent };
const char* to_string(Mutator m);                    // "single", "agent"
std::optional<Mutator> parse_mutator(std::string_view s);  // nullopt for other text

// What one agent episode may spend before its best passing kernel becomes its answer.
struct EpisodeLimits {
  int turns = 24;           // model turns
  int evaluations = 8;      // evaluate and profile calls (each one of the run's candidates)
  int64_t tokens = 400000;  // input + output tokens of all its turns
  double minutes = 20;      // wall time
  // A source an episode compiled cleanly is evaluated at once, while the model writes its next
  // turn, so an `evaluate` of it finds the verdict ready (episode_phase.h). Nobody is credited
  // with a speculative verdict until the model asks for it; the rest is reported as wasted.
  bool speculate = true;
};

struct StrategyConfig {
  std::string name = "kevo-default";
  InfoSources info;
  std::vector<std::pair<Op, double>> operators;  // weights once the population is not empty
  PopulationConfig population;
  int solutions_shown = 2;  // I2: parents shown (crossover shows two regardless)
  int insights_shown = 5;   // I3: the latest insights shown
  int archive_shown = 2;    // archive examples shown (info "archive")
  int repair_rounds = 0;    // 0: failed candidates are not sent back
  int parallel = 4;         // proposals in flight
  int max_candidates = 45;  // default budget per task
  int stagnation = 0;       // stop after this many completed candidates without a new best; 0: never
  int verify_fallbacks = 2;  // runners-up re-verified if the best fails held-out
  // A parent's profile (check/profile_diagnosis.h) goes into the child's prompt next to its speedup,
  // the baseline's next to the baseline; false leaves it out, so its effect can be compared.
  bool profile_feedback = true;
  std::string style;        // prompt style: "evoengineer", "eoh", "funsearch", "ai-cuda-engineer", "kevo"
  Mutator mutator = Mutator::kSingle;
  EpisodeLimits episode;    // with mutator agent

  nlohmann::json to_json() const;
  static Result<StrategyConfig> from_json(const nlohmann::json& j);
};

// Sets the mutator; a change from the preset's renames the strategy ("evoengineer-full+agent"), so
// runs of the two are told apart in tables.
void apply_mutator(StrategyConfig& s, Mutator m);

std::vector<std::string> preset_names();
Result<StrategyConfig> preset(std::string_view name);

// Reads an [evolve] table over `base`: strategy = "NAME" picks a preset first, then keys
// (parallel, population, policy, islands, migration_interval, repair_rounds, stagnation,
// max_candidates, info = ["task", "solutions", "insights", "archive"], operators = { mutate = 1.0, ... },
// mutator = "agent", episode_turns, episode_evaluations, episode_tokens, episode_minutes).
// Unknown keys are errors. A file without an [evolve] table leaves `base` as it is.
Result<StrategyConfig> load_strategy_file(const std::filesystem::path& file, StrategyConfig base);
Result<StrategyConfig> parse_strategy_toml(std::string_view text, StrategyConfig base);
// Whether a TOML file has a top-level table `name` (the CLI's --config holds [llm] and [evolve]).
Result<bool> toml_has_table(const std::filesystem::path& file, const std::string& name);

}  // namespace kevo::evolve
