// The run database as users reach it through the built kevo binary: many read commands
// at once while a run writes, read commands that never create or change files, resume refusals.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "store/run_db.h"
#include "support/temp_dir.h"
#include "util/subprocess.h"

namespace kevo::store {
namespace {

namespace fs = std::filesystem;
const fs::path kKevo = fs::path(KEVO_BINARY_DIR) / "bin" / "kevo";

RunResult kevo(std::vector<std::string> args) {
  args.insert(args.begin(), kKevo.string());
  auto r = run_process({.argv = args, .timeout = std::chrono::seconds(120)});
  return r ? *r : RunResult{};
}

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

std::string bytes_of(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

int64_t make_run(RunDb& db, const std::string& strategy = "eoh") {
  RunRow r;
  r.task = "gelu";
  r.task_dir = "/tasks/gelu";
  r.strategy = strategy;
  r.config_json = "{}";
  auto id = db.create_run(r);
  EXPECT_TRUE(id);
  return id ? *id : 0;
}

#define REQUIRE_KEVO() \
  if (!fs::exists(kKevo)) GTEST_SKIP() << "no kevo binary at " << kKevo

// 100 `kevo runs` / `kevo show` processes started at once while this process commits a candidate
// every 100 ms, as `kevo evolve` does. Before the store retried, about half of them failed with "database
// is locked" (every open began with a write transaction).
TEST(StoreCli, HundredConcurrentReadCommandsWhileARunWrites) {
  REQUIRE_KEVO();
  test::TempDir dir("kevo-store-cli");
  auto path = dir.path / "runs.db";
  auto writer = RunDb::open(path);
  ASSERT_TRUE(writer);
  int64_t run = make_run(**writer);
  std::atomic<bool> stop{false};
  std::atomic<int> commits{0}, commit_failures{0};
  std::thread w([&] {
    for (int seq = 1; !stop; ++seq) {
      CandidateRow c;
      c.run_id = run;
      c.seq = seq;
      c.outcome = CandidateOutcome::kPass;
      c.source = std::string(4000, 'k');
      if ((*writer)->add_candidate(c)) ++commits;
      else ++commit_failures;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  constexpr int kReaders = 100;
  std::vector<std::future<RunResult>> calls;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kReaders; ++i)
    calls.push_back(std::async(std::launch::async, [&, i] {
      return i % 2 ? kevo({"runs", "--db", path.string()}) : kevo({"show", std::to_string(run), "--db", path.string()});
    }));
  int failures = 0;
  double slowest = 0;
  std::string first;
  for (auto& f : calls) {
    RunResult r = f.get();
    slowest = std::max(slowest, r.wall_seconds);
    if (!r.ok()) {
      if (failures++ == 0) first = r.err;
    }
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  stop = true;
  w.join();
  std::printf("[figures] %d of %d read commands failed; %d commits (every 100 ms), %d failed; all %d done in "
              "%.2f s, slowest %.2f s\n",
              failures, kReaders, commits.load(), commit_failures.load(), kReaders, wall, slowest);
  EXPECT_EQ(failures, 0) << first;
  EXPECT_EQ(commit_failures.load(), 0);
  EXPECT_GE(commits.load(), 2);
}

TEST(StoreCli, ReadCommandsNeverCreateOrChangeFiles) {
  REQUIRE_KEVO();
  test::TempDir dir("kevo-store-cli");
  auto missing = dir.path / "typo" / "runs.db";
  for (auto args : std::vector<std::vector<std::string>>{{"runs", "--db", missing.string()},
                                                         {"show", "1", "--db", missing.string()},
                                                         {"export", "1", "--db", missing.string()}}) {
    auto r = kevo(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.out << r.err;
    EXPECT_TRUE(has(r.err, "no such run database")) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir.path / "typo"));
  // Another application's SQLite file: refused, byte for byte unchanged.
  auto foreign = dir.path / "app.sqlite";
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(foreign.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE users (name TEXT)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  const std::string before = bytes_of(foreign);
  for (auto args : std::vector<std::vector<std::string>>{{"runs", "--db", foreign.string()},
                                                         {"show", "1", "--db", foreign.string()},
                                                         {"evolve", "gelu", "--fake-gpu", "--db", foreign.string()}}) {
    auto r = kevo(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.out << r.err;
    EXPECT_TRUE(has(r.err, "not a kevo run database")) << r.err;
  }
  EXPECT_EQ(bytes_of(foreign), before);
}

TEST(StoreCli, ResumingATranslateRunIsRefusedNamingIt) {
  REQUIRE_KEVO();
  test::TempDir dir("kevo-store-cli");
  auto path = dir.path / "runs.db";
  int64_t id = 0;
  {
    auto db = RunDb::open(path);
    ASSERT_TRUE(db);
    id = make_run(**db, "translate");
    auto row = (*db)->get_run(id);
    row->status = RunStatus::kFailed;
    row->stop_reason = "translate_rounds_exhausted";
    row->note = "what happened";
    ASSERT_TRUE((*db)->update_run(*row));
  }
  auto r = kevo({"evolve", "--resume", std::to_string(id), "--db", path.string(), "--fake-gpu"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "kevo translate` run")) << r.err;
  auto db = RunDb::open_read_only(path);
  ASSERT_TRUE(db);
  auto row = (*db)->get_run(id);
  ASSERT_TRUE(row);
  EXPECT_EQ(row->stop_reason, "translate_rounds_exhausted");
  EXPECT_EQ(row->note, "what happened");
}

// A finished run whose best verified candidate was not faster than the baseline has no winner:
// `kevo export` refuses without --candidate (saying why), and exports the named one with it.
TEST(StoreCli, ExportWithoutAWinnerNeedsACandidate) {
  REQUIRE_KEVO();
  test::TempDir dir("kevo-store-cli");
  auto path = dir.path / "runs.db";
  int64_t id = 0, cand = 0;
  {
    auto db = RunDb::open(path);
    ASSERT_TRUE(db);
    RunRow run;
    run.task = "gelu";
    run.task_dir = (fs::path(KEVO_SOURCE_DIR) / "tasks" / "gelu").string();
    run.strategy = "eoh";
    run.config_json = "{}";
    auto made = (*db)->create_run(run);
    ASSERT_TRUE(made);
    id = *made;
    CandidateRow c;
    c.run_id = id;
    c.seq = 1;
    c.source = "#include <kevo/kernel.h>\nKEVO_EXPORT int kevo_forward(const kevo_args* a) { return 0; }\n";
    c.outcome = CandidateOutcome::kPass;
    c.speedup = 1.01;
    c.time_ms = 1.98;
    ASSERT_TRUE((*db)->add_candidate(c));
    cand = c.id;
    auto row = (*db)->get_run(id);
    row->status = RunStatus::kFinished;
    row->best_candidate = cand;
    row->final_json = R"({"winner": 0, "not_faster": true, "best_failed_held_out": false})";
    ASSERT_TRUE((*db)->update_run(*row));
  }
  auto out = dir.path / "out";
  auto r = kevo({"export", std::to_string(id), "--db", path.string(), "-o", out.string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "no faster kernel was found; the baseline stands")) << r.err;
  EXPECT_TRUE(has(r.err, "--candidate")) << r.err;
  EXPECT_FALSE(fs::exists(out));
  auto chosen = kevo({"export", std::to_string(id), "--db", path.string(), "-o", out.string(), "--candidate",
                      std::to_string(cand)});
  EXPECT_EQ(chosen.exit_code, 0) << chosen.out << chosen.err;
}

}  // namespace
}  // namespace kevo::store
