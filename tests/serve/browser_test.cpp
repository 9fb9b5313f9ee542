// kevo serve in a real browser (Debian's chromium, headless; skipped, visibly, where it is not
// installed): the run page of a run that is being written shows a larger candidate count on a
// later load, its script keeps it current from the JSON API, a candidate's source is rendered as
// text, and script in stored text (a source with </script><script>, a name with an onerror
// attribute) is shown, never run. No timed assertion: the test waits for the writer's progress.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <regex>

#include "fixture.h"
#include "util/subprocess.h"

namespace kevo::serve::testing {
namespace {

class Browser {
 public:
  Browser() {
    for (const char* name : {"chromium", "chromium-browser"})
      if (auto p = find_program(name)) {
        exe_ = *p;
        break;
      }
  }
  bool found() const { return !exe_.empty(); }
  // The DOM after the page has loaded (and run its script for `virtual_ms` of virtual time).
  std::string dump(const std::string& url, int virtual_ms = 0) {
    const auto profile = dir_.path / ("profile-" + std::to_string(++n_));
    std::vector<std::string> argv = {exe_, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                                     "--no-first-run", "--disable-background-networking", "--disable-component-update",
                                     "--disable-sync", "--user-data-dir=" + profile.string()};
    if (virtual_ms) argv.push_back("--virtual-time-budget=" + std::to_string(virtual_ms));
    argv.push_back("--dump-dom");
    argv.push_back(url);
    auto r = run_process({.argv = argv, .timeout = std::chrono::milliseconds(120000), .max_output_bytes = 64 << 20});
    EXPECT_TRUE(r && r->ok()) << (r ? r->describe() + "\n" + r->err.substr(0, 2000) : r.error().message);
    return r ? r->out : "";
  }

 private:
  std::string exe_;
  test::TempDir dir_{"kevo-serve-browser"};
  int n_ = 0;
};

// The candidate count the run page shows ("12 / 40" -> 12); -1 when absent.
int shown_count(const std::string& dom) {
  std::smatch m;
  if (!std::regex_search(dom, m, std::regex(R"re(data-live="candidates">(\d+))re"))) return -1;
  return std::stoi(m[1]);
}

int count_of(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// Adds a candidate to the run every 100 ms (each named with an onerror payload) until stopped.
class Writer {
 public:
  Writer(const std::string& where, int64_t run, int64_t parent, int first_seq) {
    thread_ = std::thread([=, this] {
      auto db = store::RunDb::open(where);
      if (!db) return;
      int64_t prev = parent;
      for (int seq = first_seq; !stop_ && seq < first_seq + 600; ++seq) {
        auto c = candidate(run, seq, {prev}, seq % 4 != 0);
        c.name = kXssName;
        prev = add(**db, c);
        ++written_;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });
  }
  ~Writer() {
    stop_ = true;
    thread_.join();
  }
  int written() const { return written_; }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int> written_{0};
  std::thread thread_;
};

class ServeBrowser : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!browser_.found()) GTEST_SKIP() << "chromium not installed (apt-get install chromium): browser tests skipped";
    auto db = store::RunDb::open(loc_.where);
    ASSERT_TRUE(db);
    f_ = fill(**db);
    server_.emplace(loc_.where);
  }
  Browser browser_;
  Location loc_{false};
  Filled f_;
  std::optional<LiveServer> server_;
};

TEST_F(ServeBrowser, RunPageFollowsARunThatIsWriting) {
  Writer writer(loc_.where, f_.run1, f_.cands.back(), 13);
  const std::string page = server_->url("/runs/" + std::to_string(f_.run1));
  std::string first = browser_.dump(page);
  const int before = shown_count(first), written = writer.written();
  ASSERT_GE(before, 12) << first.substr(0, 2000);
  // Wait for the writer to add a few more (its progress, not a clock, decides).
  for (int i = 0; i < 600 && writer.written() < written + 5; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_GE(writer.written(), written + 5) << "the writer stalled";
  // This load also runs the page's script for 4 s of virtual time: it polls the API.
  std::string later = browser_.dump(page, 4000);
  EXPECT_GT(shown_count(later), before) << later.substr(0, 2000);
  EXPECT_TRUE(has(later, "data-live-state=\"ok\"")) << "the script did not reach the API";
  // Names with an onerror attribute came through the server's HTML and the script's rows alike.
  EXPECT_TRUE(has(later, "&lt;img src=x onerror="));
  EXPECT_FALSE(has(later, "data-pwned=\""));
  EXPECT_FALSE(has(later, "<img src=\"x\"") || has(later, "<img src=x"));

  std::string cand = browser_.dump(server_->url("/runs/" + std::to_string(f_.run1) + "/candidates/" +
                                                std::to_string(f_.cands[4])));
  EXPECT_TRUE(has(cand, "<pre class=\"source\" id=\"source-text\">// candidate source 5 source-marker\nint kevo_forward()"))
      << cand.substr(0, 3000);
  EXPECT_TRUE(has(cand, "Correctness per config"));
}

TEST_F(ServeBrowser, ScriptInStoredTextIsShownNotRun) {
  const std::string url = server_->url("/runs/" + std::to_string(f_.run1) + "/candidates/" + std::to_string(f_.xss));
  std::string dom = browser_.dump(url, 2000);
  ASSERT_TRUE(has(dom, "xss-marker")) << dom.substr(0, 2000);
  // The text is there, as text.
  EXPECT_TRUE(has(dom, "&lt;/script&gt;&lt;script&gt;document.title='pwned'")) << dom.substr(0, 4000);
  EXPECT_TRUE(has(dom, "&lt;img src=x onerror="));
  // Nothing of it ran or became an element: no attribute set, title intact, one script (app.js).
  EXPECT_FALSE(has(dom, "data-pwned=")) << dom.substr(0, 4000);
  EXPECT_TRUE(has(dom, "<title>candidate #"));
  EXPECT_EQ(count_of(dom, "<script"), 1);
  EXPECT_EQ(count_of(dom, "<img"), 0);
}

}  // namespace
}  // namespace kevo::serve::testing
