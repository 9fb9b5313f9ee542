// The host data plane: inputs drawn by the checker and outputs copied back through the runner's
// shared arena (the CPU reference's path, and --host-data). Layouts of tensors in the arena.
// Thread-safety: plain functions over the caller's arena.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "run/channel.h"
#include "run/protocol.h"
#include "task/resolved.h"
#include "task/tensor.h"
#include "util/result.h"

namespace kevo {

// Lays tensors out in the runner's shared arena and describes them in a request.
struct Layout {
  size_t size = 0;
  proto::TensorDesc add(const std::string& name, DType dt, const std::vector<int64_t>& shape, size_t nbytes);
};

struct Prepared {
  Layout layout;
  std::vector<proto::TensorDesc> inputs, outputs, inputs_after;
};

// The arena's layout for the drawn inputs `ins` and config r's outputs (and, with
// `want_inputs_after`, a second copy of the inputs to compare after the call).
Prepared prepare(const ResolvedConfig& r, const std::vector<HostTensor>& ins, bool want_inputs_after);
void put_inputs(Arena& a, const std::vector<proto::TensorDesc>& descs, const std::vector<HostTensor>& ins);
// Whether the arena region `d` still holds exactly `t`'s bytes (read in place: no copy).
bool arena_holds(Arena& a, const proto::TensorDesc& d, const HostTensor& t);
std::vector<HostTensor> get_outputs(Arena& a, const std::vector<proto::TensorDesc>& descs);

}  // namespace kevo
