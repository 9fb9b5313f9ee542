// Answers stored in the run database, keyed by a hash of the full request, so a run can be
// replayed offline and a repeated experiment costs nothing. Table: llm_cache.
//
// The same request asked twice in a run usually wants two different samples, so rows are keyed
// by (request hash, occurrence): the n-th identical request of a session gets the n-th answer.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "util/result.h"

struct sqlite3;

namespace kevo::llm {

struct CacheEntry {
  std::string model;
  std::string request_json;   // the wire body, without any key
  std::string response_json;  // the normalized ChatResponse
  double cost_usd = 0;        // what it cost when it was asked
};

class ResponseCache {
 public:
  // Opens (creating it and its folder if needed) a database file and owns it.
  static Result<std::unique_ptr<ResponseCache>> open(const std::string& path);
  // Uses a database the run already has open; the caller keeps ownership and must keep it open
  // for the cache's lifetime.
  static Result<std::unique_ptr<ResponseCache>> attach(sqlite3* db);
  ~ResponseCache();
  ResponseCache(const ResponseCache&) = delete;
  ResponseCache& operator=(const ResponseCache&) = delete;

  // The occurrence number for the next ask of `key` in this session (0, 1, 2...).
  int next_occurrence(const std::string& key);
  Result<std::optional<CacheEntry>> get(const std::string& key, int occurrence);
  // One INSERT: a row is either fully written or absent, so an interrupted run never leaves a
  // half-stored answer behind.
  Status put(const std::string& key, int occurrence, const CacheEntry& e);
  Result<int64_t> size();

 private:
  ResponseCache(sqlite3* db, bool owned) : db_(db), owned_(owned) {}
  Status init();
  sqlite3* db_;
  bool owned_;
  std::mutex mu_;  // the connection may have been opened without SQLite's own mutex
  std::map<std::string, int> occurrences_;
};

}  // namespace kevo::llm
