#include "cli/translate_stage.h"

#include <cstdio>

namespace kevo::cli {

int translate_and_report(const char* prog, const Task& task, evolve::CandidateEvaluator& evaluator, store::RunDb& db,
                         llm::LlmClient* llm, const llm::CancelToken& cancel, const evolve::TranslateOptions& o,
                         bool failed_rounds_fatal) {
  auto r = evolve::translate(task, evaluator, db, llm, cancel, o);
  if (!r) {
    std::fprintf(stderr, "%s: %s\n", prog, r.error().message.c_str());
    return 2;
  }
  for (const auto& at : r->attempts)
    std::fprintf(stderr, "%s: translate round %d: %s%s%s (candidate #%lld)\n", prog, at.round, to_string(at.outcome),
                 at.reason.empty() ? "" : " ", at.reason.c_str(), static_cast<long long>(at.candidate));
  switch (r->status) {
    case evolve::TranslateStatus::kTranslated:
      std::printf("translated %s (run %lld, candidate #%lld, round %zu of %d): wrote %s\n",
                  task.torch_reference.c_str(), static_cast<long long>(r->run_id),
                  static_cast<long long>(r->candidate), r->attempts.size(), o.rounds, r->baseline.c_str());
      return 0;
    case evolve::TranslateStatus::kRoundsExhausted:
      std::fprintf(stderr, "%s: translation failed: %s\n", prog, r->message.c_str());
      return failed_rounds_fatal ? 3 : 1;
    case evolve::TranslateStatus::kLlmFailed:
      std::fprintf(stderr, "%s: translation failed: %s\n", prog, r->message.c_str());
      return 3;
    case evolve::TranslateStatus::kInfraFailed:
      std::fprintf(stderr, "%s: stopped, nothing more was asked of the model: %s\n", prog, r->message.c_str());
      return 3;
    case evolve::TranslateStatus::kInterrupted:
      std::fprintf(stderr, "%s: interrupted (run %lld)\n", prog, static_cast<long long>(r->run_id));
      return 130;
  }
  return 3;
}

}  // namespace kevo::cli
