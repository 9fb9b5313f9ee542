// kevo serve over HTTP, against a SQLite file and a PostgreSQL database (skipped, visibly, without
// PostgreSQL): every endpoint's status, content type and security headers; 404s for unknown runs
// and candidates; 405 for every method but GET and HEAD; the Host check; escaping of stored text.
#include <gtest/gtest.h>

#include <regex>

#include "fixture.h"

namespace kevo::serve::testing {
namespace {

using nlohmann::json;

const char* kCsp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
                   "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

class ServeHttp : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    loc_.emplace(GetParam());
    if (!loc_->skip.empty()) GTEST_SKIP() << loc_->skip;
    auto db = store::RunDb::open(loc_->where);
    ASSERT_TRUE(db) << db.error().message;
    writer_ = std::move(*db);
    f_ = fill(*writer_);
    server_.emplace(loc_->where);
  }
  httplib::Result get(const std::string& path) { return server_->client().Get(path.c_str()); }
  json get_json(const std::string& path) {
    auto r = get(path);
    EXPECT_TRUE(r);
    if (!r) return json();
    EXPECT_EQ(r->status, 200) << path << ": " << r->body;
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json; charset=utf-8") << path;
    return json::parse(r->body, nullptr, false);
  }
  // Status, type and the security headers of GET `path`; returns the body.
  std::string expect(const std::string& path, int status, const std::string& type) {
    auto r = get(path);
    EXPECT_TRUE(r) << path;
    if (!r) return "";
    EXPECT_EQ(r->status, status) << path << ": " << r->body.substr(0, 300);
    EXPECT_EQ(r->get_header_value("Content-Type"), type) << path;
    EXPECT_EQ(r->get_header_value("Content-Security-Policy"), kCsp) << path;
    EXPECT_EQ(r->get_header_value("X-Content-Type-Options"), "nosniff") << path;
    EXPECT_EQ(r->get_header_value("X-Frame-Options"), "DENY") << path;
    return r->body;
  }
  std::string run1(const std::string& rest = "") { return "/runs/" + std::to_string(f_.run1) + rest; }

  std::optional<Location> loc_;
  std::unique_ptr<store::RunDb> writer_;
  Filled f_;
  std::optional<LiveServer> server_;
};

const char* kHtml = "text/html; charset=utf-8";
const char* kJson = "application/json; charset=utf-8";

TEST_P(ServeHttp, PagesAreHtmlWithTheirFigures) {
  std::string index = expect("/", 200, kHtml);
  EXPECT_TRUE(has(index, "vec_scale") && has(index, "softmax") && has(index, "Campaign")) << index;
  EXPECT_TRUE(has(index, "<script src=\"/app.js\" defer></script>"));
  std::string run = expect(run1(), 200, kHtml);
  for (const char* section : {"Progress", "Best speedup over time", "Validity and compile rates", "Failure reasons",
                              "hostA/gpu0", "hostB/gpu1", "Fake H100", "Fake H200", "Cost and tokens",
                              "Lineage of the winner", "Latest candidates", "Recent events", "12 / 40", "mismatch"})
    EXPECT_TRUE(has(run, section)) << section;
  // The run page lists candidates but ships none of their sources, prompts or answers.
  EXPECT_FALSE(has(run, "source-marker") || has(run, "PROMPT for") || has(run, "ANSWER "));
  std::string list = expect(run1("/candidates?limit=5"), 200, kHtml);
  EXPECT_TRUE(has(list, "1 to 5 of 12") && has(list, "older")) << list;
  std::string cand = expect(run1("/candidates/" + std::to_string(f_.cands[4])), 200, kHtml);
  for (const char* part : {"source-marker", "PROMPT for candidate 5", "ANSWER 5", "Diff against parent #",
                           "Correctness per config", "ragged", "95% CI", "speed of light", "memory bound",
                           "FAKE GPU"})  // the fixture's runs are fake: every page that shows a verdict says so
    EXPECT_TRUE(has(cand, part)) << part;
  std::string failed = expect(run1("/candidates/" + std::to_string(f_.cands[2])), 200, kHtml);
  EXPECT_TRUE(has(failed, "y[17]: got 3.5, want 0")) << "every config's errors";
  std::string lineage = expect(run1("/lineage"), 200, kHtml);
  EXPECT_TRUE(has(lineage, "Every ancestor") && has(lineage, "<svg")) << lineage;
}

