// One archive entry per kernel and GPU: the same source measured on the same GPU for the same task
// is the same entry, whichever database or file it came through.
#pragma once

#include <string>

#include "store/archive_row.h"
#include "util/hash.h"

namespace kevo::archive {

inline std::string fingerprint_of(const store::ArchiveRow& r) {
  std::string key = r.task;
  key += '\0';
  key += r.gpu;
  key += '\0';
  key += r.source;
  return sha256_hex(key);
}

}  // namespace kevo::archive
