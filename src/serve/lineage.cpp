#include "serve/lineage.h"

#include <deque>
#include <set>

#include <fmt/format.h>

#include "report/charts.h"
#include "report/html.h"
#include "results/candidate_ref.h"

namespace kevo::serve {

using nlohmann::json;

namespace {

json node_json(const store::CandidateRow& c) {
  return {{"id", c.id}, {"seq", c.seq}, {"op", c.op}, {"outcome", to_string(c.outcome)}, {"reason", c.reason},
          {"speedup", c.speedup}, {"name", c.name}, {"parents", c.parents}};
}

std::string node_label(const store::CandidateRow& c) {
  std::string s = results::candidate_ref(c) + " " + c.op + " ";
  s += c.passed() ? fmt::format("{:.3f}x", c.speedup)
                  : to_string(c.outcome) + (c.reason.empty() ? "" : " [" + c.reason + "]");
  if (!c.name.empty()) s += " " + c.name;
  return s;
}

struct TreeWriter {
  const RunData& d;
  std::set<int64_t> shown;
  std::string out;

  void node(int64_t id, int depth) {
    const auto* found = d.find(id);
    if (!found) {
      out += fmt::format("<li class=muted>#{} (not in this run)</li>", id);
      return;
    }
    const auto& c = *found;
    out += fmt::format(R"(<li><a href="/runs/{}/candidates/{}">{}</a>)", d.run.id, c.id, report::escape(node_label(c)));
    if (!shown.insert(id).second) {
      out += " <span class=muted>(ancestry above)</span></li>";
      return;
    }
    if (shown.size() >= kMaxLineageNodes || depth > 200) {
      out += " <span class=muted>(more ancestors not shown)</span></li>";
      return;
    }
    out += c.parents.empty() ? "<ul><li class=muted>baseline</li></ul>" : "<ul>";
    if (!c.parents.empty()) {
      for (int64_t p : c.parents) node(p, depth + 1);
      out += "</ul>";
    }
    out += "</li>";
  }
};

}  // namespace

std::vector<const store::CandidateRow*> chain_of(const RunData& d, int64_t candidate) {
  std::vector<const store::CandidateRow*> chain;
  for (int64_t id = candidate; id;) {
    const auto* c = d.find(id);
    if (!c || chain.size() > d.candidates.size()) break;  // a cycle cannot loop forever
    chain.push_back(c);
    id = c->parents.empty() ? 0 : c->parents.front();
  }
  return chain;
}

json lineage_chain_json(const RunData& d, int64_t candidate, size_t max) {
  json out = json::array();
  for (const auto* c : chain_of(d, candidate)) {
    if (out.size() >= max) break;
    out.push_back(node_json(*c));
  }
  return out;
}

json lineage_tree_json(const RunData& d, int64_t candidate) {
  json nodes = json::array();
  std::set<int64_t> seen{candidate};
  std::deque<std::pair<int64_t, int>> todo{{candidate, 0}};
  bool truncated = false;
  while (!todo.empty()) {
    auto [id, depth] = todo.front();
    todo.pop_front();
    const auto* c = d.find(id);
    if (!c) continue;
    if (nodes.size() >= kMaxLineageNodes) {
      truncated = true;
      break;
    }
    json n = node_json(*c);
    n["depth"] = depth;
    nodes.push_back(std::move(n));
    for (int64_t p : c->parents)
      if (seen.insert(p).second) todo.emplace_back(p, depth + 1);
  }
  return {{"root", candidate}, {"nodes", nodes}, {"truncated", truncated}};
}

std::string lineage_chain_svg(const RunData& d, int64_t candidate) {
  auto chain = chain_of(d, candidate);
  if (chain.size() > kChainDrawn) chain.resize(kChainDrawn);
  return chain.empty() ? "" : report::lineage_svg(chain);
}

std::string lineage_tree_html(const RunData& d, int64_t candidate) {
  TreeWriter w{d, {}, "<ul class=tree>"};
  w.node(candidate, 0);
  return w.out + "</ul>";
}

}  // namespace kevo::serve
