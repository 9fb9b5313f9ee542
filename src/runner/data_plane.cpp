#include <cmath>

#include "runner/device_data.h"
#include "runner/interpose.h"
#include "runner/service.h"

namespace kevo::runner {
namespace {

// A buffer of another process, opened through CUDA IPC for the duration of one comparison.
struct Opened {
  void* ptr = nullptr;
  explicit Opened(const std::string& hex) {
    cudaIpcMemHandle_t h{};
    if (hex.size() != 2 * sizeof h.reserved) throw Fatal{"bad IPC handle"};
    for (size_t i = 0; i < sizeof h.reserved; ++i)
      h.reserved[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
    CUDA_OR_FATAL(cudaIpcOpenMemHandle(&ptr, h, cudaIpcMemLazyEnablePeerAccess));
  }
  ~Opened() {
    if (ptr) cudaIpcCloseMemHandle(ptr);
  }
  Opened(const Opened&) = delete;
  Opened& operator=(const Opened&) = delete;
};

unsigned char poison_byte(int poison) { return poison == 0 ? 0xFF : 0x7F; }

}  // namespace

std::string RunnerService::check_arena(const json& req) {
  size_t need = req.at("arena_size").get<size_t>();
  auto st = arena_.map(need);
  if (!st) return st.error().message;
  return {};
}

// The L2 flush every call gets right before it, correctness and timed calls alike (a call cannot
// tell the two apart by the state of its stream): a memset larger than L2, on the call's stream.
void RunnerService::flush_l2() {
  if (!flush_bytes_) return;
  kevo::guard::Trusted trusted;
  void* f = buffer("flush", flush_bytes_, false);
  CUDA_OR_FATAL(cudaMemsetAsync(f, static_cast<int>(round_++ & 0xff), flush_bytes_, stream_));
}

RunnerService::Call RunnerService::call_once(ForwardFn fn, const kevo_args& a) {
  Call c;
  c.threads_before = count_threads();
  auto t0 = Clock::now();
  CUDA_OR_FATAL(cudaEventRecord(ev0_, stream_));
  kevo::guard::arm(stream_, alloc_limit_);
  c.rc = fn(&a);
  kevo::guard::disarm();
  cudaError_t le = cudaGetLastError();
  if (le != cudaSuccess) c.launch_error = cuda_err(le);
  CUDA_OR_FATAL(cudaEventRecord(ev1_, stream_));
  CUDA_OR_FATAL(cudaStreamSynchronize(stream_));
  auto t_stream = Clock::now();
  double cpu0 = thread_cpu_ms();
  float span = 0;
  CUDA_OR_FATAL(cudaEventElapsedTime(&span, ev0_, ev1_));
  // Device-wide: anything the candidate left running elsewhere finishes before this returns.
  // Time spent here, after our stream is idle, is work outside the given stream (other
  // processes' work is not waited for, so GPU sharing does not show up as hidden work).
  CUDA_OR_FATAL(cudaDeviceSynchronize());
  c.wall_ms = ms_since(t0);
  c.after_stream_ms = ms_since(t_stream);
  c.after_stream_cpu_ms = thread_cpu_ms() - cpu0;
  c.span_ms = span;
  c.threads_after = count_threads();
  return c;
}

kevo_args RunnerService::make_args(const std::vector<double>& scalars, const std::vector<int64_t>& dims,
                                   std::vector<kevo_tensor>& ins, std::vector<kevo_tensor>& outs, void* ws,
                                   size_t wsb) {
  kevo_args a{};
  a.abi_version = KEVO_ABI_VERSION;
  a.inputs = ins.data();
  a.num_inputs = static_cast<int>(ins.size());
  a.outputs = outs.data();
  a.num_outputs = static_cast<int>(outs.size());
  a.scalars = scalars.data();
  a.num_scalars = static_cast<int>(scalars.size());
  a.dims = dims.data();
  a.num_dims = static_cast<int>(dims.size());
  a.workspace = ws;
  a.workspace_bytes = wsb;
  a.stream = stream_;
  return a;
}

json RunnerService::run(const json& req) {
  init();
  if (auto e = check_arena(req); !e.empty()) return {{"ok", false}, {"error", e}};
  std::string slot = req.at("slot");
  auto it = fns_.find(slot);
  if (it == fns_.end()) return {{"ok", false}, {"error", "slot not loaded: " + slot}};
  bool fresh = req.value("placement", 0) != 0;
  int poison = req.value("poison", 0);
  alloc_limit_ = req.value("alloc_limit", size_t(8) << 30);
  std::string pfx = slot + (fresh ? "/moved/" : "/");
  std::vector<kevo_tensor> ins, outs;
  for (const auto& d : req.at("inputs")) {
    size_t n = d.at("nbytes");
    void* p = buffer(pfx + "in/" + d.at("name").get<std::string>(), n, fresh);
    materialize(d, p);
    ins.push_back(to_tensor(d, p));
  }
  for (const auto& d : req.at("outputs")) {
    size_t n = d.at("nbytes");
    void* p = buffer(pfx + "out/" + d.at("name").get<std::string>(), n, fresh);
    CUDA_OR_FATAL(cudaMemset(p, poison_byte(poison), n));
    outs.push_back(to_tensor(d, p));
  }
  size_t wsb = req.value("workspace_bytes", size_t(0));
  void* ws = wsb ? buffer(pfx + "workspace", wsb, fresh) : nullptr;
  if (ws) CUDA_OR_FATAL(cudaMemset(ws, poison_byte(poison), wsb));
  CUDA_OR_FATAL(cudaDeviceSynchronize());
  flush_bytes_ = req.value("flush_bytes", flush_bytes_);
  flush_l2();
  auto scalars = req.at("scalars").get<std::vector<double>>();
  auto dims = req.at("dims").get<std::vector<int64_t>>();
  kevo_args a = make_args(scalars, dims, ins, outs, ws, wsb);
  Call c = call_once(it->second, a);
  json reply = {{"ok", true},           {"rc", c.rc},
                {"span_ms", c.span_ms}, {"wall_ms", c.wall_ms}, {"after_stream_ms", c.after_stream_ms},
                {"after_stream_cpu_ms", c.after_stream_cpu_ms},
                {"threads_before", c.threads_before}, {"threads_after", c.threads_after},
                {"launch_error", c.launch_error},     {"violations", violations_json()}};
  // Device data: outputs stay on the GPU for the oracle's runner to compare (through IPC).
  if (req.value("keep", false)) {
    if (req.value("export", false)) {
      json oi = json::array(), ii = json::array();
      for (auto& t : outs) oi.push_back(export_ipc(t.data));
      for (auto& t : ins) ii.push_back(export_ipc(t.data));
      reply["outputs_ipc"] = oi;
      reply["inputs_ipc"] = ii;
    }
    return reply;
  }
  size_t k = 0;
  for (const auto& d : req.at("outputs"))
    CUDA_OR_FATAL(cudaMemcpy(arena_.data() + d.at("offset").get<size_t>(), outs[k++].data,
                             d.at("nbytes").get<size_t>(), cudaMemcpyDeviceToHost));
  if (req.contains("inputs_after")) {
    k = 0;
    for (const auto& d : req.at("inputs_after"))
      CUDA_OR_FATAL(cudaMemcpy(arena_.data() + d.at("offset").get<size_t>(), ins[k++].data,
                               d.at("nbytes").get<size_t>(), cudaMemcpyDeviceToHost));
  }
  return reply;
}

json RunnerService::compare(const json& req) {
  init();
  kevo::guard::Trusted trusted;
  double atol = req.at("atol"), rtol = req.at("rtol");
  // JSON has no NaN/Inf: such a value (a poisoned element, say) travels as its name.
  auto num = [](double x) -> json {
    if (std::isfinite(x)) return x;
    return std::isnan(x) ? "nan" : x > 0 ? "inf" : "-inf";
  };
  auto result = [&](const kevo::dev::CompareResult& c) {
    return json{{"count", c.count},           {"mismatches", c.mismatches},       {"unwritten", c.unwritten},
                {"nonfinite", c.nonfinite},   {"first_bad", c.first_bad},         {"first_got", num(c.first_got)},
                {"first_want", num(c.first_want)}, {"max_abs_err", num(c.max_abs_err)},
                {"max_rel_err", num(c.max_rel_err)}};
  };
  auto ref = [&](const std::string& key, size_t bytes) -> void* {
    auto it = bufs_.find(key);
    if (it == bufs_.end() || !it->second.ptr || it->second.bytes != bytes)
      throw Fatal{"compare: no reference buffer '" + key + "' of " + std::to_string(bytes) + " bytes"};
    return it->second.ptr;
  };
  json outs = json::array(), ins = json::array();
  for (const auto& d : req.value("outputs", json::array())) {
    Opened got(d.at("ipc").get<std::string>());
    int dt = d.at("dtype"), rdt = d.value("ref_dtype", dt);
    int64_t n = d.at("numel");
    size_t nbytes = d.at("nbytes");
    kevo::dev::CompareResult c, cr;
    CUDA_OR_FATAL(kevo::dev::compare(got.ptr, dt, ref(d.at("ref"), d.at("ref_nbytes")), rdt, n, atol, rtol,
                                     d.value("check_poison", true), stream_, &c));
    json o = {{"cmp", result(c)}};
    if (d.contains("runs_ref")) {
      CUDA_OR_FATAL(kevo::dev::compare(got.ptr, dt, ref(d["runs_ref"], nbytes), dt, n, atol, rtol, false,
                                       stream_, &cr));
      o["runs"] = result(cr);
    }
    if (d.contains("snapshot")) {
      void* snap = buffer(d["snapshot"], nbytes, false);
      CUDA_OR_FATAL(cudaMemcpyAsync(snap, got.ptr, nbytes, cudaMemcpyDeviceToDevice, stream_));
      CUDA_OR_FATAL(cudaStreamSynchronize(stream_));
    }
    outs.push_back(o);
  }
  for (const auto& d : req.value("inputs", json::array())) {
    Opened got(d.at("ipc").get<std::string>());
    size_t nbytes = d.at("nbytes");
    uint64_t diff = 0;
    CUDA_OR_FATAL(kevo::dev::count_differing_bytes(got.ptr, ref(d.at("ref"), nbytes), nbytes, stream_, &diff));
    ins.push_back({{"differing_bytes", diff}});
  }
  return {{"ok", true}, {"outputs", outs}, {"inputs", ins}};
}

json RunnerService::materialize_for_export(const json& req) {
  init();
  kevo::guard::Trusted trusted;
  release_prefix("xfer/");
  json ii = json::array(), oi = json::array();
  for (const auto& d : req.value("inputs", json::array())) {
    std::string name = d.at("name");
    size_t n = d.at("nbytes");
    void* p = buffer("base/in/" + name, n, false);
    materialize(d, p);
    void* x = buffer("xfer/in/" + name, n, false);
    CUDA_OR_FATAL(cudaMemcpy(x, p, n, cudaMemcpyDeviceToDevice));
    ii.push_back(export_ipc(x));
  }
  for (const auto& d : req.value("outputs", json::array())) {
    size_t n = d.at("nbytes");
    void* x = buffer("xfer/out/" + d.at("name").get<std::string>(), n, false);
    CUDA_OR_FATAL(cudaMemset(x, 0xFF, n));
    oi.push_back(export_ipc(x));
  }
  CUDA_OR_FATAL(cudaDeviceSynchronize());
  return {{"ok", true}, {"inputs_ipc", ii}, {"outputs_ipc", oi}};
}

json RunnerService::collect(const json& req) {
  init();
  for (const auto& d : req.value("outputs", json::array())) {
    std::string name = d.at("name");
    size_t n = d.at("nbytes");
    auto it = bufs_.find("xfer/out/" + name);
    if (it == bufs_.end() || it->second.bytes != n) {
      release_prefix("xfer/");
      return {{"ok", false}, {"error", "collect: no exported output '" + name + "' of " + std::to_string(n) + " bytes"}};
    }
    CUDA_OR_FATAL(cudaMemcpy(buffer("base/out/" + name, n, false), it->second.ptr, n, cudaMemcpyDeviceToDevice));
  }
  CUDA_OR_FATAL(cudaDeviceSynchronize());
  release_prefix("xfer/");
  return {{"ok", true}};
}

json RunnerService::release_prefixes(const json& req) {
  for (const auto& p : req.value("prefixes", json::array())) release_prefix(p.get<std::string>());
  return {{"ok", true}};
}

json RunnerService::violations_json() {
  json v = json::array();
  for (auto& x : kevo::guard::take()) v.push_back(x);
  return v;
}
}  // namespace kevo::runner
