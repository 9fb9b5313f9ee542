#include "torch/bridge.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "torch/npy.h"
#include "util/fs.h"

namespace kevo::torch {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr size_t kMaxMessage = 64u << 20;
constexpr size_t kErrTail = 16 << 10;

std::string tail_of(const std::string& s, size_t n = 4000) {
  return s.size() <= n ? s : "..." + s.substr(s.size() - n);
}

int ms_left(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<int64_t>(left, 200));
}

Result<DType> dtype_of(const ojson& j, const std::string& what) {
  if (!j.is_string()) return fail("bridge protocol: {} has no dtype", what);
  auto d = parse_dtype(j.get<std::string>());
  if (!d) return fail("bridge protocol: {} has unknown dtype '{}'", what, j.get<std::string>());
  return *d;
}

Result<BridgeTensor> tensor_of(const ojson& j) {
  BridgeTensor t;
  t.name = j.value("name", "");
  t.kind = j.value("kind", "tensor");
  t.path = j.value("path", "");
  t.torch_dtype = j.value("torch_dtype", "");
  auto d = dtype_of(j.contains("dtype") ? j["dtype"] : ojson(), "tensor '" + t.name + "'");
  if (!d) return d.unexpected();
  t.dtype = *d;
  for (const auto& s : j.value("shape", ojson::array())) t.shape.push_back(s.get<int64_t>());
  if (j.contains("stats") && j["stats"].is_object()) {
    const auto& s = j["stats"];
    auto num = [&](const char* k) { return s.contains(k) && s[k].is_number() ? s[k].get<double>() : 0.0; };
    t.stats = TensorStats{num("min"), num("max"), num("mean"), num("std")};
  }
  return t;
}

}  // namespace

Result<std::string> find_torch_python() {
  static std::optional<std::string> found;
  if (found) return *found;
  std::vector<std::string> cands;
  if (const char* e = getenv("KEVO_PYTHON"); e && *e) cands.push_back(e);
  cands.push_back("python3");
  cands.push_back("/usr/bin/python3");
  std::string why;
  for (const auto& c : cands) {
    auto prog = find_program(c);
    if (!prog) {
      why += fmt::format("\n  {}: not found", c);
      continue;
    }
    auto r = run_process({.argv = {*prog, "-c", "import torch, numpy"},
                          .env_add = {{"PYTHONDONTWRITEBYTECODE", "1"}},
                          .timeout = std::chrono::milliseconds(120000)});
    if (r && r->ok()) {
      found = *prog;
      return *prog;
    }
    std::string err = r ? r->err : r.error().message;
    auto last = err.find_last_not_of("\n ");
    if (last != std::string::npos) err = err.substr(0, last + 1);
    auto nl = err.rfind('\n');
    why += fmt::format("\n  {}: {}", *prog, nl == std::string::npos ? err : err.substr(nl + 1));
  }
  return fail(ErrorCode::kNoTorch, "no Python with torch and numpy (set KEVO_PYTHON, or install python3-torch):{}", why);
}

