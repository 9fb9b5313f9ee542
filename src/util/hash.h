// Content hashes for the compile cache and for input-integrity checks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kevo {

// Lowercase hex SHA-256 of the bytes.
std::string sha256_hex(std::string_view data);
std::string sha256_hex(const void* data, size_t n);

// Incremental SHA-256 for keys built from several parts.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  // Each part is length-prefixed so ("ab","c") and ("a","bc") hash differently.
  Sha256& add(std::string_view part);
  std::string hex();

 private:
  void* ctx_;
};

// Fast non-cryptographic 64-bit hash (FNV-1a) for checksumming buffers.
uint64_t fnv1a64(const void* data, size_t n);

}  // namespace kevo
