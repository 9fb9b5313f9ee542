// One proposal, start to finish on a worker thread: ask the model, pull the kernel out of its
// answer (a code block, or SEARCH/REPLACE edits applied to the parent), write the candidate file
// and warm the compile cache, so the GPU step only has to run it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/reason.h"
#include "evolve/candidate_evaluator.h"
#include "evolve/llm_verifier.h"
#include "evolve/prompts.h"
#include "evolve/strategy.h"
#include "llm/cancel.h"
#include "llm/client.h"
#include "llm/errors.h"

namespace kevo::evolve {

struct Job {
  int64_t no = 0;  // per-run job number; part of the LLM cache tag
  Op op = Op::kInit;
  std::vector<int64_t> parents;  // candidate ids; empty: the baseline
  std::string base_source;       // what edits apply to (diff_edit) / what failed (repair)
  double parent_speedup = 1.0;   // for the model bandit's reward
  int island = 0, generation = 0, repair_round = 0;
  Prompt prompt;
};

struct Proposal {
  Job job;
  bool llm_ok = false;
  std::string llm_error;
  llm::ErrorKind error_kind = llm::ErrorKind::kOther;
  llm::ChatResponse response;
  std::string name, rationale;
  std::string source;          // the candidate; empty when the answer held none
  // kNoCode, kEditFailed, kIo: an answer that is not evaluated (stored as invalid_answer); kNone: valid.
  Reason invalid_reason = Reason::kNone;
  std::string invalid_message;
  std::filesystem::path file;
  std::optional<VerifierAnswer> verifier;  // the LLM verifier's review, when one is configured
  // An agent episode (episode.h): its attempts are candidates already; this is its accounting.
  bool episode = false;
  struct EpisodeAccount {
    int64_t charged_tokens = 0;  // charged through the broker during the episode
    double charged_usd = 0;
    nlohmann::json record = nlohmann::json::object();  // its turns and calls (EpisodeOutcome::record)
  } episode_account;
};

// The LLM verifier a proposal asks before its candidate is compiled (llm_verifier.h).
struct VerifierSetup {
  llm::LlmClient* client = nullptr;
  const TaskContext* ctx = nullptr;
};

Proposal make_proposal(Job job, llm::LlmClient& llm, const llm::CancelToken& cancel,
                       CandidateEvaluator& evaluator, const Task& task, const std::filesystem::path& work_dir,
                       VerifierSetup verifier = {});

}  // namespace kevo::evolve
