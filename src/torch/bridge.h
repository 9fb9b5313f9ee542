// The C++ side of the PyTorch bridge (docs/INTEROP.md): kevo starts `python3 -m kevo_bridge` as a
// persistent child and exchanges framed JSON with it (4-byte little-endian length + JSON) on the
// child's stdin/stdout; tensors travel as .npy files in a private temporary directory this class
// owns. Every request has a deadline: a bridge that does not answer in time is killed (its whole
// process group) and the request fails with ErrorCode::kTimeout (kProcessDied when it dies). Errors
// raised by user Python come back as error values that carry the Python traceback; a Python without
// torch is kNoTorch, a request for CUDA where torch sees none kNoCuda.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "task/tensor.h"
#include "torch/time_result.h"
#include "util/result.h"
#include "util/subprocess.h"

namespace kevo::torch {

using ojson = nlohmann::ordered_json;

struct BridgeOptions {
  std::string python;                     // empty: find_torch_python()
  std::filesystem::path python_path;      // folder holding kevo_bridge/; empty: kevo_home()/python
  std::chrono::milliseconds start_timeout{120000};    // process start + `hello` (importing torch)
  std::chrono::milliseconds request_timeout{300000};  // default deadline of one request
};

struct BridgeInfo {
  int protocol = 0;
  std::string python, torch, numpy, device_name;
  bool cuda = false, has_compile = false;
};

struct TensorStats {
  double min = 0, max = 0, mean = 0, std = 0;
};

// One tensor as the bridge describes it.
struct BridgeTensor {
  std::string name;         // kevo name (inputs: forward's parameter names; weights: "conv.weight" -> "conv_weight")
  std::string kind;         // "tensor" (argument or output), "parameter" or "buffer"
  std::string path;         // weights: the torch path ("conv.weight")
  std::string torch_dtype;  // "float32", "bool", ...
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::optional<TensorStats> stats;
};

// One positional argument of forward: a tensor or a number.
struct BridgeArg {
  std::string name;
  bool scalar = false;
  double value = 0;  // scalar: the value get_inputs() returned
  bool is_int = false;
  BridgeTensor tensor;
};

struct Description {
  std::string path, style;  // style: "module" or "function"
  std::string output_shapes_from;  // "meta" (no computation) or "cpu" (a real forward)
  std::vector<std::pair<std::string, int64_t>> globals;  // top-level integer sizes, file order
  std::vector<BridgeArg> args;
  std::vector<BridgeTensor> weights, outputs;
};

// A tensor that lies in another process's memory and is used there in place (the device data
// plane): `ipc` is a CUDA IPC handle in hex as kevo-runner exports it (device "cuda"); the fake
// runner of the CPU tests passes the absolute path of a file holding the bytes instead (device
// "cpu"). Contiguous, of `dtype` and `shape`.
struct DeviceTensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::string ipc;
};

struct TimeOptions {
  std::vector<std::string> modes{"eager", "compile"};  // and "extension"
  std::string device = "cuda";                          // "cpu": time.perf_counter instead of CUDA events
  int warmup = 3, min_reps = 10, max_reps = 1000;
  double budget_s = 4.0;  // per mode; sampling also stops once the median's 95% CI is within 2%
  // "extension" mode: a PyTorch C++/CUDA extension source (a task's torch_baseline) whose forward
  // stands in for the reference's module_fn; built once per bridge session, under build_root
  // (empty: torch's default, ~/.cache/torch_extensions).
  std::filesystem::path extension, build_root;
  std::optional<std::chrono::milliseconds> timeout;  // the request's deadline; default: the bridge's
};

// The first of $KEVO_PYTHON, python3 on PATH, /usr/bin/python3 that imports torch and numpy;
// the error (ErrorCode::kNoTorch) lists what was tried and why each failed.
Result<std::string> find_torch_python();

class TorchBridge {
 public:
  static Result<TorchBridge> start(const BridgeOptions& opts = {});
  TorchBridge(TorchBridge&& o) noexcept;
  TorchBridge& operator=(TorchBridge&& o) noexcept;
  TorchBridge(const TorchBridge&) = delete;
  TorchBridge& operator=(const TorchBridge&) = delete;
  ~TorchBridge();

