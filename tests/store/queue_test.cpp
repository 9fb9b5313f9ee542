// The evaluation queue and the blobs, on both backends: idempotent enqueue, claim order, concurrent
// claimers (each with its own connection), leases that expire, attempts that run out, heartbeats,
// first-result-wins completion, release. Leases are short (0.2 s) and the tests sleep past them;
// nothing asserts on how long anything took.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "store/backends.h"
#include "util/hash.h"

namespace kevo::store {
namespace {

using QueueTest = StoreTest;
INSTANTIATE_TEST_SUITE_P(Backends, QueueTest, ::testing::Values(Backend::kSqlite, Backend::kPostgres), backend_name);

constexpr double kShortLease = 0.2;
constexpr double kLongLease = 600;
void sleep_past_short_lease() { std::this_thread::sleep_for(std::chrono::milliseconds(500)); }

TEST_P(QueueTest, EnqueueIsIdempotentOnRunAndSeq) {
  auto db = writer();
  ASSERT_TRUE(db);
  int64_t run = make_run(*db), other = make_run(*db, "gelu");
  auto a = db->enqueue(run, 7, R"({"first":1})");
  ASSERT_TRUE(a) << a.error().message;
  auto again = db->enqueue(run, 7, R"({"second":2})");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(*again, *a);
  EXPECT_EQ(db->job(*a)->payload_json, R"({"first":1})");  // the first enqueue's payload is kept
  auto b = db->enqueue(other, 7, "{}");  // the same seq in another run is another job
  ASSERT_TRUE(b);
  EXPECT_NE(*b, *a);
  auto j = db->job(*a);
  ASSERT_TRUE(j) << j.error().message;
  EXPECT_EQ(j->run_id, run);
  EXPECT_EQ(j->seq, 7);
  EXPECT_EQ(j->state, JobState::kQueued);
  EXPECT_EQ(j->attempts, 0);
  EXPECT_GT(j->created_at, 0);
  EXPECT_FALSE(db->job(*b + 100));
}

TEST_P(QueueTest, ClaimsTheOldestJobFirstAndCanKeepToOneRun) {
  auto db = writer();
  ASSERT_TRUE(db);
  int64_t run = make_run(*db), other = make_run(*db, "gelu");
  std::vector<int64_t> ids;
  for (int seq = 1; seq <= 3; ++seq) ids.push_back(*db->enqueue(run, seq, "{}"));
  int64_t theirs = *db->enqueue(other, 1, "{}");
  auto only_other = db->claim("w", kLongLease, 3, other);
  ASSERT_TRUE(only_other) << only_other.error().message;
  ASSERT_TRUE(only_other->has_value());
  EXPECT_EQ((*only_other)->id, theirs);
  for (int64_t want : ids) {
    auto j = db->claim("w", kLongLease, 3);
    ASSERT_TRUE(j) << j.error().message;
    ASSERT_TRUE(j->has_value());
    EXPECT_EQ((*j)->id, want);
    EXPECT_EQ((*j)->state, JobState::kClaimed);
    EXPECT_EQ((*j)->worker, "w");
    EXPECT_EQ((*j)->attempts, 1);
    EXPECT_GT((*j)->lease_until, 0);
  }
  auto none = db->claim("w", kLongLease, 3);
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());  // every job is held under a live lease
}

// Workers in threads, each with its own connection, claim 200 jobs at once: each job exactly once.
TEST_P(QueueTest, ConcurrentClaimersNeverGetTheSameJob) {
  constexpr int kJobs = 200, kWorkers = 6;
  int64_t run = 0;
  {
    auto db = writer();
    ASSERT_TRUE(db);
    run = make_run(*db);
    for (int seq = 1; seq <= kJobs; ++seq) ASSERT_TRUE(db->enqueue(run, seq, "{}"));
  }
  std::mutex mu;
  std::map<int64_t, int> claimed;
  std::vector<std::string> errors;
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w)
    workers.emplace_back([&, w] {
      auto note = [&](const std::string& e) {
        std::lock_guard l(mu);
        errors.push_back(e);
      };
      auto db = open();
      if (!db) return note(db.error().message);
      const std::string name = "worker-" + std::to_string(w);
      for (;;) {
        auto j = (*db)->claim(name, kLongLease, 3, run);
        if (!j) return note(j.error().message);
        if (!j->has_value()) return;
        {
          std::lock_guard l(mu);
          ++claimed[(*j)->id];
        }
        auto done = (*db)->complete((*j)->id, name, "{}");
        if (!done || !*done) return note(done ? "complete returned false" : done.error().message);
      }
    });
  for (auto& t : workers) t.join();
  ASSERT_TRUE(errors.empty()) << errors.front();
  EXPECT_EQ(claimed.size(), static_cast<size_t>(kJobs));
  for (const auto& [id, n] : claimed) EXPECT_EQ(n, 1) << "job " << id << " was claimed " << n << " times";
  auto db = writer();
  ASSERT_TRUE(db);
  EXPECT_EQ(db->jobs(run, 0, JobState::kDone)->size(), static_cast<size_t>(kJobs));
}

