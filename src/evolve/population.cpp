#include "evolve/population.h"

#include <algorithm>

namespace kevo::evolve {

const char* to_string(PolicyKind k) { return enum_text(kPolicyKindTexts, k); }

std::optional<PolicyKind> parse_policy(std::string_view s) { return enum_parse(kPolicyKindTexts, s); }

std::vector<double> rank_probabilities(size_t n) {
  std::vector<double> p(n);
  double sum = 0;
  for (size_t r = 0; r < n; ++r) sum += p[r] = 1.0 / static_cast<double>(r + 1 + n);  // ranks counted from 1
  for (auto& x : p) x /= sum;
  return p;
}

Population::Population(PopulationConfig cfg) : cfg_(cfg) {
  if (cfg_.size < 1) cfg_.size = 1;
  if (cfg_.kind != PolicyKind::kIslands) cfg_.islands = 1;
  if (cfg_.islands < 1) cfg_.islands = 1;
  if (cfg_.kind == PolicyKind::kSingleBest) cfg_.size = 1;
  islands_.resize(static_cast<size_t>(cfg_.islands));
}

namespace {
bool faster(const Member& a, const Member& b) { return a.speed.value > b.speed.value; }
}  // namespace

void Population::insert_elite(std::vector<Member>& pool, const Member& m) {
  for (const auto& x : pool)
    if (x.id == m.id) return;
  pool.push_back(m);
  std::stable_sort(pool.begin(), pool.end(), faster);
  if (pool.size() > static_cast<size_t>(cfg_.size)) pool.resize(static_cast<size_t>(cfg_.size));
}

bool Population::offer(const Member& m) {
  bool new_best = !best_ || confidently_faster(m.speed, best_->speed);
  if (new_best) best_ = m;
  switch (cfg_.kind) {
    case PolicyKind::kSingleBest:
      // The one solution is the best: it changes only with confidence.
      if (new_best) islands_[0] = {m};
      break;
    case PolicyKind::kElite:
      insert_elite(islands_[0], m);
      break;
    case PolicyKind::kIslands: {
      size_t i = static_cast<size_t>(std::clamp(m.island, 0, cfg_.islands - 1));
      insert_elite(islands_[i], m);
      break;
    }
    case PolicyKind::kMapElites: {
      auto it = cells_.find(m.cell);
      if (it == cells_.end() || m.speed.value > it->second.speed.value) cells_[m.cell] = m;
      break;
    }
  }
  return new_best;
}

Completion Population::note_completed() {
  ++completed_;
  Completion c;
  if (cfg_.kind != PolicyKind::kIslands || cfg_.islands < 2) return c;
  if (cfg_.migration_interval > 0 && completed_ % cfg_.migration_interval == 0) {
    migrate();
    c.migrated = true;
  }
  if (cfg_.reset_interval > 0 && completed_ % cfg_.reset_interval == 0) c.reset = reset_worse_half();
  return c;
}

std::vector<int> Population::reset_worse_half() {
  // Islands ranked by their best member (an empty island ranks last; ties keep island order).
  std::vector<int> order(islands_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  auto best_of = [&](int i) {
    const auto& isl = islands_[static_cast<size_t>(i)];
    return isl.empty() ? -1.0 : isl.front().speed.value;
  };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return best_of(a) > best_of(b); });
  size_t keep = (order.size() + 1) / 2;
  if (best_of(order[0]) < 0) return {};  // nothing to seed from yet
  std::vector<int> reset;
  for (size_t k = keep; k < order.size(); ++k) {
    int dst = order[k];
    // The k-th worst island takes the best of the k-th best survivor (cycling over survivors).
    int src = order[(k - keep) % keep];
    if (islands_[static_cast<size_t>(src)].empty()) src = order[0];
    Member seed = islands_[static_cast<size_t>(src)].front();
    seed.island = dst;
    islands_[static_cast<size_t>(dst)] = {seed};
    reset.push_back(dst);
  }
  std::sort(reset.begin(), reset.end());
  return reset;
}

void Population::migrate() {
  // Copies are taken before any island changes, so a migrant moves one step per migration.
  std::vector<std::vector<Member>> out(islands_.size());
  for (size_t i = 0; i < islands_.size(); ++i)
    for (int k = 0; k < cfg_.migrants && k < static_cast<int>(islands_[i].size()); ++k)
      out[i].push_back(islands_[i][static_cast<size_t>(k)]);
  for (size_t i = 0; i < islands_.size(); ++i) {
    auto& dst = islands_[(i + 1) % islands_.size()];
    for (Member m : out[i]) {
      m.island = static_cast<int>((i + 1) % islands_.size());
      bool present = std::any_of(dst.begin(), dst.end(), [&](const Member& x) { return x.id == m.id; });
      if (present) continue;
      if (dst.size() >= static_cast<size_t>(cfg_.size)) dst.pop_back();  // the worst
      dst.push_back(m);
      std::stable_sort(dst.begin(), dst.end(), faster);
    }
  }
}

std::vector<Member> Population::members(int island) const {
  std::vector<Member> out;
  if (cfg_.kind == PolicyKind::kMapElites) {
    for (const auto& [cell, m] : cells_) out.push_back(m);
  } else if (island >= 0 && island < cfg_.islands) {
    out = islands_[static_cast<size_t>(island)];
  } else {
    for (const auto& isl : islands_) out.insert(out.end(), isl.begin(), isl.end());
  }
  std::stable_sort(out.begin(), out.end(), faster);
  return out;
}

std::vector<Member> Population::select(int k, int island, std::mt19937_64& rng) const {
  std::vector<Member> pool = members(cfg_.kind == PolicyKind::kIslands ? island : -1);
  std::vector<Member> chosen;
  while (static_cast<int>(chosen.size()) < k && !pool.empty()) {
    size_t pick;
    if (cfg_.kind == PolicyKind::kMapElites) {
      pick = std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng);
    } else {
      // Ranks are over the members still available, so a second parent differs from the first.
      auto p = rank_probabilities(pool.size());
      pick = std::discrete_distribution<size_t>(p.begin(), p.end())(rng);
    }
    chosen.push_back(pool[pick]);
    pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(pick));
  }
  return chosen;
}

int Population::next_island() {
  int i = next_island_;
  next_island_ = (next_island_ + 1) % cfg_.islands;
  return i;
}

}  // namespace kevo::evolve
