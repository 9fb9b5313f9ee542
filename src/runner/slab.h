// Where a candidate's runner places its buffers inside the one block it reserved before the
// candidate was loaded (its slab; ConfineRequest::reserve_bytes): offsets only, no device calls.
// Next fit from a cursor that moves past each new range, so a buffer taken while the old one of
// its name is still held never lands where that one was, and successive placements walk the slab
// (a candidate's pointer-keyed cache sees new addresses, as it did with fresh allocations).
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace kevo::runner {

class Slab {
 public:
  explicit Slab(uint64_t size, uint64_t align = 256);

  // The start of a free range of `bytes` (at least 1), `gap` bytes or more past the cursor or past
  // the free range's start, aligned; nullopt when no free range holds it (the caller allocates
  // on its own).
  std::optional<uint64_t> take(uint64_t bytes, uint64_t gap = 0);
  // The range taken at `offset`, free again; false when nothing was taken there.
  bool give(uint64_t offset);

  uint64_t size() const { return size_; }
  uint64_t free_bytes() const;
  size_t taken() const { return used_.size(); }

 private:
  std::optional<uint64_t> fit(uint64_t from, uint64_t bytes, uint64_t gap);
  uint64_t size_, align_;
  uint64_t cursor_ = 0;
  std::map<uint64_t, uint64_t> free_;  // start -> length, disjoint and merged
  std::map<uint64_t, uint64_t> used_;  // start -> length
};

}  // namespace kevo::runner
