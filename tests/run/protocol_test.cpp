// The typed checker <-> runner messages survive their JSON form, and a reply missing what the
// checker needs is an error, not a default.
#include "run/protocol.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace kevo::proto;

TEST(Protocol, TimeBatchRequestRoundTrip) {
  TimeBatchRequest q;
  q.slot = "cand";
  q.inputs.push_back({"x", 0, {4, 8}, 32, 128, 0, Gen{1, 0.5, 2.0, 0, 1, 77}});
  q.outputs.push_back({"y", 2, {4, 8}, 32, 64, 0, std::nullopt});
  q.scalars = {0.5};
  q.dims = {4, 8};
  q.first_call = 123456789012345ull;
  q.calls = 17;
  q.flush_bytes = 1 << 20;
  q.sums_key = ~0ull;
  q.export_outputs = true;
  q.state = true;
  json j = q;
  auto back = j.get<TimeBatchRequest>();
  EXPECT_EQ(back.slot, "cand");
  ASSERT_EQ(back.inputs.size(), 1u);
  ASSERT_TRUE(back.inputs[0].gen);
  EXPECT_EQ(back.inputs[0].gen->base, 77u);
  EXPECT_EQ(back.inputs[0].gen->kind, 1);
  EXPECT_FALSE(back.outputs[0].gen);
  EXPECT_EQ(back.outputs[0].numel, 32);
  EXPECT_EQ(back.first_call, 123456789012345ull);
  EXPECT_EQ(back.sums_key, ~0ull);
  EXPECT_EQ(back.calls, 17);
  EXPECT_TRUE(back.export_outputs && back.state);
}

TEST(Protocol, TimeBatchReplyRoundTripWithState) {
  TimeBatchReply r;
  r.ok = true;
  r.call_ms = {1.0, 2.0};
  r.flush_ms = {0.1, 0.1};
  r.sums = {{Sums{10, 0, 4.0, 1.0, -1.0}}, {Sums{10, 1, 5.0, 2.0, -2.0}}};
  r.rc = {0, 0};
  r.state_before = DeviceState{{{"limit_persisting_l2", 0}}};
  r.state_after = DeviceState{{{"limit_persisting_l2", 4096}}};
  json j = r;
  auto back = j.get<TimeBatchReply>();
  ASSERT_EQ(back.sums.size(), 2u);
  EXPECT_EQ(back.sums[1][0].nonfinite, 1);
  EXPECT_DOUBLE_EQ(back.sums[1][0].signed1, -2.0);
  ASSERT_TRUE(back.state_before && back.state_after);
  EXPECT_FALSE(*back.state_before == *back.state_after);
  EXPECT_EQ(back.state_before->diff(*back.state_after), "limit_persisting_l2: 0 -> 4096");
}

TEST(Protocol, ReplyWithoutItsFiguresIsAnError) {
  json j = {{"ok", true}};  // a runner that claims success but sends no call times
  EXPECT_THROW(j.get<TimeBatchReply>(), nlohmann::json::exception);
  json failed = {{"ok", false}, {"error", "boom"}, {"fatal", true}};
  auto r = failed.get<TimeBatchReply>();
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.fatal);
  EXPECT_EQ(r.error, "boom");
}

TEST(Protocol, ErrorReplyCarriesTheCudaErrorNumber) {
  ErrorReply fatal{.error = "cudaStreamSynchronize(stream_): cudaErrorIllegalAddress: ...", .fatal = true,
                   .cuda_error = 700};
  json j = fatal;
  EXPECT_EQ(j.value("ok", true), false);  // what the checker's other reads of a reply look at
  EXPECT_EQ(j.value("cuda_error", 0), 700);
  auto back = j.get<ErrorReply>();
  EXPECT_TRUE(back.fatal);
  EXPECT_EQ(back.cuda_error, 700);
  EXPECT_EQ(back.error, fatal.error);
  // A request the runner could not serve, and a fatal reply of a runner before the number.
  json bad = ErrorReply{.error = "bad request: x"};
  EXPECT_EQ(bad, (json{{"ok", false}, {"error", "bad request: x"}}));
  auto old = json{{"ok", false}, {"fatal", true}, {"error", "illegal"}}.get<ErrorReply>();
  EXPECT_TRUE(old.fatal);
  EXPECT_EQ(old.cuda_error, 0);
}

