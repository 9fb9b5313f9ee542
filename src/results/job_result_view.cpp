#include "results/job_result_view.h"

#include "results/stored_json.h"

namespace kevo::results {

JobResultView job_result_view(const std::string& stored_text) {
  const nlohmann::json j = parse_object(stored_text);
  return {verdict_view(member(j, "verdict")), number(j, "busy_s"), text(j, "worker")};
}

}  // namespace kevo::results
