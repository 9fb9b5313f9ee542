#include "results/candidate_figures.h"

#include "results/stored_json.h"
#include "results/verdict_view.h"

namespace kevo::results {

bool compiled(const store::CandidateRow& c) { return flag(parse_object(c.compile_json), "ok"); }

CandidateFigures figures_of(const store::CandidateRow& c) {
  const VerdictView v = verdict_view(c.verdict_json);
  CandidateFigures f;
  f.compiled = compiled(c);
  f.sol_fraction = v.sol_fraction();
  if (v.device) f.device = v.device->name, f.device_uuid = v.device->uuid;
  f.eval_s = v.seconds;
  return f;
}

}  // namespace kevo::results
