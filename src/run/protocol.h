// The checker <-> kevo-runner protocol: every request and reply type, and its JSON form, in one
// place. Both sides use only these structs; a key is spelled once, here. Framing is channel.h's.
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "task/draw.h"
#include "util/result.h"

namespace kevo::proto {

using nlohmann::json;

// How an input's values are made: drawn on the GPU from a task/draw.h DrawSpec.
struct Gen {
  int kind = 0;
  double a = 0, b = 1;
  int64_t lo = 0, hi = 1;
  uint64_t base = 0;
  bool timed = false;  // a timed call's draw (task/draw.h draw_timed_value)
  bool clamp = false;  // DrawSpec::clamp / floor
  double floor = 0;
  static Gen of(const DrawSpec& d) { return {d.kind, d.a, d.b, d.lo, d.hi, d.base, d.timed, d.clamp, d.floor}; }
  DrawSpec draw() const { return {kind, a, b, lo, hi, base, timed, clamp, floor}; }
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Gen, kind, a, b, lo, hi, base, timed, clamp, floor)

// A tensor of a call: name, dtype (kevo_dtype numbering), shape, bytes; its values drawn from
// `gen` (device data) or found at `offset` in the shared arena (host data).
struct TensorDesc {
  std::string name;
  int dtype = 0;
  std::vector<int64_t> shape;
  int64_t numel = 0;
  uint64_t nbytes = 0;
  uint64_t offset = 0;
  std::optional<Gen> gen;
};
void to_json(json& j, const TensorDesc& d);
void from_json(const json& j, TensorDesc& d);

// The state a candidate could leave behind to change later timings: device limits (the
// persisting-L2 set-aside among them), cache and shared-memory configuration, and the attributes
// of the stream kevo owns (an access-policy window). Compared before and after a candidate's calls.
struct DeviceState {
  std::vector<std::pair<std::string, uint64_t>> values;  // name -> value, in a fixed order
  bool operator==(const DeviceState& o) const { return values == o.values; }
  // "persisting_l2_limit: 0 -> 4194304; stream_window_bytes: 0 -> 1048576"
  std::string diff(const DeviceState& after) const;
};
void to_json(json& j, const DeviceState& s);
void from_json(const json& j, DeviceState& s);

// One output's summary after one call: see check/output_sums.h.
struct Sums {
  int64_t count = 0, nonfinite = 0;
  double sum_sq = 0, signed0 = 0, signed1 = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Sums, count, nonfinite, sum_sq, signed0, signed1)

struct Violation {
  std::string kind, detail;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Violation, kind, detail)

// Every request names its command (kCmd, sent as "cmd") and its reply type (Reply). Replies
// travel with "ok": true (added by the runner's dispatch); a request the runner cannot serve gets
// an ErrorReply instead. Request fields a checker leaves out take their defaults; reply fields a
// runner leaves out take the defaults the checker assumed before these types (an older runner, the
// test's fake one), and a field of the wrong type makes the whole reply malformed (decode).
#define KEVO_PROTO_REQUEST(Type, ...)                                                       \
  inline void to_json(nlohmann::json& nlohmann_json_j, const Type& nlohmann_json_t) {       \
    nlohmann_json_j = nlohmann::json::object();                                             \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__))                \
    nlohmann_json_j["cmd"] = Type::kCmd;                                                    \
  }                                                                                         \
  inline void from_json(const nlohmann::json& nlohmann_json_j, Type& nlohmann_json_t) {     \
    const Type nlohmann_json_default_obj{};                                                 \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_FROM_WITH_DEFAULT, __VA_ARGS__)) \
  }

// What every call of a config carries (check/runner_replies.h fills it from the task).
struct CallArgs {
  std::vector<double> scalars;
  std::vector<int64_t> dims;
  uint64_t workspace_bytes = 0;
};