Result<TorchBridge> TorchBridge::start(const BridgeOptions& opts) {
  // A broken pipe to a dead bridge must be an error value, not a SIGPIPE that kills kevo.
  signal(SIGPIPE, SIG_IGN);
  TorchBridge b;
  b.opts_ = opts;
  if (b.opts_.python.empty()) {
    auto py = find_torch_python();
    if (!py) return py.unexpected();
    b.opts_.python = *py;
  }
  if (b.opts_.python_path.empty()) b.opts_.python_path = kevo_home() / "python";
  std::error_code ec;
  if (!fs::exists(b.opts_.python_path / "kevo_bridge" / "__main__.py", ec))
    return fail("{}: kevo_bridge is not there (set KEVO_HOME to kevo's source or install folder)",
                (b.opts_.python_path / "kevo_bridge").string());
  std::string tmpl = (fs::temp_directory_path() / "kevo-bridge-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) return fail("mkdtemp {}: {}", tmpl, std::strerror(errno));
  b.dir_ = tmpl;
  std::string pp = fs::absolute(b.opts_.python_path).string();
  if (const char* old = getenv("PYTHONPATH"); old && *old) pp += std::string(":") + old;
  auto child = spawn_process({.argv = {b.opts_.python, "-m", "kevo_bridge"},
                              .env_add = {{"PYTHONPATH", pp},
                                          {"PYTHONDONTWRITEBYTECODE", "1"},
                                          {"PYTHONUNBUFFERED", "1"}}});
  if (!child) return fail("cannot start the PyTorch bridge: {}", child.error().message);
  b.child_ = *child;
  for (int fd : {b.child_.in_fd, b.child_.out_fd, b.child_.err_fd})
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  auto hello = b.request({{"op", "hello"}}, b.opts_.start_timeout);
  if (!hello) return fail(hello.error().code, "PyTorch bridge ({}): {}", b.opts_.python, hello.error().message);
  b.info_.protocol = hello->value("protocol", 0);
  b.info_.python = hello->value("python", "");
  b.info_.torch = hello->value("torch", "");
  b.info_.numpy = hello->value("numpy", "");
  b.info_.cuda = hello->value("cuda", false);
  b.info_.has_compile = hello->value("has_compile", false);
  if ((*hello)["device_name"].is_string()) b.info_.device_name = (*hello)["device_name"].get<std::string>();
  if (b.info_.protocol != 1)
    return fail("PyTorch bridge speaks protocol {}, kevo needs 1", b.info_.protocol);
  return b;
}

TorchBridge::TorchBridge(TorchBridge&& o) noexcept { *this = std::move(o); }

TorchBridge& TorchBridge::operator=(TorchBridge&& o) noexcept {
  if (this != &o) {
    stop();
    child_ = o.child_;
    o.child_ = Child{};
    opts_ = std::move(o.opts_);
    info_ = std::move(o.info_);
    dir_ = std::move(o.dir_);
    o.dir_.clear();
    err_tail_ = std::move(o.err_tail_);
    out_buf_ = std::move(o.out_buf_);
    desc_ = std::move(o.desc_);
    next_id_ = o.next_id_;
    file_counter_ = o.file_counter_;
    files_ = std::move(o.files_);
  }
  return *this;
}

TorchBridge::~TorchBridge() { stop(); }

void TorchBridge::kill_child() {
  if (child_.pid > 0 || child_.in_fd >= 0) kill_and_reap(child_);
  child_ = Child{};
}

void TorchBridge::stop() {
  if (child_.pid > 0) {
    auto deadline = Clock::now() + std::chrono::seconds(5);
    ojson bye = {{"op", "shutdown"}, {"id", next_id_++}};
    if (send(bye, deadline)) (void)receive(deadline, "shutdown");
    if (child_.pid > 0) {
      if (wait_for_exit(child_, std::chrono::milliseconds(3000))) child_.pid = -1;
      kill_and_reap(child_);  // closes the pipes (and kills a bridge that ignored shutdown)
      child_ = Child{};
    }
  }
  cleanup_files();
  if (!dir_.empty()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
    dir_.clear();
  }
}

void TorchBridge::cleanup_files() {
  std::error_code ec;
  for (const auto& f : files_) fs::remove(f, ec);
  files_.clear();
}

void TorchBridge::drain_stderr() {
  if (child_.err_fd < 0) return;
  char buf[8192];
  for (;;) {
    ssize_t r = ::read(child_.err_fd, buf, sizeof buf);
    if (r > 0) {
      err_tail_.append(buf, static_cast<size_t>(r));
      if (err_tail_.size() > 2 * kErrTail) err_tail_.erase(0, err_tail_.size() - kErrTail);
      continue;
    }
    if (r == 0) {
      ::close(child_.err_fd);
      child_.err_fd = -1;
    }
    return;  // EAGAIN or error
  }
}

Status TorchBridge::send(const ojson& msg, Clock::time_point deadline) {
  if (child_.pid <= 0) return fail("the PyTorch bridge is not running");
  std::string text = msg.dump();
  uint32_t n = static_cast<uint32_t>(text.size());
  std::string data;
  data.reserve(text.size() + 4);
  for (int i = 0; i < 4; ++i) data += static_cast<char>((n >> (8 * i)) & 0xff);
  data += text;
  size_t off = 0;
  while (off < data.size()) {
    if (Clock::now() >= deadline) return fail(ErrorCode::kTimeout, "timeout sending a request to the PyTorch bridge");
    pollfd p[2] = {{child_.in_fd, POLLOUT, 0}, {child_.err_fd, POLLIN, 0}};
    int pr = poll(p, child_.err_fd >= 0 ? 2 : 1, std::max(1, ms_left(deadline)));
    if (pr < 0 && errno != EINTR) return fail("poll: {}", std::strerror(errno));
    if (child_.err_fd >= 0 && p[1].revents) drain_stderr();
    if (!(p[0].revents & (POLLOUT | POLLERR | POLLHUP))) continue;
    ssize_t w = ::write(child_.in_fd, data.data() + off, data.size() - off);
    if (w < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return fail(ErrorCode::kClosed, "eof: the PyTorch bridge closed its input ({})", std::strerror(errno));
    }
    off += static_cast<size_t>(w);
  }
  return {};
}

Result<ojson> TorchBridge::receive(Clock::time_point deadline, const std::string& op) {
  char buf[65536];
  for (;;) {
    if (out_buf_.size() >= 4) {
      uint32_t len = 0;
      for (int i = 0; i < 4; ++i) len |= static_cast<uint32_t>(static_cast<uint8_t>(out_buf_[i])) << (8 * i);
      if (len > kMaxMessage) {
        kill_child();
        return fail("bridge protocol error: a reply of {} bytes to '{}'", len, op);
      }
      if (out_buf_.size() >= 4 + static_cast<size_t>(len)) {
        ojson j = ojson::parse(out_buf_.begin() + 4, out_buf_.begin() + 4 + len, nullptr, false);
        out_buf_.erase(0, 4 + static_cast<size_t>(len));
        if (j.is_discarded() || !j.is_object()) {
          kill_child();
          return fail("bridge protocol error: the reply to '{}' is not a JSON object", op);
        }
        return j;
      }
    }
    if (Clock::now() >= deadline) {
      drain_stderr();
      kill_child();
      return fail(ErrorCode::kTimeout, "timeout: the PyTorch bridge did not answer '{}' in time and was killed{}", op,
                  err_tail_.empty() ? "" : "; its stderr ends with:\n" + tail_of(err_tail_));
    }
    pollfd p[2] = {{child_.out_fd, POLLIN, 0}, {child_.err_fd, POLLIN, 0}};
    int pr = poll(p, child_.err_fd >= 0 ? 2 : 1, std::max(1, ms_left(deadline)));
    if (pr < 0 && errno != EINTR) return fail("poll: {}", std::strerror(errno));
    if (child_.err_fd >= 0 && p[1].revents) drain_stderr();
    if (!p[0].revents) continue;
    ssize_t r = ::read(child_.out_fd, buf, sizeof buf);
    if (r > 0) {
      out_buf_.append(buf, static_cast<size_t>(r));
      continue;
    }
    if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    // EOF: the bridge died. Collect what it said and how it ended.
    auto until = Clock::now() + std::chrono::milliseconds(2000);
    while (child_.err_fd >= 0 && Clock::now() < until) {
      pollfd pe{child_.err_fd, POLLIN, 0};
      if (poll(&pe, 1, 100) > 0) drain_stderr();
    }
    std::string how = "exited";
    if (auto st = wait_for_exit(child_, std::chrono::milliseconds(2000))) {
      how = describe_wait_status(*st);
      child_.pid = -1;
    }
    kill_child();
    return fail(ErrorCode::kProcessDied, "eof: the PyTorch bridge died during '{}' ({}){}", op, how,
                err_tail_.empty() ? "" : "; its stderr ends with:\n" + tail_of(err_tail_));
  }
}

Result<ojson> TorchBridge::request(ojson req, std::optional<std::chrono::milliseconds> timeout) {
  std::string op = req.value("op", "?");
  if (child_.pid <= 0) return fail("the PyTorch bridge is not running (it was stopped or killed)");
  req["id"] = next_id_++;
  auto deadline = Clock::now() + timeout.value_or(opts_.request_timeout);
  if (auto s = send(req, deadline); !s) {
    if (s.error().code == ErrorCode::kTimeout) {
      kill_child();
      return s.unexpected();
    }
    // The bridge is gone: its exit status and stderr say why.
    auto died = receive(std::min(deadline, Clock::now() + std::chrono::seconds(5)), op);
    if (died) kill_child();
    return died ? s.unexpected() : died.unexpected();
  }
  for (;;) {
    auto reply = receive(deadline, op);
    if (!reply) return reply;
    if ((*reply)["id"] != req["id"] && !(*reply)["id"].is_null()) continue;  // a stale reply
    if (reply->value("ok", false)) return reply;
    std::string msg = (*reply)["error"].is_string() ? (*reply)["error"].get<std::string>() : "unknown error";
    std::string kind = reply->value("kind", "");
    std::string tb = (*reply)["traceback"].is_string() ? (*reply)["traceback"].get<std::string>() : "";
    if (kind == "python" && !tb.empty()) msg += "\nPython traceback:\n" + tail_of(tb, 8000);
    // The bridge's own kinds, at the protocol's edge: torch does not import, or has no GPU.
    return Error{msg, kind == "environment" ? ErrorCode::kNoTorch
                      : kind == "no_cuda"   ? ErrorCode::kNoCuda
                                            : ErrorCode::kUnspecified};
  }
}

Status TorchBridge::load(const fs::path& file, const std::map<std::string, int64_t>& dims,
                         uint64_t seed, bool shapes_only) {
  desc_.reset();
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return fail(ErrorCode::kNotFound, "{}: no such file", file.string());
  ojson req = {{"op", "load"},
               {"path", fs::absolute(file).string()},
               {"seed", seed},
               {"shapes_only", shapes_only},
               {"dims", ojson::object()}};
  for (const auto& [k, v] : dims) req["dims"][k] = v;
  auto r = request(req);
  if (!r) return r.unexpected();
  return {};
}

Result<Description> TorchBridge::describe(bool stats) {
  auto r = request({{"op", "describe"}, {"stats", stats}});
  if (!r) return r.unexpected();
  Description d;
  d.path = r->value("path", "");
  d.style = r->value("style", "");
  d.output_shapes_from = r->value("output_shapes_from", "");
  for (const auto& [k, v] : (*r)["globals"].items())
    if (v.is_number_integer()) d.globals.emplace_back(k, v.get<int64_t>());
  for (const auto& a : (*r)["args"]) {
    BridgeArg arg;
    arg.name = a.value("name", "");
    if (a.value("kind", "") == "scalar") {
      arg.scalar = true;
      arg.value = a["value"].is_number() ? a["value"].get<double>() : 0.0;
      arg.is_int = a.value("is_int", false);
    } else {
      auto t = tensor_of(a);
      if (!t) return t.unexpected();
      arg.tensor = *t;
    }
    d.args.push_back(std::move(arg));
  }
  for (const char* key : {"weights", "outputs"})
    for (const auto& w : (*r)[key]) {
      auto t = tensor_of(w);
      if (!t) return t.unexpected();
      (std::string_view(key) == "weights" ? d.weights : d.outputs).push_back(*t);
    }
  desc_ = d;
  return d;
}

Status TorchBridge::build_args(const std::vector<std::pair<std::string, DType>>& tensors, const PutTensor& put,
                               const std::map<std::string, double>& scalars, ojson& req) {
  if (!desc_) {
    auto d = describe(false);
    if (!d) return d.unexpected();
  }
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < tensors.size(); ++i) by_name[tensors[i].first] = i;
  auto entry = [&](size_t i, const std::string& torch_dtype) -> Result<ojson> {
    auto j = put(i);
    if (!j) return j.unexpected();
    if (torch_dtype == "bool") (*j)["torch_dtype"] = "bool";
    return j;
  };
  req["args"] = ojson::array();
  req["weights"] = ojson::array();
  for (const auto& a : desc_->args) {
    if (a.scalar) {
      auto it = scalars.find(a.name);
      double v = it != scalars.end() ? it->second : a.value;
      req["args"].push_back({{"name", a.name},
                             {"value", a.is_int ? ojson(static_cast<int64_t>(v)) : ojson(v)}});
      continue;
    }
    auto it = by_name.find(a.name);
    if (it == by_name.end()) return fail("no tensor for argument '{}' of the PyTorch reference", a.name);
    DType given = tensors[it->second].second;
    if (given != a.tensor.dtype)
      return fail("argument '{}': {} given, the reference takes {}", a.name, dtype_name(given),
                  dtype_name(a.tensor.dtype));
    auto j = entry(it->second, a.tensor.torch_dtype);
    if (!j) return j.unexpected();
    req["args"].push_back(*j);
    by_name.erase(it);
  }
  for (const auto& w : desc_->weights) {
    auto it = by_name.find(w.name);
    if (it == by_name.end()) continue;  // the module keeps its own value
    auto j = entry(it->second, w.torch_dtype);
    if (!j) return j.unexpected();
    req["weights"].push_back(*j);
    by_name.erase(it);
  }
  if (!by_name.empty()) {
    std::string names;
    for (const auto& [n, t] : by_name) names += (names.empty() ? "" : ", ") + n;
    return fail("the PyTorch reference has no argument or weight named {}", names);
  }
  return {};
}

