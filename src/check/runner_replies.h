// What the checker builds for, and reads from, its runners (the messages are run/protocol.h's):
// the request parts every call shares, input and output descriptors, the guard results of a reply,
// and what a runner's death means for the verdict. Thread-safety: plain functions.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/compare.h"
#include "check/verdict.h"
#include "run/runner_client.h"
#include "task/resolved.h"
#include "task/task.h"
#include "torch/bridge.h"

namespace kevo {

// The scalars, dims and workspace_bytes of a call on config r (a run or time_batch request's).
proto::CallArgs call_args(const Task& task, const ResolvedConfig& r);

// Input descriptors the runners fill on the GPU themselves (task/draw.h): no bytes cross the
// checker's memory, the arena or the PCIe bus.
Result<std::vector<proto::TensorDesc>> drawn_inputs(const ResolvedConfig& r, uint64_t seed, bool wide);
std::vector<proto::TensorDesc> output_descs(const ResolvedConfig& r);

// Tensors a runner exported (descriptors and their IPC handles, in order), as the bridge takes them;
// an error when the runner lent another number of buffers.
Result<std::vector<torch::DeviceTensor>> device_tensors(const std::vector<proto::TensorDesc>& descs,
                                                          const std::vector<std::string>& ipc);

// A comparison made on the GPU by the oracle's runner (runner/device_data.h), in compare.h's terms;
// a failed one has `fail_reason`, or with kNone the most telling of unwritten, nan and mismatch.
Comparison comparison_of(const proto::CompareCounts& c, Reason fail_reason = Reason::kNone);

// The reason of a guard violation the runner reported by its kind ("foreign_stream", ...); a kind
// this build does not know is kGuard.
Reason violation_reason(std::string_view kind);

std::string arch_from_hello(const proto::HelloReply& h);

// cudaError_t values a runner's fatal reply may carry (proto::ErrorReply::cuda_error), as numbers:
// the checker includes no CUDA header. They are driver_types.h's, stable across CUDA releases.
inline constexpr int kCudaErrorIllegalAddress = 700;      // an illegal memory access
inline constexpr int kCudaErrorIllegalInstruction = 715;  // an illegal instruction
inline constexpr int kCudaErrorMisalignedAddress = 716;   // a misaligned memory access

// The crash reason of a fatal CUDA error by its number: the candidate's kernel touched memory or
// ran code it must not (kIllegalAddress), or anything else CUDA reported (kCudaError, also for 0:
// no number, from a runner before the field or a fatal error that was not CUDA's).
Reason fatal_cuda_reason(int cuda_error);

// Classifies a runner that died or reported a fatal CUDA error (`refusal`: its last reply, when
// that was an ErrorReply).
void classify_death(Verdict& v, RunnerClient& r, const proto::ErrorReply* refusal, const std::string& what);

// Runners are reaped in the background (run/runner_client.h); before anything is timed, those of
// earlier evaluations (or this one's candidate, before PyTorch's timing) must have left the GPU.
void quiet_gpu();

// Device time after the given stream went idle, bounded by the runner's CPU time over that wait
// (it spins: a descheduled host is not hidden work).
double hidden_ms(double after_stream_ms, double after_stream_cpu_ms);

// A device-wide wait longer than this after the given stream finished is work the candidate left
// elsewhere. Real leftover work is ms; the runner's own teardown of a call is microseconds.
constexpr double kHiddenWorkMs = 1.0;

// What the candidate's runner's guards saw around a call (run) or a timed batch (time_batch): the
// same checks decide both.
struct GuardReport {
  std::vector<proto::Violation> violations;
  int threads_before = 0, threads_after = 0;
  std::string launch_error;
  std::vector<int> rc;  // kevo_forward's return code per call
  double span_ms = 0, after_stream_ms = 0, after_stream_cpu_ms = 0;
  const char* unit = "call";  // how messages name the span: "call", "timed batch"
  static GuardReport of(const proto::RunReply& r);
  static GuardReport of(const proto::TimeBatchReply& r);
};

// Checks the guards' report (violations, a host thread left running, launch errors, return codes,
// work left outside the given stream); returns false when the verdict is decided.
bool check_guards(Verdict& v, const GuardReport& g, const std::string& where);

}  // namespace kevo