TEST_P(QueueTest, AnExpiredLeaseIsClaimedAgainAndTheOldHolderLosesIt) {
  auto db = writer();
  ASSERT_TRUE(db);
  int64_t run = make_run(*db);
  int64_t id = *db->enqueue(run, 1, "{}");
  auto first = db->claim("w1", kShortLease, 3);
  ASSERT_TRUE(first && first->has_value());
  EXPECT_TRUE(*db->heartbeat(id, "w1", kShortLease));  // still w1's
  sleep_past_short_lease();
  auto second = db->claim("w2", kLongLease, 3);
  ASSERT_TRUE(second) << second.error().message;
  ASSERT_TRUE(second->has_value());
  EXPECT_EQ((*second)->id, id);
  EXPECT_EQ((*second)->attempts, 2);
  EXPECT_EQ((*second)->worker, "w2");
  auto hb = db->heartbeat(id, "w1", kLongLease);
  ASSERT_TRUE(hb) << hb.error().message;
  EXPECT_FALSE(*hb);  // w1 should drop it
  EXPECT_TRUE(*db->heartbeat(id, "w2", kLongLease));
  EXPECT_EQ(db->job(id)->worker, "w2");
}

TEST_P(QueueTest, AJobWhoseLeasesKeepExpiringFails) {
  auto db = writer();
  ASSERT_TRUE(db);
  int64_t run = make_run(*db);
  int64_t id = *db->enqueue(run, 1, "{}");
  int64_t next = *db->enqueue(run, 2, "{}");
  constexpr int kMaxAttempts = 2;
  for (int attempt = 1; attempt <= kMaxAttempts; ++attempt) {
    auto j = db->claim("w" + std::to_string(attempt), kShortLease, kMaxAttempts);
    ASSERT_TRUE(j && j->has_value());
    EXPECT_EQ((*j)->id, id);
    EXPECT_EQ((*j)->attempts, attempt);
    // Keep the second job out of the way under a live lease on the first round.
    if (attempt == 1) {
      ASSERT_EQ((*db->claim("holder", kLongLease, kMaxAttempts))->id, next);
    }
    sleep_past_short_lease();
  }
  auto j = db->claim("w3", kShortLease, kMaxAttempts);
  ASSERT_TRUE(j) << j.error().message;
  EXPECT_FALSE(j->has_value());  // given up, not claimed a third time
  auto failed = db->job(id);
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->state, JobState::kFailed);
  EXPECT_EQ(failed->attempts, kMaxAttempts);
  EXPECT_TRUE(has(failed->result_json, "lease expired 2 times (workers died or hung)")) << failed->result_json;
  EXPECT_GT(failed->finished_at, 0);
  auto late = db->complete(id, "w2", R"({"late":true})");  // a failed job stays failed
  ASSERT_TRUE(late);
  EXPECT_FALSE(*late);
}

TEST_P(QueueTest, TheFirstResultWins) {
  auto db = writer();
  ASSERT_TRUE(db);
  int64_t run = make_run(*db);
  int64_t id = *db->enqueue(run, 1, "{}");
  ASSERT_TRUE(db->claim("w1", kShortLease, 3)->has_value());
  sleep_past_short_lease();
  ASSERT_TRUE(db->claim("w2", kLongLease, 3)->has_value());
  // w1 finishes after all, before w2: its result is as good, and it is first.
  auto first = db->complete(id, "w1", R"({"by":"w1"})");
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_TRUE(*first);
  auto second = db->complete(id, "w2", R"({"by":"w2"})");
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_FALSE(*second);
  auto j = db->job(id);
  ASSERT_TRUE(j);
  EXPECT_EQ(j->state, JobState::kDone);
  EXPECT_EQ(j->result_json, R"({"by":"w1"})");
  EXPECT_EQ(j->worker, "w1");
  EXPECT_GT(j->finished_at, 0);
  EXPECT_FALSE(*db->heartbeat(id, "w2", kLongLease));  // a finished job is nobody's to renew
  EXPECT_FALSE(db->complete(id + 100, "w1", "{}"));     // no such job: an error, not false
}