  const BridgeInfo& info() const { return info_; }
  bool alive() const { return child_.pid > 0; }
  // The last bytes the bridge wrote to stderr (user prints go there too).
  const std::string& stderr_tail() const { return err_tail_; }

  // Loads a reference file; `dims` overrides its top-level integer sizes. shapes_only skips
  // weight initialization and random fills (for describing big models quickly); such a load
  // cannot run.
  Status load(const std::filesystem::path& file, const std::map<std::string, int64_t>& dims = {},
              uint64_t seed = 0, bool shapes_only = false);
  // Calls get_inputs() and reports arguments, weights (parameters and buffers) and outputs
  // (shapes from the meta device where possible). stats: min/max/mean/std of every tensor.
  Result<Description> describe(bool stats = true);
  // Runs forward on `device` ("cpu" or "cuda"). `inputs` holds the tensor arguments and any
  // weights, by the names describe() gives; scalar arguments come from `scalars` by name, else
  // from get_inputs(). Returns the outputs in order, named as describe() names them.
  Result<std::vector<HostTensor>> run(const std::vector<HostTensor>& inputs,
                                      const std::map<std::string, double>& scalars = {},
                                      const std::string& device = "cpu");
  // The same on tensors in another process's buffers (op `run_ipc`): the inputs are used in
  // place, and the reference's outputs are copied into `outputs` (in order, checked against their
  // dtypes and numels); no tensor crosses the host. The bridge synchronizes and closes every handle
  // before it replies.
  Status run_ipc(const std::vector<DeviceTensor>& inputs, const std::vector<DeviceTensor>& outputs,
                 const std::map<std::string, double>& scalars = {}, const std::string& device = "cuda");
  // Times eager (and torch.compile, and an extension) forward with CUDA events (perf_counter on
  // device "cpu"), a cache flush before every call and the median of many calls. A mode that
  // cannot run (torch.compile missing, the extension does not build) is an error in its TimedMode;
  // the request fails with "no CUDA: ..." (ErrorCode::kNoCuda) where device "cuda" is asked for and
  // torch sees no GPU.
  Result<TimeResult> time(const std::vector<HostTensor>& inputs,
                          const std::map<std::string, double>& scalars = {},
                          const TimeOptions& opts = {});
  // The same on tensors in another process's buffers (used in place, as run_ipc).
  Result<TimeResult> time(const std::vector<DeviceTensor>& inputs,
                          const std::map<std::string, double>& scalars, const TimeOptions& opts);
  // Asks the bridge to exit; kills it if it does not within a few seconds. Idempotent.
  void stop();

  // One raw request ({"op": ...}); the reply when ok, else an error carrying the Python
  // traceback. A missed deadline kills the bridge.
  Result<ojson> request(ojson req, std::optional<std::chrono::milliseconds> timeout = std::nullopt);

 private:
  TorchBridge() = default;
  Status send(const ojson& msg, std::chrono::steady_clock::time_point deadline);
  Result<ojson> receive(std::chrono::steady_clock::time_point deadline, const std::string& op);
  void drain_stderr();
  void kill_child();
  // A request's tensor by its index in the caller's list: its JSON entry (a file written or a
  // handle named).
  using PutTensor = std::function<Result<ojson>(size_t)>;
  Status build_args(const std::vector<std::pair<std::string, DType>>& tensors, const PutTensor& put,
                    const std::map<std::string, double>& scalars, ojson& req);
  Result<ojson> npy_entry(const HostTensor& t);  // writes t as a .npy file of this session
  ojson time_request(const TimeOptions& opts) const;
  TimeResult time_result(const ojson& reply, const TimeOptions& opts) const;
  void cleanup_files();

  Child child_;
  BridgeOptions opts_;
  BridgeInfo info_;
  std::filesystem::path dir_;
  std::string err_tail_, out_buf_;
  std::optional<Description> desc_;
  int next_id_ = 1, file_counter_ = 0;
  std::vector<std::filesystem::path> files_;
};

}  // namespace kevo::torch
