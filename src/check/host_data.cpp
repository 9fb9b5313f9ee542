#include "check/host_data.h"

#include <cstring>

namespace kevo {

proto::TensorDesc Layout::add(const std::string& name, DType dt, const std::vector<int64_t>& shape, size_t nbytes) {
  size_t off = (size + 255) & ~size_t(255);
  size = off + nbytes;
  int64_t numel = 1;
  for (auto x : shape) numel *= x;
  return {name, static_cast<int>(dt), shape, numel, nbytes, off, std::nullopt};
}

Prepared prepare(const ResolvedConfig& r, const std::vector<HostTensor>& ins, bool want_inputs_after) {
  Prepared p;
  for (const auto& t : ins) p.inputs.push_back(p.layout.add(t.name, t.dtype, t.shape, t.bytes.size()));
  for (const auto& o : r.outputs) p.outputs.push_back(p.layout.add(o.name(), o.dtype(), o.shape, o.nbytes));
  if (want_inputs_after)
    for (const auto& t : ins)
      p.inputs_after.push_back(p.layout.add(t.name, t.dtype, t.shape, t.bytes.size()));
  return p;
}

void put_inputs(Arena& a, const std::vector<proto::TensorDesc>& descs, const std::vector<HostTensor>& ins) {
  for (size_t i = 0; i < ins.size(); ++i) std::memcpy(a.data() + descs[i].offset, ins[i].bytes.data(), ins[i].bytes.size());
}

bool arena_holds(Arena& a, const proto::TensorDesc& d, const HostTensor& t) {
  return std::memcmp(a.data() + d.offset, t.bytes.data(), t.bytes.size()) == 0;
}

std::vector<HostTensor> get_outputs(Arena& a, const std::vector<proto::TensorDesc>& descs) {
  std::vector<HostTensor> out;
  for (const auto& d : descs) {
    HostTensor t = make_tensor(d.name, static_cast<DType>(d.dtype), d.shape);
    std::memcpy(t.bytes.data(), a.data() + d.offset, t.bytes.size());
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace kevo
