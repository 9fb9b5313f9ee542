// The rules of kevo serve without a browser: listen addresses and the loopback default, the token
// (header, query then cookie, wrong or missing), the run cache's incremental reads, paths and ids,
// and the command line's refusal to listen beyond loopback without a token.
#include <gtest/gtest.h>

#include "fixture.h"
#include "serve/app.h"
#include "serve/auth.h"
#include "serve/listen.h"
#include "serve/run_cache.h"
#include "util/subprocess.h"

namespace kevo::serve::testing {
namespace {

TEST(ServeListen, ParsesAddresses) {
  auto a = parse_listen("127.0.0.1:8080");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 8080);
  a = parse_listen("[::1]:9000");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "::1");
  EXPECT_EQ(a->port, 9000);
  a = parse_listen(":0");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 0);
  EXPECT_FALSE(parse_listen("127.0.0.1:99999"));
  EXPECT_FALSE(parse_listen("::1:80"));
  EXPECT_FALSE(parse_listen("host:x"));
  EXPECT_FALSE(parse_listen(""));
}

TEST(ServeListen, LoopbackByDefaultElsewhereOnlyWithAToken) {
  EXPECT_TRUE(is_loopback("127.0.0.1"));
  EXPECT_TRUE(is_loopback("127.8.9.10"));
  EXPECT_TRUE(is_loopback("::1"));
  EXPECT_TRUE(is_loopback("localhost"));
  EXPECT_FALSE(is_loopback("0.0.0.0"));
  EXPECT_FALSE(is_loopback("::"));
  EXPECT_FALSE(is_loopback("10.0.0.1"));
  EXPECT_TRUE(check_bind({"127.0.0.1", 8080}, ""));
  auto refused = check_bind({"0.0.0.0", 8080}, "");
  ASSERT_FALSE(refused);
  EXPECT_TRUE(has(refused.error().message, "--token"));
  EXPECT_TRUE(check_bind({"0.0.0.0", 8080}, "s3cret-token"));
  EXPECT_FALSE(check_bind({"0.0.0.0", 8080}, "short"));
  EXPECT_FALSE(check_bind({"127.0.0.1", 8080}, "has;semicolon"));
}

TEST(ServeListen, HostHeader) {
  ListenAddress l{"127.0.0.1", 8080};
  EXPECT_TRUE(host_allowed("127.0.0.1:8080", l, false));
  EXPECT_TRUE(host_allowed("localhost", l, false));
  EXPECT_TRUE(host_allowed("[::1]:8080", l, false));
  EXPECT_FALSE(host_allowed("attacker.example:8080", l, false));
  EXPECT_FALSE(host_allowed("", l, false));
  EXPECT_TRUE(host_allowed("attacker.example:8080", l, true));  // the token guards it
}

TEST(ServeApp, PathsAndIds) {
  EXPECT_EQ(split_path("/"), std::vector<std::string>{});
  EXPECT_EQ(split_path("/runs/3/"), (std::vector<std::string>{"runs", "3"}));
  EXPECT_EQ(parse_id("42"), 42);
  EXPECT_EQ(parse_id("0x1"), 0);
  EXPECT_EQ(parse_id("-1"), 0);
  EXPECT_EQ(parse_id("1234567890123456789"), 0);
}

class ServeToken : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = store::RunDb::open(loc_.where);
    ASSERT_TRUE(db);
    f_ = fill(**db);
    server_.emplace(loc_.where, "tok-12345678");
  }
  Location loc_{false};
  Filled f_;
  std::optional<LiveServer> server_;
};

TEST_F(ServeToken, EveryRequestNeedsIt) {
  auto cli = server_->client();
  for (const char* path : {"/", "/api/runs", "/runs/1", "/app.js", "/runs/1/charts/best.svg"}) {
    auto r = cli.Get(path);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 401) << path;
    EXPECT_EQ(r->get_header_value("WWW-Authenticate"), "Bearer");
    EXPECT_FALSE(has(r->body, "vec_scale"));
  }
  auto wrong = cli.Get("/api/runs", {{"Authorization", "Bearer tok-12345679"}});
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  auto wrong_q = cli.Get("/?token=tok-1234567");
  ASSERT_TRUE(wrong_q);
  EXPECT_EQ(wrong_q->status, 401);
}

TEST_F(ServeToken, BearerQueryAndCookie) {
  auto cli = server_->client();
  auto bearer = cli.Get("/api/runs", {{"Authorization", "Bearer tok-12345678"}});
  ASSERT_TRUE(bearer);
  EXPECT_EQ(bearer->status, 200);
  EXPECT_TRUE(has(bearer->body, "vec_scale"));
  // ?token= once: the page redirects to its address without the token and sets the cookie.
  auto once = cli.Get("/runs/1/candidates?token=tok-12345678&limit=5");
  ASSERT_TRUE(once);
  EXPECT_EQ(once->status, 303);
  EXPECT_EQ(once->get_header_value("Location"), "/runs/1/candidates?limit=5");
  const std::string cookie = once->get_header_value("Set-Cookie");
  EXPECT_TRUE(has(cookie, "kevo_token=tok-12345678") && has(cookie, "HttpOnly") && has(cookie, "SameSite=Strict"));
  auto with_cookie = cli.Get("/runs/1/candidates?limit=5", {{"Cookie", "other=1; kevo_token=tok-12345678"}});
  ASSERT_TRUE(with_cookie);
  EXPECT_EQ(with_cookie->status, 200);
  EXPECT_TRUE(has(with_cookie->body, "1 to 5 of 12"));
  // The API answers at once (and sets the cookie too).
  auto api = cli.Get("/api/runs?token=tok-12345678");
  ASSERT_TRUE(api);
  EXPECT_EQ(api->status, 200);
  EXPECT_FALSE(api->get_header_value("Set-Cookie").empty());
  // Writes stay refused even with the token.
  auto post = cli.Post("/api/runs", {{"Authorization", "Bearer tok-12345678"}}, "{}", "application/json");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
}