namespace {

std::vector<std::pair<std::string, DType>> names_of(const std::vector<HostTensor>& ts) {
  std::vector<std::pair<std::string, DType>> out;
  for (const auto& t : ts) out.emplace_back(t.name, t.dtype);
  return out;
}

std::vector<std::pair<std::string, DType>> names_of(const std::vector<DeviceTensor>& ts) {
  std::vector<std::pair<std::string, DType>> out;
  for (const auto& t : ts) out.emplace_back(t.name, t.dtype);
  return out;
}

ojson handle_entry(const DeviceTensor& t) {
  return {{"name", t.name}, {"ipc", t.ipc}, {"dtype", dtype_name(t.dtype)}, {"shape", t.shape}};
}

}  // namespace

Result<std::vector<HostTensor>> TorchBridge::run(const std::vector<HostTensor>& inputs,
                                                 const std::map<std::string, double>& scalars,
                                                 const std::string& device) {
  ojson req = {{"op", "run"}, {"device", device}, {"out_dir", dir_.string()},
               {"out_prefix", fmt::format("out{}_", file_counter_++)}};
  auto s = build_args(names_of(inputs), [&](size_t i) { return npy_entry(inputs[i]); }, scalars, req);
  if (!s) {
    cleanup_files();
    return s.unexpected();
  }
  auto r = request(req);
  cleanup_files();
  if (!r) return r.unexpected();
  std::vector<HostTensor> outs;
  size_t i = 0;
  for (const auto& o : (*r)["outputs"]) {
    std::string file = o.value("file", "");
    files_.push_back(file);
    auto d = dtype_of(o["dtype"], "output");
    if (!d) return d.unexpected();
    auto t = read_npy(file, *d);
    if (!t) {
      cleanup_files();
      return t.unexpected();
    }
    t->name = desc_ && i < desc_->outputs.size() ? desc_->outputs[i].name : fmt::format("out{}", i);
    outs.push_back(std::move(*t));
    ++i;
  }
  cleanup_files();
  return outs;
}