// Every command's request carries its name, and survives its JSON form.
TEST(Protocol, RequestsNameTheirCommandAndRoundTrip) {
  EXPECT_EQ(json(HelloRequest{}), (json{{"cmd", "hello"}}));
  auto load = json(LoadRequest{"cand", "/tmp/c.so", true});
  EXPECT_EQ(load["cmd"], "load");
  auto lq = load.get<LoadRequest>();
  EXPECT_EQ(lq.slot, "cand");
  EXPECT_EQ(lq.path, "/tmp/c.so");
  EXPECT_TRUE(lq.untrusted);

  RunRequest q{CallArgs{{0.5}, {4, 8}, 256}};
  q.slot = "cand";
  q.arena_size = 4096;
  q.inputs.push_back({"x", 0, {4, 8}, 32, 128, 0, Gen{1, 0.5, 2.0, 0, 1, 77}});
  q.outputs.push_back({"y", 0, {4, 8}, 32, 128, 256, std::nullopt});
  q.poison = q.placement = 1;
  q.keep = q.export_ipc = true;
  q.flush_bytes = 1 << 20;
  json j = q;
  EXPECT_EQ(j["cmd"], "run");
  EXPECT_EQ(j["export"], true);  // the wire's name (a keyword in C++)
  EXPECT_FALSE(j.contains("inputs_after"));  // absent, not empty: nothing is copied back
  auto back = j.get<RunRequest>();
  EXPECT_EQ(back.slot, "cand");
  EXPECT_EQ(back.scalars, std::vector<double>{0.5});
  EXPECT_EQ(back.dims, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(back.workspace_bytes, 256u);
  EXPECT_EQ(back.outputs.at(0).offset, 256u);
  EXPECT_EQ(back.inputs.at(0).gen->base, 77u);
  EXPECT_TRUE(back.keep && back.export_ipc);
  EXPECT_EQ(back.flush_bytes, std::optional<uint64_t>(1 << 20));

  CompareRequest c{1e-3, 1e-2};
  c.outputs.push_back({{"ab01", 0}, 1, std::nullopt, 32, 64, "base/out/y", 64, false});
  c.outputs.back().runs_ref = "snap/y";
  c.inputs.push_back({{"cd02", 8192}, 128, "base/in/x"});
  json cj = c;
  EXPECT_EQ(cj["cmd"], "compare");
  EXPECT_FALSE(cj["outputs"][0].contains("snapshot"));  // the runner takes a key's presence as a request
  EXPECT_FALSE(cj["outputs"][0].contains("ref_dtype"));
  auto cb = cj.get<CompareRequest>();
  EXPECT_DOUBLE_EQ(cb.rtol, 1e-2);
  ASSERT_EQ(cb.outputs.size(), 1u);
  EXPECT_EQ(cb.outputs[0].runs_ref, std::optional<std::string>("snap/y"));
  EXPECT_FALSE(cb.outputs[0].snapshot);
  EXPECT_FALSE(cb.outputs[0].check_poison);
  EXPECT_EQ(cb.inputs.at(0).ref, "base/in/x");
  EXPECT_EQ(cb.inputs.at(0).ipc.offset, 8192u);

  for (const json& r : {json(MaterializeRequest{{q.inputs}, {q.outputs}}), json(CollectRequest{q.outputs}),
                        json(ReleaseRequest{{"base/", "xfer/"}}), json(BandwidthRequest{}), json(ProbeRequest{"/p.so"})})
    EXPECT_TRUE(r.contains("cmd")) << r.dump();
  EXPECT_EQ(json(MaterializeRequest{}).get<MaterializeRequest>().inputs.size(), 0u);
  EXPECT_EQ(json(ReleaseRequest{{"a/"}}).get<ReleaseRequest>().prefixes, std::vector<std::string>{"a/"});
  EXPECT_EQ(json(BandwidthRequest{}).get<BandwidthRequest>().bytes, uint64_t(1) << 30);
  EXPECT_EQ(json(ProbeRequest{"/p.so"}).get<ProbeRequest>().path, "/p.so");
  EXPECT_EQ(json(CollectRequest{q.outputs}).get<CollectRequest>().outputs.at(0).name, "y");
  TimeBatchRequest tb{CallArgs{{1.0}, {2}, 0}};
  EXPECT_EQ(json(tb)["cmd"], "time_batch");
}

TEST(Protocol, RepliesRoundTrip) {
  HelloReply h;
  h.name = "H100";
  h.uuid = "u-1";
  h.cc_major = 9;
  h.l2_bytes = 52428800;
  h.total_mem = uint64_t(80) << 30;
  auto hb = json(h).get<HelloReply>();
  EXPECT_EQ(hb.name, "H100");
  EXPECT_EQ(hb.uuid, "u-1");
  EXPECT_EQ(hb.total_mem, uint64_t(80) << 30);

  LoadReply l{2, 3};
  EXPECT_EQ(json(l).get<LoadReply>().threads_after, 3);

  ConfineReply cr;
  cr.isolation.uid = 65534;
  cr.isolation.identity_dropped = true;
  cr.isolation.landlock_abi = 6;
  cr.isolation.seccomp = true;
  cr.state = DeviceState{{{"cache_config", 0}}};
  auto crb = json(cr).get<ConfineReply>();
  EXPECT_EQ(crb.isolation.uid, 65534);
  EXPECT_TRUE(crb.isolation.identity_dropped);
  EXPECT_EQ(crb.isolation.landlock_abi, 6);
  EXPECT_TRUE(crb.isolation.seccomp);
  ASSERT_TRUE(crb.state);
  EXPECT_TRUE(*crb.state == *cr.state);
  EXPECT_TRUE(json(ConfineReply{}).at("state").is_null());
  EXPECT_EQ(json(ConfineRequest{"/c.so", 4096}).at("cmd"), "confine");
  EXPECT_EQ(json(ConfineRequest{"/c.so", 4096}).get<ConfineRequest>().reserve_bytes, 4096u);

  RunReply r;
  r.rc = 3;
  r.after_stream_ms = 0.5;
  r.after_stream_cpu_ms = 0.25;
  r.violations = {{"foreign_stream", "on stream (nil)"}};
  r.outputs_ipc = {{"aa", 0}};
  r.inputs_ipc = {{"bb", 4096}};
  auto rb = json(r).get<RunReply>();
  EXPECT_EQ(rb.rc, 3);
  EXPECT_DOUBLE_EQ(rb.after_stream_cpu_ms, 0.25);
  EXPECT_EQ(rb.violations.at(0).kind, "foreign_stream");
  ASSERT_EQ(rb.inputs_ipc.size(), 1u);
  EXPECT_EQ(rb.inputs_ipc[0], (IpcBuffer{"bb", 4096}));  // a slab's buffer: its allocation's handle and where in it

  CompareReply c;
  c.outputs.push_back({CompareCounts{10, 1, 0, 1, 4, NAN, 1.0, HUGE_VAL, -HUGE_VAL}, std::nullopt});
  c.outputs.push_back({CompareCounts{}, CompareCounts{5, 0, 0, 0, -1, 0, 0, 0, 0}});
  c.inputs.push_back({7});
  c.out_of_bounds = "8 bytes at offset 4096 of an allocation of 4096";
  json cj = c;
  EXPECT_EQ(cj["outputs"][0]["cmp"]["first_got"], "nan");  // JSON has no NaN/Inf
  EXPECT_EQ(cj["outputs"][0]["cmp"]["max_rel_err"], "-inf");
  auto cb = cj.get<CompareReply>();
  EXPECT_TRUE(std::isnan(cb.outputs[0].cmp.first_got));
  EXPECT_EQ(cb.outputs[0].cmp.max_abs_err, HUGE_VAL);
  EXPECT_EQ(cb.outputs[0].cmp.max_rel_err, -HUGE_VAL);
  EXPECT_EQ(cb.outputs[0].cmp.first_bad, 4);
  EXPECT_FALSE(cb.outputs[0].runs);
  ASSERT_TRUE(cb.outputs[1].runs);
  EXPECT_EQ(cb.outputs[1].runs->count, 5);
  EXPECT_EQ(cb.inputs.at(0).differing_bytes, 7u);
  EXPECT_EQ(cb.out_of_bounds, c.out_of_bounds);
  EXPECT_TRUE((json{{"outputs", json::array()}}.get<CompareReply>().out_of_bounds.empty()));

  ConfineRequest cq{"/x.so"};
  EXPECT_EQ(json(cq).at("reserve_bytes"), 0u);  // none asked: every buffer its own allocation
  cq.reserve_bytes = 3 << 20;
  EXPECT_EQ(json(cq).get<ConfineRequest>().reserve_bytes, 3u << 20);

  auto mb = json(MaterializeReply{{"i0"}, {"o0", "o1"}}).get<MaterializeReply>();
  EXPECT_EQ(mb.outputs_ipc.size(), 2u);
  EXPECT_DOUBLE_EQ(json(BandwidthReply{1000, 900}).get<BandwidthReply>().copy_gbps_median, 900);
  EXPECT_DOUBLE_EQ(json(ProbeReply{{{"0", 60.0}, {"1", 900.0}}}).get<ProbeReply>().tflops.at("1"), 900.0);
  EXPECT_TRUE(json(CollectReply{}).is_object());
  EXPECT_TRUE(json(ReleaseReply{}).is_object());
}

// What a runner leaves out takes the default the checker assumed before these types.
TEST(Protocol, MissingReplyFieldsTakeTheirDefaults) {
  auto h = json{{"ok", true}, {"name", "Fake GPU"}}.get<HelloReply>();
  EXPECT_EQ(h.cc_major, 9);
  EXPECT_EQ(h.cc_minor, 0);
  EXPECT_EQ(h.l2_bytes, uint64_t(50) << 20);
  EXPECT_EQ(h.uuid, "");
  // A runner before the CPU figure of the wait: the wall figure stands in for it.
  auto r = json{{"ok", true}, {"after_stream_ms", 7.5}}.get<RunReply>();
  EXPECT_DOUBLE_EQ(r.after_stream_cpu_ms, 7.5);
  EXPECT_EQ(r.rc, 0);
  EXPECT_TRUE(r.violations.empty() && r.outputs_ipc.empty());
  auto l = json{{"ok", true}}.get<LoadReply>();
  EXPECT_EQ(l.threads_after, 0);
  auto ci = json{{"ok", true}}.get<ConfineReply>();  // a runner that says nothing confined nothing
  EXPECT_FALSE(ci.isolation.seccomp);
  EXPECT_EQ(ci.isolation.uid, -1);
  auto c = json{{"count", 3}, {"first_got", nullptr}}.get<CompareCounts>();
  EXPECT_EQ(c.first_bad, -1);
  EXPECT_TRUE(std::isnan(c.first_got));  // not a number nor a name: NaN, as before
  EXPECT_EQ(c.first_want, 0.0);
  auto run = json{{"slot", "cand"}, {"arena_size", 0}, {"inputs", json::array()}, {"outputs", json::array()},
                  {"scalars", json::array()}, {"dims", json::array()}}
                 .get<RunRequest>();
  EXPECT_EQ(run.alloc_limit, uint64_t(8) << 30);
  EXPECT_FALSE(run.flush_bytes);  // the runner keeps its setting
  EXPECT_EQ((json{{"cmd", "bandwidth"}}.get<BandwidthRequest>().bytes), uint64_t(1) << 30);
}

// A reply with a field of the wrong type (a runner that loaded a candidate may send anything) is
// an error value from decode, never an exception.
TEST(Protocol, MalformedRepliesDecodeToErrors) {
  EXPECT_FALSE(decode<HelloReply>(json{{"l2_bytes", "big"}}, "hello reply"));
  EXPECT_FALSE(decode<RunReply>(json{{"rc", "zero"}}, "run reply"));
  EXPECT_FALSE(decode<RunReply>(json{{"violations", {{{"kind", 3}}}}}, "run reply"));
  EXPECT_FALSE(decode<ConfineReply>(json{{"isolation", 1}}, "confine reply"));
  EXPECT_FALSE(decode<ConfineReply>(json{{"state", "none"}}, "confine reply"));
  EXPECT_FALSE(decode<CompareReply>(json{{"outputs", {{{"runs", {{"count", 1}}}}}}}, "compare reply"));  // no cmp
  EXPECT_FALSE(decode<CompareReply>(json{{"outputs", {{{"cmp", 5}}}}}, "compare reply"));
  EXPECT_FALSE(decode<RunReply>(json{{"outputs_ipc", {"aa"}}}, "run reply"));  // a bare handle: no offset
  EXPECT_FALSE(decode<RunReply>(json{{"outputs_ipc", {{{"handle", "aa"}, {"offset", "far"}}}}}, "run reply"));
  EXPECT_FALSE(decode<MaterializeReply>(json{{"inputs_ipc", {1, 2}}}, "materialize reply"));
  EXPECT_FALSE(decode<ProbeReply>(json{{"tflops", {{"0", "fast"}}}}, "probe reply"));
  EXPECT_FALSE(decode<BandwidthReply>(json{{"copy_gbps", json::array()}}, "bandwidth reply"));
  auto e = decode<RunReply>(json{{"rc", "zero"}}, "run reply");
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message.find("malformed run reply"), std::string::npos) << e.error().message;
  // Requests too: the runner's dispatch answers a malformed one with an ErrorReply.
  EXPECT_FALSE(decode<RunRequest>(json{{"cmd", "run"}, {"slot", "cand"}}, "run request"));
  EXPECT_FALSE(decode<CompareRequest>(json{{"cmd", "compare"}, {"atol", "x"}, {"rtol", 0}}, "compare request"));
}