TEST(ServeCache, ReadsNewCandidatesOneByOne) {
  Location loc(false);
  auto w = store::RunDb::open(loc.where);
  ASSERT_TRUE(w);
  Filled f = fill(**w, 6);
  auto r = store::RunDb::open_read_only(loc.where);
  ASSERT_TRUE(r);
  RunCache cache(**r, 0);
  auto look = [&](int64_t run) {
    RunData copy;
    EXPECT_TRUE(cache.with_run(run, [&](const RunData& d) {
      copy.candidates = d.candidates;
      copy.full_loads = d.full_loads;
      copy.version = d.version;
    }));
    return copy;
  };
  RunData a = look(f.run1);
  EXPECT_EQ(a.candidates.size(), 6u);
  EXPECT_EQ(a.full_loads, 1);
  EXPECT_TRUE(a.candidates[0].source.empty() && a.candidates[0].prompt.empty()) << "slim rows";
  EXPECT_EQ(look(f.run1).version, a.version) << "nothing changed";
  // New candidates of this run, interleaved with another run's, are read by id.
  for (int i = 7; i <= 10; ++i) {
    add(**w, candidate(f.run1, i, {}, true));
    add(**w, candidate(f.run2, i, {}, true));
  }
  RunData b = look(f.run1);
  ASSERT_EQ(b.candidates.size(), 10u);
  EXPECT_EQ(b.full_loads, 1);
  EXPECT_NE(b.version, a.version);
  for (size_t i = 0; i < b.candidates.size(); ++i) EXPECT_EQ(b.candidates[i].seq, int(i + 1));
  EXPECT_FALSE(cache.with_run(999, [](const RunData&) {}));
}

TEST(ServeCache, TrustsTotalsForTheirMaxAge) {
  Location loc(false);
  auto w = store::RunDb::open(loc.where);
  ASSERT_TRUE(w);
  Filled f = fill(**w, 3);
  auto r = store::RunDb::open_read_only(loc.where);
  ASSERT_TRUE(r);
  RunCache cache(**r, 3600);
  size_t seen = 0;
  auto count = [&] {
    EXPECT_TRUE(cache.with_run(f.run1, [&](const RunData& d) { seen = d.candidates.size(); }));
    return seen;
  };
  EXPECT_EQ(count(), 3u);
  add(**w, candidate(f.run1, 4, {}, true));
  EXPECT_EQ(count(), 3u) << "totals are an hour fresh: not read again";
  RunCache eager(**r, 0);
  EXPECT_TRUE(eager.with_run(f.run1, [&](const RunData& d) { seen = d.candidates.size(); }));
  EXPECT_EQ(seen, 4u);
}

TEST(ServeCli, RefusesANonLoopbackAddressWithoutAToken) {
  Location loc(false);
  { auto db = store::RunDb::open(loc.where); ASSERT_TRUE(db); }
  auto r = run_process({.argv = {KEVO_BINARY_DIR "/bin/kevo", "serve", "--db", loc.where, "--listen", "0.0.0.0:0"},
                        .env_add = {{"KEVO_SERVE_TOKEN", ""}},
                        .timeout = std::chrono::milliseconds(60000)});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->exit_code, 2) << r->err;
  EXPECT_TRUE(has(r->err, "refusing to listen on 0.0.0.0")) << r->err;
  auto help = run_process({.argv = {KEVO_BINARY_DIR "/bin/kevo", "serve", "--help"}});
  ASSERT_TRUE(help);
  EXPECT_TRUE(has(help->out, "Examples:")) << help->out;
}

// A port another server listens on is refused, never shared: with SO_REUSEPORT both would bind
// and the kernel would split connections between two databases.
TEST(ServeBind, APortInUseIsRefused) {
  Location loc(false);
  { auto db = store::RunDb::open(loc.where); ASSERT_TRUE(db); }
  LiveServer first(loc.where);
  ASSERT_GT(first.port(), 0);
  auto second = Server::open({loc.where, {"127.0.0.1", first.port()}, "", false, 0});
  ASSERT_TRUE(second) << second.error().message;
  auto port = (*second)->bind();
  EXPECT_FALSE(port) << "a second server bound port " << first.port();
  if (!port) {
    EXPECT_TRUE(has(port.error().message, "in use")) << port.error().message;
  }
}

TEST(ServeCli, ExitsThreeOnAPortInUse) {
  Location loc(false);
  { auto db = store::RunDb::open(loc.where); ASSERT_TRUE(db); }
  LiveServer first(loc.where);
  ASSERT_GT(first.port(), 0);
  auto r = run_process({.argv = {KEVO_BINARY_DIR "/bin/kevo", "serve", "--db", loc.where, "--no-warm", "--listen",
                                 "127.0.0.1:" + std::to_string(first.port())},
                        .timeout = std::chrono::milliseconds(10000)});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->exit_code, 3) << r->out << r->err;
  EXPECT_TRUE(has(r->err, "cannot listen on 127.0.0.1:" + std::to_string(first.port()))) << r->err;
}

}  // namespace
}  // namespace kevo::serve::testing
