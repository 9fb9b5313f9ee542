// The checker <-> kevo-runner protocol: every request and reply type, and its JSON form, in one
// place. Both sides use only these structs; a key is spelled once, here. Framing is channel.h's.
// Thread-safety: plain values.
#pragma once

#include <cstdint>
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

// time_batch: `calls` timed calls of `slot` ("" = none: only the work around the calls, to
// measure it). Call i draws every input afresh with key draw_call_base(gen.base, first_call + i)
// and the timed draws (draw_timed_value: the cost of this work bounds the outside clock), poisons the outputs, flushes L2, then calls the kernel between two events; afterwards trusted
// kernels summarise each output (OutputSums under `sums_key`). The same first_call in two
// runners gives the same inputs. The batch ends with a device-wide synchronize before replying.
struct TimeBatchRequest {
  std::string slot;
  std::vector<TensorDesc> inputs, outputs;
  std::vector<double> scalars;
  std::vector<int64_t> dims;
  uint64_t workspace_bytes = 0;
  uint64_t alloc_limit = uint64_t(8) << 30;
  uint64_t first_call = 0;
  int calls = 1;
  uint64_t flush_bytes = 0;
  uint64_t sums_key = 0;
  bool export_outputs = false;  // reply with IPC handles of the output buffers (same every batch)
  bool state = false;           // reply with the device state before the first call and after the last
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TimeBatchRequest, slot, inputs, outputs, scalars, dims,
                                                workspace_bytes, alloc_limit, first_call, calls, flush_bytes,
                                                sums_key, export_outputs, state)

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
  std::vector<std::string> outputs_ipc;    // when export_outputs
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
