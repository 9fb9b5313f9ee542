#include "archive/retrieval.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <string_view>
#include <unordered_set>

namespace kevo::archive {

namespace {

// How many entries the feature stage hands to the source stage, per entry asked for.
constexpr size_t kShortlistPerMatch = 8;

double jaccard(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.empty() && b.empty()) return 0;
  size_t common = 0;
  for (const auto& x : a) common += std::find(b.begin(), b.end(), x) != b.end();
  const size_t all = a.size() + b.size() - common;
  return all ? double(common) / double(all) : 0;
}

// 16-bit floats behave alike in a kernel (tensor cores, half2 loads) whatever their exponent width.
std::vector<std::string> dtype_classes(const std::vector<std::string>& dtypes) {
  std::vector<std::string> out;
  for (const auto& d : dtypes) {
    std::string c = d == "f16" || d == "bf16" ? "half" : d;
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

// The name before " (" of a config text such as "main (N=1048576)".
std::string config_name(const std::string& config) { return config.substr(0, config.find(" (")); }

std::unordered_set<std::string_view> identifiers(const std::string& s) {
  std::unordered_set<std::string_view> out;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (!std::isalpha(c) && c != '_') {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
    out.insert(std::string_view(s).substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace

double feature_score(const TaskFeatures& a, const TaskFeatures& b) {
  double s = 0;
  if (!a.op_kind.empty() && a.op_kind == b.op_kind) s += 4;
  if (!a.bound.empty() && a.bound == b.bound) s += 2;
  s += jaccard(a.dtypes, b.dtypes) + jaccard(dtype_classes(a.dtypes), dtype_classes(b.dtypes));
  if (a.main_elements > 0 && b.main_elements > 0)
    s += 1 / (1 + std::abs(std::log10(a.main_elements / b.main_elements)));
  if (!a.shapes.empty() && !b.shapes.empty()) {
    auto rank = [](const TaskFeatures& t) { return std::count(t.shapes[0].begin(), t.shapes[0].end(), '='); };
    if (rank(a) == rank(b)) s += 0.5;
  }
  return s;
}

double source_similarity(const std::string& a, const std::string& b) {
  const auto x = identifiers(a), y = identifiers(b);
  if (x.empty() || y.empty()) return 0;
  size_t common = 0;
  for (const auto& t : x) common += y.count(t);
  return double(common) / double(x.size() + y.size() - common);
}

bool allowed(const IndexedEntry& e, const Query& q) {
  if (e.held_out == store::HeldOut::kFailed) return false;
  if (e.fake != q.fake) return false;
  if (e.task == q.task) {
    const std::string name = config_name(e.config);
    for (const auto& h : q.held_out_configs)
      if (name == h) return false;
  }
  return true;
}

ArchiveIndex::ArchiveIndex(const std::vector<store::ArchiveRow>& rows) {
  entries_.reserve(rows.size());
  for (const auto& r : rows)
    entries_.push_back({r.id, r.task, r.gpu, r.config, TaskFeatures::from_text(r.features_json), r.held_out, r.fake,
                        r.speedup});
}

const IndexedEntry* ArchiveIndex::find(int64_t id) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), id,
                             [](const IndexedEntry& e, int64_t v) { return e.id < v; });
  return it != entries_.end() && it->id == id ? &*it : nullptr;
}

std::vector<int64_t> ArchiveIndex::shortlist(const Query& q, size_t n) const {
  std::vector<std::pair<double, const IndexedEntry*>> scored;
  scored.reserve(entries_.size());
  for (const auto& e : entries_) {
    if (!allowed(e, q)) continue;
    double s = feature_score(q.features, e.features);
    if (!q.gpu.empty() && e.gpu == q.gpu) s += 0.5;          // measured where this run measures
    s += std::min(1.0, std::log2(std::max(e.speedup, 1.0)) / 4);  // a larger effect teaches more
    scored.emplace_back(s, &e);
  }
  const size_t m = std::min(n, scored.size());
  std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(m), scored.end(),
                    [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second->id < b.second->id); });
  std::vector<int64_t> out;
  for (size_t i = 0; i < m; ++i) out.push_back(scored[i].second->id);
  return out;
}

Result<std::vector<Match>> retrieve(const ArchiveIndex& index, const Query& q, size_t k,
                                    const std::function<Result<store::ArchiveRow>(int64_t)>& load) {
  std::vector<Match> ranked;
  for (int64_t id : index.shortlist(q, k * kShortlistPerMatch)) {
    auto row = load(id);
    if (!row) return row.unexpected();
    const IndexedEntry* e = index.find(id);
    double s = feature_score(q.features, e->features) + (e->gpu == q.gpu ? 0.5 : 0) +
               std::min(1.0, std::log2(std::max(e->speedup, 1.0)) / 4);
    if (!q.source.empty()) s += source_similarity(q.source, row->source);
    ranked.push_back({std::move(*row), s});
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const Match& a, const Match& b) { return a.score > b.score; });
  std::vector<Match> out;
  std::set<std::string> tasks;
  for (auto& m : ranked) {
    if (out.size() >= k) break;
    if (!tasks.insert(m.entry.task).second) continue;
    out.push_back(std::move(m));
  }
  return out;
}

Result<std::vector<Match>> retrieve(store::RunDb& db, const Query& q, size_t k) {
  auto light = db.archive(false);
  if (!light) return light.unexpected();
  ArchiveIndex index(*light);
  return retrieve(index, q, k, [&db](int64_t id) { return db.archive_entry(id); });
}

}  // namespace kevo::archive
