// `kevo report`: one self-contained HTML file of run databases or bench results (src/report/).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "evolve/task_context.h"
#include "report/report.h"
#include "util/fs.h"

namespace kevo::cli {

namespace {

int report_cmd(const std::vector<std::string>& sources, const std::string& out, const std::string& title) {
  auto advise = [](const std::string& verdict) { return evolve::profile_advice(verdict).diagnosis; };
  auto data = report::load_report_data(sources, advise);
  if (!data) {
    std::fprintf(stderr, "kevo report: %s\n", data.error().message.c_str());
    return 2;
  }
  if (auto st = write_file_atomic(out, report::render_html(*data, title)); !st) {
    std::fprintf(stderr, "kevo report: %s\n", st.error().message.c_str());
    return 2;
  }
  std::printf("wrote %s (%zu table(s))\n", out.c_str(), data->size());
  return 0;
}

}  // namespace

void register_report(CLI::App& app, int& exit_code) {
  auto* rep = app.add_subcommand("report", "One self-contained HTML report of run databases or bench results");
  struct ReportArgs {
    std::vector<std::string> sources;
    std::string out = "report.html", title = "kevo report";
  };
  auto ra = std::make_shared<ReportArgs>();
  rep->add_option("sources", ra->sources, "Run databases, bench JSON files or --out folders")->required();
  rep->add_option("-o,--out", ra->out, "Output file (default report.html)");
  rep->add_option("--title", ra->title, "Title of the report");
  rep->callback([ra, &exit_code] { exit_code = report_cmd(ra->sources, ra->out, ra->title); });
}

}  // namespace kevo::cli
