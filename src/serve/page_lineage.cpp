// GET /runs/ID/lineage: the chain of first parents and the tree of every ancestor.
#include <fmt/format.h>

#include "results/candidate_ref.h"
#include "serve/html_parts.h"
#include "serve/lineage.h"
#include "serve/pages.h"

namespace kevo::serve {

std::string lineage_page(const RunData& d, int64_t root) {
  const int64_t run = d.run.id;
  std::string c = fmt::format("<h1>run {} &middot; {}: lineage of {}</h1>\n", run, esc(d.run.task),
                              root ? esc(results::candidate_ref(d.candidates, root)) : "the winner");
  if (!root) {
    c += "<p class=muted>no correct candidate yet</p>\n";
  } else {
    std::string svg = lineage_chain_svg(d, root);
    const size_t length = chain_of(d, root).size();
    if (length > kChainDrawn)
      c += fmt::format("<p class=muted>{} candidates from the baseline; the nearest {} are drawn</p>\n", length,
                       kChainDrawn);
    c += "<h2>First parents</h2>\n<div class=\"scroll\">" + (svg.empty() ? "<p class=muted>not in this run</p>" : svg) +
         "</div>\n<h2>Every ancestor</h2>\n<p class=muted>each candidate lists its parents (a crossover has two); the "
         "baseline is where a first candidate starts</p>\n" +
         lineage_tree_html(d, root) + "\n";
  }
  return layout({fmt::format("run {} lineage", run), "lineage", run, d.version,
                 fmt::format(R"( &rsaquo; <a href="/runs/{0}">run {0}</a> &rsaquo; lineage)", run)},
                c);
}

}  // namespace kevo::serve