Status TorchBridge::run_ipc(const std::vector<DeviceTensor>& inputs, const std::vector<DeviceTensor>& outputs,
                            const std::map<std::string, double>& scalars, const std::string& device) {
  ojson req = {{"op", "run_ipc"}, {"device", device}, {"outputs", ojson::array()}};
  for (const auto& o : outputs) req["outputs"].push_back(handle_entry(o));
  KEVO_TRY(build_args(names_of(inputs), [&](size_t i) -> Result<ojson> { return handle_entry(inputs[i]); },
                      scalars, req));
  auto r = request(req);
  if (!r) return r.unexpected();
  return {};
}

Result<ojson> TorchBridge::npy_entry(const HostTensor& t) {
  fs::path f = dir_ / fmt::format("in{}.npy", file_counter_++);
  files_.push_back(f);
  KEVO_TRY(write_npy(f, t));
  return ojson{{"name", t.name}, {"file", f.string()}, {"dtype", dtype_name(t.dtype)}};
}

ojson TorchBridge::time_request(const TimeOptions& opts) const {
  ojson req = {{"op", "time"},          {"device", opts.device},     {"warmup", opts.warmup},
               {"min_reps", opts.min_reps}, {"max_reps", opts.max_reps}, {"budget_s", opts.budget_s},
               {"modes", opts.modes}};
  if (!opts.extension.empty()) {
    req["extension"] = {{"path", fs::absolute(opts.extension).string()}};
    if (!opts.build_root.empty()) req["extension"]["build_root"] = fs::absolute(opts.build_root).string();
  }
  return req;
}

