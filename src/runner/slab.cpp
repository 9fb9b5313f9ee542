#include "runner/slab.h"

#include <algorithm>

namespace kevo::runner {
namespace {

uint64_t round_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

}  // namespace

Slab::Slab(uint64_t size, uint64_t align) : size_(size), align_(std::max<uint64_t>(align, 1)) {
  if (size_) free_.emplace(0, size_);
}

uint64_t Slab::free_bytes() const {
  uint64_t n = 0;
  for (const auto& [start, len] : free_) n += len;
  return n;
}

// The first fit among free ranges ending after `from`, placed no earlier than `from` + gap.
std::optional<uint64_t> Slab::fit(uint64_t from, uint64_t bytes, uint64_t gap) {
  auto it = free_.upper_bound(from);
  if (it != free_.begin() && std::prev(it)->first + std::prev(it)->second > from) --it;
  for (; it != free_.end(); ++it) {
    const auto [start, len] = *it;
    const uint64_t at = round_up(std::max(start, from) + gap, align_);
    if (at + bytes > start + len) continue;
    free_.erase(it);
    if (at > start) free_.emplace(start, at - start);
    const uint64_t end = round_up(at + bytes, align_);
    if (start + len > end) free_.emplace(end, start + len - end);
    used_.emplace(at, std::min(end, start + len) - at);
    cursor_ = end;
    return at;
  }
  return std::nullopt;
}

std::optional<uint64_t> Slab::take(uint64_t bytes, uint64_t gap) {
  bytes = std::max<uint64_t>(bytes, 1);
  if (bytes > size_) return std::nullopt;
  if (auto at = fit(cursor_, bytes, gap)) return at;
  return fit(0, bytes, gap);  // wrapped: from the start of the slab
}

bool Slab::give(uint64_t offset) {
  auto u = used_.find(offset);
  if (u == used_.end()) return false;
  uint64_t start = u->first, len = u->second;
  used_.erase(u);
  auto next = free_.find(start + len);
  if (next != free_.end()) {
    len += next->second;
    free_.erase(next);
  }
  auto prev = free_.lower_bound(start);
  if (prev != free_.begin() && std::prev(prev)->first + std::prev(prev)->second == start) {
    --prev;
    start = prev->first;
    len += prev->second;
    free_.erase(prev);
  }
  free_.emplace(start, len);
  return true;
}

}  // namespace kevo::runner