// hello: the device the runner sees (and its CUDA context, started on the way).
struct HelloReply {
  std::string name, uuid;              // uuid "": the runner did not say
  int cc_major = 9, cc_minor = 0;      // sm_90 when the runner does not say
  int sm_count = 0;
  uint64_t l2_bytes = uint64_t(50) << 20;  // the checker's assumption when the runner does not say
  uint64_t smem_per_block_optin = 0, total_mem = 0, free_mem = 0;
  int runtime_version = 0, driver_version = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(HelloReply, name, uuid, cc_major, cc_minor, sm_count, l2_bytes,
                                                smem_per_block_optin, total_mem, free_mem, runtime_version,
                                                driver_version)
struct HelloRequest {
  static constexpr const char* kCmd = "hello";
  using Reply = HelloReply;
};
void to_json(json& j, const HelloRequest& r);
void from_json(const json& j, HelloRequest& r);

// How a candidate's runner is confined (runner/confine.h), as the runner set it up before any of
// the candidate's code ran; the checker confirms what it can from outside (check/isolation.h).
struct Isolation {
  int uid = -1, gid = -1;       // the identity the candidate runs as (-1: the runner did not say)
  bool identity_dropped = false;  // root gave up its identity (and every capability) for uid
  int landlock_abi = 0;         // 0: no Landlock layer
  bool landlock_scoped = false;  // signals and abstract sockets scoped to the process (ABI >= 6)
  bool seccomp = false;
  bool undumpable = false;
  bool proc_private = false;    // its /proc lists no other process (runner/private_proc.h)
  std::string error;            // what could not be set up, for people
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Isolation, uid, gid, identity_dropped, landlock_abi, landlock_scoped,
                                                seccomp, undumpable, proc_private, error)

// confine: everything a candidate's runner does before the candidate's code runs, answered before
// it runs (so the reply is the runner's own word, not the candidate's): the library at `path` read
// into memory (what `load` then loads, whatever happens to the file), the device state snapshot,
// the slab, then the confinement (runner/confine.h). Once per process. `reserve_bytes`: the
// runner first allocates one block of about that size (its slab) and places its buffers in it
// from then on: a candidate's ~20 buffers per evaluation then cost no driver calls (a cudaMalloc
// waits ~4 ms while another process makes its CUDA context), and the oracle's runner maps the
// slab once instead of every buffer. 0: every buffer its own allocation.
struct ConfineReply {
  Isolation isolation;
  std::optional<DeviceState> state;  // the state before the library's code ran
};
void to_json(json& j, const ConfineReply& r);
void from_json(const json& j, ConfineReply& r);
struct ConfineRequest {
  static constexpr const char* kCmd = "confine";
  using Reply = ConfineReply;
  std::string path;
  uint64_t reserve_bytes = 0;
  // A tool (compute-sanitizer, Nsight Compute) watches this runner through sockets and files of its
  // own: the identity is given up and the process made undumpable, but neither Landlock nor the
  // seccomp filter is applied (the tool's injected library would fail under them).
  bool under_tool = false;
  // Folders the confined process may still read beside the system ones: a Python candidate's
  // interpreter reads torch's modules from its site-packages (a virtual environment in /opt, say).
  std::vector<std::string> read_dirs;
};
KEVO_PROTO_REQUEST(ConfineRequest, path, reserve_bytes, under_tool, read_dirs)

// python: the embedded interpreter of the Python candidate runtime (runner/python_host.h) started
// in this runner: libpython opened, sys.path set, torch imported, the task's problem read. Before
// confine (a candidate's runner) or before the baseline's load (the trusted one); once per process.
struct PythonReply {
  std::string versions;
  int threads_before = 0, threads_after = 0;  // around the start: torch's own threads
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PythonReply, versions, threads_before, threads_after)
struct PythonRequest {
  static constexpr const char* kCmd = "python";
  using Reply = PythonReply;
  std::string libpython;
  std::vector<std::string> sys_path;
  std::string meta;  // JSON: python/kevo_bridge/candidate_runtime.py prepare's argument
};
KEVO_PROTO_REQUEST(PythonRequest, libpython, sys_path, meta)

// load: dlopen `path` into `slot`. An untrusted library is the one `confine` read (the request
// must name the same path; refused without a confine): the runner loads its copy in memory, not
// the file.
struct LoadReply {
  int threads_before = 0, threads_after = 0;  // around dlopen: a static constructor's thread
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(LoadReply, threads_before, threads_after)
struct LoadRequest {
  static constexpr const char* kCmd = "load";
  using Reply = LoadReply;
  std::string slot, path;
  bool untrusted = false;
  // A Python slot: the module at path (an untrusted one: confine's copy) run by the started
  // runtime, and its class `entry` ("ModelNew"; "Model": the problem's own, path unused) called.
  std::string python_entry;
};
void to_json(json& j, const LoadRequest& r);
void from_json(const json& j, LoadRequest& r);

// A device buffer of another process, as CUDA IPC gives it: the handle of its allocation (hex)
// and where in that allocation it starts (a slab's buffers share one allocation). The importer
// checks offset + size against the allocation it mapped (an untrusted exporter may claim any).
struct IpcBuffer {
  std::string handle;
  uint64_t offset = 0;
  bool operator==(const IpcBuffer&) const = default;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(IpcBuffer, handle, offset)

// run: one correctness call of `slot`. Inputs drawn from their gen (device data) or copied from
// the arena (host data); outputs and workspace poisoned first, the L2 flushed, then one call.
// Host data: outputs (and inputs_after) copied back to the arena; `keep`: they stay on the GPU
// under <slot>/[moved/]out/<name> and, with `export_ipc`, their IPC handles come back.
struct RunReply {
  int rc = 0;  // kevo_forward's return code
  double span_ms = 0, wall_ms = 0, after_stream_ms = 0;
  double after_stream_cpu_ms = 0;  // after_stream_ms when the runner does not say (check/runner_replies.h)
  int threads_before = 0, threads_after = 0;
  std::string launch_error;
  std::vector<Violation> violations;
  std::vector<IpcBuffer> outputs_ipc, inputs_ipc;  // keep + export_ipc, in descriptor order
};
void to_json(json& j, const RunReply& r);
void from_json(const json& j, RunReply& r);
struct RunRequest : CallArgs {
  static constexpr const char* kCmd = "run";
  using Reply = RunReply;
  std::string slot;
  uint64_t arena_size = 0;  // the arena's size to map (0: device data only)
  std::vector<TensorDesc> inputs, outputs;
  std::vector<TensorDesc> inputs_after;  // host data: where the inputs go back after the call (empty: nowhere)
  int poison = 0;     // 0: outputs and workspace poisoned with 0xFF bytes, else 0x7F
  int placement = 0;  // non-zero: fresh buffers, shifted away from the old ones (<slot>/moved/)
  uint64_t alloc_limit = uint64_t(8) << 30;
  std::optional<uint64_t> flush_bytes;  // absent: the runner's current setting
  bool keep = false;
  bool export_ipc = false;  // "export" on the wire
};
void to_json(json& j, const RunRequest& r);
void from_json(const json& j, RunRequest& r);

// time_batch: `calls` timed calls of `slot` ("" = none: only the work around the calls, to
// measure it). Call i draws every input afresh with key draw_call_base(gen.base, first_call + i)
// and the timed draws (draw_timed_value: the cost of this work bounds the outside clock), poisons the outputs, flushes L2, then calls the kernel between two events; afterwards trusted
// kernels summarise each output (OutputSums under `sums_key`). The same first_call in two
// runners gives the same inputs. The batch ends with a device-wide synchronize before replying.
struct TimeBatchReply;
struct TimeBatchRequest : CallArgs {
  static constexpr const char* kCmd = "time_batch";
  using Reply = TimeBatchReply;
  std::string slot;
  std::vector<TensorDesc> inputs, outputs;
  uint64_t alloc_limit = uint64_t(8) << 30;
  uint64_t first_call = 0;
  int calls = 1;
  uint64_t flush_bytes = 0;
  uint64_t sums_key = 0;
  bool export_outputs = false;  // reply with IPC handles of the output buffers (same every batch)
  bool state = false;           // reply with the device state before the first call and after the last
};
KEVO_PROTO_REQUEST(TimeBatchRequest, slot, inputs, outputs, scalars, dims, workspace_bytes, alloc_limit, first_call,
                   calls, flush_bytes, sums_key, export_outputs, state)

struct TimeBatchReply {
  bool ok = false;
  std::string error;
  bool fatal = false;
  std::vector<double> call_ms;             // events around each call (in-process: untrusted)
  std::vector<double> flush_ms;            // events around each call's L2 flush
  std::vector<std::vector<Sums>> sums;     // [call][output]
  std::vector<int> rc;                     // kevo_forward's return code per call
  std::string launch_error;
  double span_ms = 0, after_stream_ms = 0, after_stream_cpu_ms = 0;
  int threads_before = 0, threads_after = 0;
  std::vector<Violation> violations;
  std::vector<IpcBuffer> outputs_ipc;      // when export_outputs
  std::optional<DeviceState> state_before, state_after;
};
void to_json(json& j, const TimeBatchReply& r);
void from_json(const json& j, TimeBatchReply& r);

// The runner's reply to a request it could not serve (in place of that request's reply). `fatal`:
// the CUDA context is unusable and the runner exits after replying; `cuda_error` is then the
// cudaError_t that said so, as its number (0: the failure was not CUDA's, or the runner predates
// the field), so the checker classifies the death without reading the message's words.
struct ErrorReply {
  std::string error;
  bool fatal = false;
  int cuda_error = 0;
};
void to_json(json& j, const ErrorReply& r);
void from_json(const json& j, ErrorReply& r);

// One comparison made where the buffers lie (runner/device_data.h's CompareResult). JSON has no
// NaN or Inf: such a figure travels as "nan", "inf" or "-inf".
struct CompareCounts {
  int64_t count = 0, mismatches = 0, unwritten = 0, nonfinite = 0;
  int64_t first_bad = -1;
  double first_got = 0, first_want = 0, max_abs_err = 0, max_rel_err = 0;
};
void to_json(json& j, const CompareCounts& c);
void from_json(const json& j, CompareCounts& c);

// compare: buffers of another process (IPC handles) against this runner's own buffers.
struct CompareOutput {
  IpcBuffer ipc;
  int dtype = 0;
  std::optional<int> ref_dtype;  // the reference's dtype when it differs from `dtype`
  int64_t numel = 0;
  uint64_t nbytes = 0;
  std::string ref;  // this runner's buffer key (base/out/<name>, ...)
  uint64_t ref_nbytes = 0;
  bool check_poison = true;           // failing 0xFF elements count as unwritten
  std::optional<std::string> runs_ref;  // also compared with this buffer (two runs must agree)
  std::optional<std::string> snapshot;  // a copy of the output kept under this key
};
void to_json(json& j, const CompareOutput& o);
void from_json(const json& j, CompareOutput& o);
struct CompareInput {
  IpcBuffer ipc;
  uint64_t nbytes = 0;
  std::string ref;
};
void to_json(json& j, const CompareInput& i);
void from_json(const json& j, CompareInput& i);
struct CompareOutputResult {
  CompareCounts cmp;
  std::optional<CompareCounts> runs;  // when runs_ref was given
};
void to_json(json& j, const CompareOutputResult& r);
void from_json(const json& j, CompareOutputResult& r);
struct InputDiff {
  uint64_t differing_bytes = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(InputDiff, differing_bytes)
struct CompareReply {
  std::vector<CompareOutputResult> outputs;  // in request order
  std::vector<InputDiff> inputs;
  // A buffer that does not lie inside the allocation its handle maps (offset + size past its end):
  // nothing was compared. Only a runner that lies about its buffers sends such a reference.
  std::string out_of_bounds;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CompareReply, outputs, inputs, out_of_bounds)
struct CompareRequest {
  static constexpr const char* kCmd = "compare";
  using Reply = CompareReply;
  double atol = 0, rtol = 0;
  std::vector<CompareOutput> outputs;
  std::vector<CompareInput> inputs;
};
void to_json(json& j, const CompareRequest& r);
void from_json(const json& j, CompareRequest& r);

// materialize: inputs drawn into base/in/<name> and copies of them, and poisoned output buffers,
// lent to another process under xfer/ (replacing what was lent before).
struct MaterializeReply {
  std::vector<std::string> inputs_ipc, outputs_ipc;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(MaterializeReply, inputs_ipc, outputs_ipc)
struct MaterializeRequest {
  static constexpr const char* kCmd = "materialize";
  using Reply = MaterializeReply;
  std::vector<TensorDesc> inputs, outputs;
};
KEVO_PROTO_REQUEST(MaterializeRequest, inputs, outputs)

// collect: the lent output buffers (what the other process wrote) become base/out/<name>; every
// lent buffer is freed. No outputs: only the freeing.
struct CollectReply {};
void to_json(json& j, const CollectReply& r);
void from_json(const json& j, CollectReply& r);
struct CollectRequest {
  static constexpr const char* kCmd = "collect";
  using Reply = CollectReply;
  std::vector<TensorDesc> outputs;
};
KEVO_PROTO_REQUEST(CollectRequest, outputs)

// release: frees the runner's buffers whose keys start with any of `prefixes` ("" frees all).
struct ReleaseReply {};
void to_json(json& j, const ReleaseReply& r);
void from_json(const json& j, ReleaseReply& r);
struct ReleaseRequest {
  static constexpr const char* kCmd = "release";
  using Reply = ReleaseReply;
  std::vector<std::string> prefixes;
};
KEVO_PROTO_REQUEST(ReleaseRequest, prefixes)

// bandwidth: device-to-device copies of `bytes`, bytes read plus written per second.
struct BandwidthReply {
  double copy_gbps = 0, copy_gbps_median = 0;  // the best and the median of the timed copies
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(BandwidthReply, copy_gbps, copy_gbps_median)
struct BandwidthRequest {
  static constexpr const char* kCmd = "bandwidth";
  using Reply = BandwidthReply;
  uint64_t bytes = uint64_t(1) << 30;
};
KEVO_PROTO_REQUEST(BandwidthRequest, bytes)

// probe: the arithmetic peaks of the trusted probe library at `path` (time/sol_probe.cu).
struct ProbeReply {
  std::map<std::string, double> tflops;  // by probe kind as text: "0" fp32, "1" tensor cores
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ProbeReply, tflops)
struct ProbeRequest {
  static constexpr const char* kCmd = "probe";
  using Reply = ProbeReply;
  std::string path;
};
void to_json(json& j, const ProbeRequest& r);
void from_json(const json& j, ProbeRequest& r);

// A message from the other side as its type, or an error naming what was malformed (a runner
// that loaded a candidate may send anything).
template <class T>
Result<T> decode(const json& j, const char* what) {
  try {
    return j.get<T>();
  } catch (const json::exception& e) {
    return fail("malformed {}: {}", what, e.what());
  }
}

}  // namespace kevo::proto
