// Where a runner request's time goes (KEVO_TRACE_CALLS=1): the driver calls an evaluation's
// first calls of a config are thought to wait on (allocations, frees, IPC exports, opens and
// closes), summed per request and sent beside the reply as "trace". Diagnostics only: no verdict
// reads it, and a candidate's runner may report anything there.
// Thread-safety: none; a runner serves one request at a time on one thread.
#pragma once

#include <chrono>

#include <nlohmann/json.hpp>

namespace kevo::runner {

class OpTrace {
 public:
  enum Op { kAlloc, kFree, kExport, kOpen, kClose, kOps };
  static bool enabled();  // KEVO_TRACE_CALLS set and not "0", read once
  void reset() { *this = OpTrace{}; }
  void add(Op op, double ms) {
    ms_[op] += ms;
    ++count_[op];
  }
  // {"alloc_ms": .., "allocs": .., ...} for the ops that ran, and the handler's whole time.
  nlohmann::json to_json(double handler_ms) const;

  // Times one driver call into `op` of `t`.
  class Scope {
   public:
    Scope(OpTrace& t, Op op) : t_(t), op_(op), t0_(std::chrono::steady_clock::now()) {}
    ~Scope() { t_.add(op_, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count()); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    OpTrace& t_;
    Op op_;
    std::chrono::steady_clock::time_point t0_;
  };

 private:
  double ms_[kOps] = {};
  int count_[kOps] = {};
};

}  // namespace kevo::runner