TEST_P(ServeHttp, JsonApi) {
  json runs = get_json("/api/runs");
  ASSERT_EQ(runs["runs"].size(), 2u);
  EXPECT_EQ(runs["campaign"].size(), 1u);
  json s = get_json("/api/runs/" + std::to_string(f_.run1));
  EXPECT_EQ(s["candidates"], 12);
  EXPECT_EQ(s["progress"]["budget"]["candidates"], 40.0);
  EXPECT_EQ(s["progress"]["in_flight"], 1);
  EXPECT_EQ(s["rates"]["valid"], 8);
  EXPECT_EQ(s["rates"]["compiled"], 12);
  EXPECT_EQ(s["outcomes"]["incorrect"], 4);
  EXPECT_EQ(s["failure_reasons"][0]["reason"], "mismatch");
  EXPECT_EQ(s["failure_reasons"][0]["count"], 4);
  EXPECT_EQ(s["usage"]["calls"], 12);
  EXPECT_EQ(s["usage"]["tokens"], 12 * 1500);
  ASSERT_EQ(s["workers"].size(), 2u);
  EXPECT_EQ(s["workers"][0]["worker"], "hostA/gpu0");
  EXPECT_EQ(s["workers"][0]["in_flight"], 1);
  EXPECT_EQ(s["workers"][1]["busy_s"], 2.5);
  EXPECT_EQ(s["gpus"].size(), 2u);
  EXPECT_FALSE(s["best_so_far"].empty());
  EXPECT_GE(s["lineage"].size(), 2u);
  EXPECT_EQ(s["display"]["candidates"], "12 / 40");

  json page = get_json("/api/runs/" + std::to_string(f_.run1) + "/candidates?limit=5&offset=2");
  EXPECT_EQ(page["total"], 12);
  ASSERT_EQ(page["candidates"].size(), 5u);
  EXPECT_EQ(page["candidates"][0]["seq"], 10);  // newest first: 12, 11, then 10
  EXPECT_FALSE(page["candidates"][0].contains("source"));
  json fails = get_json("/api/runs/" + std::to_string(f_.run1) + "/candidates?outcome=fail&order=asc");
  EXPECT_EQ(fails["total"], 4);
  EXPECT_EQ(fails["candidates"][0]["seq"], 3);

  json c = get_json("/api/runs/" + std::to_string(f_.run1) + "/candidates/" + std::to_string(f_.cands[4]));
  EXPECT_TRUE(has(c["source"].get<std::string>(), "source-marker"));
  EXPECT_EQ(c["prompt"], "PROMPT for candidate 5: make it faster");
  EXPECT_EQ(c["configs"].size(), 2u);
  EXPECT_EQ(c["timing"]["time_ci_ms"].size(), 2u);
  EXPECT_GT(c["timing"]["sol_fraction"].get<double>(), 0);
  EXPECT_EQ(c["diff"]["against"], "parent #" + std::to_string(f_.cands[3]));
  EXPECT_GT(c["diff"]["added"].get<int>(), 0);

  json ev = get_json("/api/runs/" + std::to_string(f_.run1) + "/events?after=0&limit=5");
  EXPECT_EQ(ev["events"].size(), 5u);
  json ev2 = get_json("/api/runs/" + std::to_string(f_.run1) + "/events?after=" + ev["events"][4]["id"].dump());
  EXPECT_EQ(ev2["events"].size(), 7u);
  json tree = get_json("/api/runs/" + std::to_string(f_.run1) + "/lineage");
  EXPECT_FALSE(tree["nodes"].empty());
}

TEST_P(ServeHttp, ChartsAndAssets) {
  for (const char* chart : {"best.svg", "rates.svg", "activity.svg"}) {
    std::string svg = expect(run1("/charts/") + chart, 200, "image/svg+xml");
    EXPECT_EQ(svg.rfind("<svg", 0), 0u) << chart;
  }
  expect(run1("/charts/nope.svg"), 404, kHtml);
  EXPECT_TRUE(has(expect("/app.js", 200, "text/javascript; charset=utf-8"), "textContent"));
  EXPECT_TRUE(has(expect("/app.css", 200, "text/css; charset=utf-8"), "table.diff"));
}

