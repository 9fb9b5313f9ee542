#include "evolve/proposal.h"

#include <fmt/format.h>

#include "llm/apply_edits.h"
#include "llm/parse_answer.h"
#include "util/fs.h"

namespace kevo::evolve {

Proposal make_proposal(Job job, llm::LlmClient& llm, const llm::CancelToken& cancel,
                       CandidateEvaluator& evaluator, const Task& task, const std::filesystem::path& work_dir,
                       VerifierSetup verifier) {
  Proposal p;
  p.job = std::move(job);
  llm::ChatRequest req = llm::ChatRequest::user(p.job.prompt.user, p.job.prompt.system);
  // Distinct per job so that two jobs with the same prompt get two samples, while a resumed run
  // re-asking an interrupted job finds its stored answer.
  req.cache_tag = fmt::format("kevo-evolve-job-{}", p.job.no);
  auto r = llm.chat(req, cancel);
  if (!r) {
    p.llm_error = r.error().message;
    p.error_kind = llm::error_kind(r.error());
    return p;
  }
  p.llm_ok = true;
  p.response = std::move(*r);
  llm::ParsedAnswer parsed = llm::parse_answer(p.response.text);
  p.name = parsed.name;
  p.rationale = parsed.thought;
  if (p.job.op == Op::kDiffEdit && !parsed.edits.empty()) {
    auto edited = llm::apply_answer_edits(p.job.base_source, p.response.text);
    if (!edited) {
      p.invalid_reason = Reason::kEditFailed;
      p.invalid_message = edited.error().message;
      return p;
    }
    p.source = std::move(*edited);
  } else {
    // A full file (a diff-edit answer that rewrote the whole kernel is accepted as one).
    auto code = llm::extract_code(p.response.text);
    if (!code) {
      p.invalid_reason = Reason::kNoCode;
      p.invalid_message = code.error().message;
      return p;
    }
    p.source = std::move(*code);
  }
  p.file = work_dir / fmt::format("job{}.cu", p.job.no);
  if (auto w = write_file_atomic(p.file, p.source); !w) {
    p.invalid_reason = Reason::kIo;
    p.invalid_message = w.error().message;
    p.source.clear();
    return p;
  }
  if (verifier.client && verifier.ctx && !cancel.cancelled())
    p.verifier = run_verifier(*verifier.client, *verifier.ctx, p.source, p.job.no, cancel);
  if (!cancel.cancelled()) evaluator.warm(task, p.source);
  return p;
}

}  // namespace kevo::evolve