TimeResult TorchBridge::time_result(const ojson& r, const TimeOptions& opts) const {
  TimeResult tr;
  tr.device = r.value("device", opts.device);
  if (r.contains("device_name") && r["device_name"].is_string()) tr.device_name = r["device_name"].get<std::string>();
  for (const auto& m : opts.modes) {
    TimedMode t;
    if (!r.contains(m)) {
      t.error = "not measured";
    } else if (r[m].contains("error")) {
      t.error = r[m]["error"].is_string() ? r[m]["error"].get<std::string>() : "error";
    } else {
      const auto& j = r[m];
      t.ok = true;
      t.median_ms = j.value("median_ms", 0.0);
      t.ci_low_ms = j.value("ci_low_ms", 0.0);
      t.ci_high_ms = j.value("ci_high_ms", 0.0);
      t.min_ms = j.value("min_ms", 0.0);
      t.n = j.value("n", 0);
    }
    tr.modes[m] = t;
  }
  return tr;
}

Result<TimeResult> TorchBridge::time(const std::vector<HostTensor>& inputs,
                                     const std::map<std::string, double>& scalars,
                                     const TimeOptions& opts) {
  ojson req = time_request(opts);
  auto s = build_args(names_of(inputs), [&](size_t i) { return npy_entry(inputs[i]); }, scalars, req);
  if (!s) {
    cleanup_files();
    return s.unexpected();
  }
  auto r = request(req, opts.timeout);
  cleanup_files();
  if (!r) return r.unexpected();
  return time_result(*r, opts);
}

Result<TimeResult> TorchBridge::time(const std::vector<DeviceTensor>& inputs,
                                     const std::map<std::string, double>& scalars,
                                     const TimeOptions& opts) {
  ojson req = time_request(opts);
  KEVO_TRY(build_args(names_of(inputs), [&](size_t i) -> Result<ojson> { return handle_entry(inputs[i]); },
                      scalars, req));
  auto r = request(req, opts.timeout);
  if (!r) return r.unexpected();
  return time_result(*r, opts);
}

}  // namespace kevo::torch