TEST_P(ServeHttp, UnknownRunsAndCandidatesAre404) {
  expect("/runs/999", 404, kHtml);
  expect("/api/runs/999", 404, kJson);
  expect("/runs/999/candidates/1", 404, kHtml);
  expect(run1("/candidates/99999"), 404, kHtml);
  expect("/api" + run1("/candidates/99999"), 404, kJson);
  // A candidate of another run is not this run's.
  expect(run1("/candidates/" + std::to_string(f_.other)), 404, kHtml);
  expect("/runs/abc", 404, kHtml);
  expect("/nope", 404, kHtml);
  expect("/api/nope", 404, kJson);
  expect(run1("/nope"), 404, kHtml);
}

TEST_P(ServeHttp, OnlyGetAndHead) {
  auto cli = server_->client();
  std::vector<httplib::Result> replies;
  replies.push_back(cli.Post("/", "x=1", "application/x-www-form-urlencoded"));
  replies.push_back(cli.Post("/api/runs", "{}", "application/json"));
  replies.push_back(cli.Put(run1().c_str(), "{}", "application/json"));
  replies.push_back(cli.Delete(run1().c_str()));
  replies.push_back(cli.Patch("/api/runs/1", "{}", "application/json"));
  replies.push_back(cli.Options("/"));
  for (const auto& r : replies) {
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 405);
    EXPECT_EQ(r->get_header_value("Allow"), "GET, HEAD");
    EXPECT_EQ(r->get_header_value("Content-Security-Policy"), kCsp);
  }
  auto head = cli.Head(run1().c_str());
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_TRUE(head->body.empty());
  // The database is unchanged: still 2 runs, 12 candidates.
  EXPECT_EQ(writer_->list_runs()->size(), 2u);
  EXPECT_EQ(writer_->candidates(f_.run1)->size(), 12u);
}

TEST_P(ServeHttp, ForeignHostIsRefused) {
  auto cli = server_->client();
  auto r = cli.Get("/", {{"Host", "evil.example:80"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403);
  r = cli.Get("/", {{"Host", "localhost:1234"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST_P(ServeHttp, StoredTextIsEscaped) {
  std::string page = expect(run1("/candidates/" + std::to_string(f_.xss)), 200, kHtml);
  EXPECT_FALSE(has(page, "</script><script>document.title"));
  EXPECT_FALSE(has(page, "<img src=x"));
  EXPECT_TRUE(has(page, "&lt;/script&gt;&lt;script&gt;document.title"));
  EXPECT_TRUE(has(page, "&lt;img src=x onerror="));
  EXPECT_FALSE(has(page, "<script>alert(1)"));
  std::string run = expect(run1(), 200, kHtml);
  EXPECT_FALSE(has(run, "<img src=x"));
  EXPECT_TRUE(has(run, "&lt;img src=x"));
  // The only script element of any page is the served /app.js.
  std::smatch m;
  std::regex script("<script");
  EXPECT_EQ(std::distance(std::sregex_iterator(page.begin(), page.end(), script), std::sregex_iterator()), 1);
  EXPECT_EQ(std::distance(std::sregex_iterator(run.begin(), run.end(), script), std::sregex_iterator()), 1);
}

TEST_P(ServeHttp, FollowsARunThatIsWriting) {
  json before = get_json("/api/runs/" + std::to_string(f_.run1));
  int64_t prev = f_.cands.back();
  for (int i = 13; i <= 15; ++i) prev = add(*writer_, candidate(f_.run1, i, {prev}, true));
  json after = get_json("/api/runs/" + std::to_string(f_.run1));
  EXPECT_EQ(after["candidates"], 15);
  EXPECT_NE(after["version"], before["version"]);
  json page = get_json("/api/runs/" + std::to_string(f_.run1) + "/candidates?limit=1");
  EXPECT_EQ(page["candidates"][0]["seq"], 15);
}

INSTANTIATE_TEST_SUITE_P(Backends, ServeHttp, ::testing::Values(false, true),
                         [](const auto& p) { return p.param ? "Postgres" : "Sqlite"; });

}  // namespace
}  // namespace kevo::serve::testing
