// The HTML pages, rendered on the server from the same documents the JSON API serves (so a page
// works without script; /app.js then keeps it current from the API). Every stored text is escaped.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "serve/documents.h"
#include "serve/run_cache.h"

namespace kevo::serve {

// GET /: the campaign (per strategy/model) and every run (runs_doc).
std::string index_page(const nlohmann::json& runs);
// GET /runs/ID: progress, result, charts, rates, outcomes and failure reasons, workers and GPUs,
// cost and tokens, the winner's lineage, the latest candidates (candidates_doc) and events.
std::string run_page(const RunData& d, const nlohmann::json& summary, const nlohmann::json& latest,
                     const nlohmann::json& events);
// GET /runs/ID/candidates: one page of candidate summaries with links to the next.
std::string candidates_page(const RunData& d, const nlohmann::json& list);
// GET /runs/ID/candidates/N: source with the diff against its parent, prompt and answer, the
// verdict with every config, timing with its interval, SOL fraction.
std::string candidate_page(const RunData& d, const CandidateDoc& doc);
// GET /runs/ID/lineage[?candidate=N]: the chain and the tree of ancestors (default: the winner).
std::string lineage_page(const RunData& d, int64_t root);

// The rows of a candidate summary table (candidates_doc's list), shared by the run page and the
// list page; the column names are kCandidateColumns.
std::string candidate_rows_html(int64_t run, const nlohmann::json& list);
extern const std::vector<std::string> kCandidateColumns;

}  // namespace kevo::serve
