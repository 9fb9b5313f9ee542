// The building blocks the pages share: the document around a page (stylesheet and script served
// by this server, nothing inline, so the Content-Security-Policy allows no inline code), escaped
// text, times, links and small tables. Every piece of stored text goes through esc().
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kevo::serve {

struct PageHead {
  std::string title;           // plain text
  std::string page;            // body data-page: index, run, candidates, candidate, lineage
  int64_t run = 0;             // body data-run (0: none)
  uint64_t version = 0;        // body data-version: the run's version the page shows
  std::string crumbs_html;     // after "kevo runs" in the header (already escaped)
};

std::string esc(std::string_view s);
// The whole document: head, header with breadcrumbs and the live indicator, `content`.
std::string layout(const PageHead& h, const std::string& content);
// "2024-05-01 12:00:03" in local time; "-" for 0.
std::string time_text(double unix_s);
// <a href="/runs/R/candidates/ID">#ID</a>, or the label given (escaped here) in place of #ID; "-" for no id.
std::string cand_link(int64_t run, int64_t id, const std::string& label = "");
// A JSON value as short text: strings as they are, numbers compactly, null as "-".
std::string value_text(const nlohmann::json& v);
// <tr><th>label</th><td ...>value</td></tr>; live: the display key JS updates (data-live).
std::string kv_row(const std::string& label, const std::string& value_html, const std::string& live = "");
// A table with a header row; cells are HTML (escape before).
std::string html_table(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows,
                       const std::string& cls = "");

}  // namespace kevo::serve
