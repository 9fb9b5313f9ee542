// The report's charts and tables as pieces, for other HTML front ends (`kevo serve`): inline SVG
// and HTML strings with every text escaped (report/html.h). The same code draws `kevo report`.
// Each chart sizes its margins to its labels (report/svg_text.h), so no label runs past the
// viewBox; a chart of fixed width (best-so-far) shortens its title instead. Candidates are named
// as results/candidate_ref.h names them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/report.h"
#include "store/records.h"

namespace kevo::report {

// The report's CSS: page layout, tables, the diff table's classes (diff, ln, del, add, none).
const char* stylesheet();

// Best-so-far speedup against candidate count: every valid candidate as a dot, the run's best as
// a step line; `result` is the run's figure in the corner (none: "no correct candidate").
std::string best_so_far_chart(const std::string& task, const std::vector<store::CandidateRow>& cands,
                              const std::optional<double>& result);
// The speedup distribution per table (one row of dots per strategy/model).
std::string distribution_chart(const std::vector<TableData>& data);
// Compile and validity rate bars per table (only each table's key and aggregates are read).
std::string rates_chart(const std::vector<TableData>& data);
// A lineage chain, winner first (results::lineage), drawn baseline -> ... -> winner.
std::string lineage_svg(const std::vector<const store::CandidateRow*>& chain);
// A side-by-side line diff table of baseline -> winner's source, headed "baseline" and
// "winner #ID (seq N)".
std::string diff_table(const std::string& baseline, const store::CandidateRow& winner);
// The same with the two headings given (escaped here).
std::string diff_table(const std::string& left, const std::string& right, const std::string& left_label,
                       const std::string& right_label);

}  // namespace kevo::report
