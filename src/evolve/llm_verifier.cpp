#include "evolve/llm_verifier.h"

#include <fmt/format.h>

#include "evolve/prompts.h"

namespace kevo::evolve {
namespace {

std::string clean(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  std::string out;
  for (char c : s) {
    if (out.size() >= kMaxVerifierReasonChars) break;
    unsigned char u = static_cast<unsigned char>(c);
    out += (u < 0x20 && c != '\n') || u == 0x7f ? ' ' : c;
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '\n')) out.pop_back();
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

VerifierAnswer parse_verifier_answer(std::string_view text) {
  VerifierAnswer a;
  a.answered = true;
  size_t pos = 0, reasons_at = std::string_view::npos;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string line = lower(text.substr(pos, end - pos));
    size_t lead = line.find_first_not_of(" \t*#>`");
    if (lead != std::string::npos) {
      std::string_view l = std::string_view(line).substr(lead);
      if (l.starts_with("verdict:")) {
        std::string_view w = l.substr(8);
        w.remove_prefix(std::min(w.find_first_not_of(" \t*"), w.size()));
        if (w.starts_with("pass")) a.parsed = true, a.pass = true;
        else if (w.starts_with("fail")) a.parsed = true, a.pass = false;
      } else if (l.starts_with("reasons:") || l.starts_with("reason:")) {
        reasons_at = pos + lead + l.find(':') + 1;
      }
    }
    pos = end + 1;
  }
  if (reasons_at != std::string_view::npos) a.reasons = clean(text.substr(reasons_at));
  else if (!a.parsed) a.reasons = clean(text);
  return a;
}

VerifierAnswer run_verifier(llm::LlmClient& client, const TaskContext& ctx, const std::string& source,
                            int64_t job_no, const llm::CancelToken& cancel) {
  Prompt p = build_verifier_prompt(ctx, source);
  llm::ChatRequest req = llm::ChatRequest::user(p.user, p.system);
  req.cache_tag = fmt::format("kevo-verify-job-{}", job_no);
  auto r = client.chat(req, cancel);
  VerifierAnswer a;
  if (r) a = parse_verifier_answer(r->text);
  else a.error = r.error().message;
  a.model = r ? r->model : client.name();
  if (r) {
    a.input_tokens = r->usage.input_tokens;
    a.output_tokens = r->usage.output_tokens;
    a.cost_usd = r->cost_usd;
    a.latency_s = r->latency_s;
    a.from_cache = r->from_cache;
  }
  return a;
}

nlohmann::json VerifierAnswer::to_json(int64_t candidate) const {
  nlohmann::json j{{"candidate", candidate}, {"model", model},         {"answered", answered},
                   {"parsed", parsed},       {"pass", pass},           {"reasons", reasons},
                   {"input_tokens", input_tokens}, {"output_tokens", output_tokens}, {"cost_usd", cost_usd},
                   {"from_cache", from_cache}};
  if (!error.empty()) j["error"] = clean(error);
  return j;
}

}  // namespace kevo::evolve
