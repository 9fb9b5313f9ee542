#include "serve/run_charts.h"

#include <functional>

#include "report/charts.h"
#include "results/table.h"
#include "serve/activity.h"
#include "serve/run_summary.h"

namespace kevo::serve {

namespace {

std::string rates_svg(const RunData& d) {
  report::TableData t;
  t.table.key = results::key_of(d.run);
  t.table.tasks = {task_result(d)};
  t.table.agg = results::aggregate(t.table.tasks);
  return report::rates_chart({t});
}

const std::string& memo(const RunData& d, const std::string& key, const std::function<std::string()>& make) {
  auto it = d.memo.find(key);
  if (it == d.memo.end()) it = d.memo.emplace(key, make()).first;
  return it->second;
}

}  // namespace

std::optional<std::string> run_chart(const RunData& d, std::string_view name, double now) {
  if (name == "best.svg")
    return memo(d, "best.svg", [&] { return report::best_so_far_chart(d.run.task, d.candidates, task_result(d).speedup); });
  if (name == "rates.svg") return memo(d, "rates.svg", [&] { return rates_svg(d); });
  if (name == "activity.svg") return activity_svg(d, now);
  return std::nullopt;
}

}  // namespace kevo::serve