TEST_P(QueueTest, ReleaseQueuesTheJobAgainWithoutCountingTheAttempt) {
  auto db = writer();
  ASSERT_TRUE(db);
  int64_t run = make_run(*db);
  int64_t id = *db->enqueue(run, 1, "{}");
  ASSERT_TRUE(db->claim("w1", kLongLease, 3)->has_value());
  ASSERT_TRUE(db->release(id, "someone-else"));  // not theirs: nothing changes
  EXPECT_EQ(db->job(id)->state, JobState::kClaimed);
  ASSERT_TRUE(db->release(id, "w1"));
  auto j = db->job(id);
  ASSERT_TRUE(j);
  EXPECT_EQ(j->state, JobState::kQueued);
  EXPECT_EQ(j->attempts, 0);
  EXPECT_EQ(j->worker, "");
  auto again = db->claim("w2", kLongLease, 1);  // one attempt allowed, and it is still there
  ASSERT_TRUE(again && again->has_value());
  EXPECT_EQ((*again)->id, id);
  EXPECT_EQ((*again)->attempts, 1);
}

TEST_P(QueueTest, ListsARunsJobsAfterAnIdAndByState) {
  auto db = writer();
  ASSERT_TRUE(db);
  int64_t run = make_run(*db), other = make_run(*db, "gelu");
  std::vector<int64_t> ids;
  for (int seq = 1; seq <= 3; ++seq) ids.push_back(*db->enqueue(run, seq, "{\"seq\":" + std::to_string(seq) + "}"));
  ASSERT_TRUE(db->enqueue(other, 1, "{}"));
  auto j = db->claim("w", kLongLease, 3, run);
  ASSERT_TRUE(j && j->has_value());
  ASSERT_TRUE(*db->complete((*j)->id, "w", R"({"ok":true})"));
  auto all = db->jobs(run);
  ASSERT_TRUE(all) << all.error().message;
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].id, ids[0]);
  EXPECT_EQ((*all)[0].result_json, R"({"ok":true})");
  EXPECT_EQ((*all)[2].payload_json, R"({"seq":3})");
  auto after = db->jobs(run, ids[0]);
  ASSERT_TRUE(after);
  ASSERT_EQ(after->size(), 2u);
  EXPECT_EQ((*after)[0].id, ids[1]);
  EXPECT_EQ(db->jobs(run, 0, JobState::kDone)->size(), 1u);
  EXPECT_EQ(db->jobs(run, 0, JobState::kQueued)->size(), 2u);
  EXPECT_EQ(db->jobs(run, ids[1], JobState::kQueued)->size(), 1u);
  EXPECT_TRUE(db->jobs(run, 0, JobState::kFailed)->empty());
}

TEST_P(QueueTest, BlobsRoundTripBinaryBytesUnderTheirHash) {
  auto db = writer();
  ASSERT_TRUE(db);
  std::string bytes("a\0b\xff\x00\x01 end", 10);
  bytes += std::string(100000, '\0');
  auto sha = db->put_blob(bytes);
  ASSERT_TRUE(sha) << sha.error().message;
  EXPECT_EQ(*sha, sha256_hex(bytes));
  auto again = db->put_blob(bytes);  // a second put is a no-op
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(*again, *sha);
  auto back = db->blob(*sha);
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_TRUE(back->has_value());
  EXPECT_EQ(**back, bytes);
  auto empty = db->put_blob("");
  ASSERT_TRUE(empty);
  EXPECT_EQ(*db->blob(*empty), std::optional<std::string>(""));
  auto missing = db->blob(std::string(64, '0'));
  ASSERT_TRUE(missing);
  EXPECT_FALSE(missing->has_value());
}

}  // namespace
}  // namespace kevo::store
