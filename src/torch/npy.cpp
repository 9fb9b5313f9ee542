#include "torch/npy.h"

#include <fmt/format.h>

#include <cstring>
#include <regex>

#include "task/dtype.h"
#include "util/fs.h"

namespace kevo::torch {

std::string npy_encode(const HostTensor& t) {
  std::string shape;
  for (size_t i = 0; i < t.shape.size(); ++i) shape += fmt::format("{}, ", t.shape[i]);
  if (t.shape.size() > 1) shape.resize(shape.size() - 2);  // "(2, 3)"; one dim keeps "(5,)"
  if (t.shape.size() == 1) shape.resize(shape.size() - 1);
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}",
                  dtype_info(t.dtype).npy_descr, shape);
  // magic (6) + version (2) + length (2) + header + '\n', padded with spaces to a multiple of 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  uint16_t n = static_cast<uint16_t>(header.size());
  out += static_cast<char>(n & 0xff);
  out += static_cast<char>(n >> 8);
  out += header;
  out.append(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
  return out;
}

Result<HostTensor> npy_decode(std::string_view b, DType tag, const std::string& what) {
  if (b.size() < 10 || b.substr(0, 6) != std::string_view("\x93NUMPY", 6))
    return fail(ErrorCode::kParse, "{}: not a .npy file (bad magic)", what);
  int major = static_cast<uint8_t>(b[6]);
  size_t hlen = 0, off = 0;
  if (major == 1) {
    hlen = static_cast<uint8_t>(b[8]) | (static_cast<size_t>(static_cast<uint8_t>(b[9])) << 8);
    off = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) return fail(ErrorCode::kParse, "{}: truncated .npy header", what);
    for (int i = 0; i < 4; ++i) hlen |= static_cast<size_t>(static_cast<uint8_t>(b[8 + i])) << (8 * i);
    off = 12;
  } else {
    return fail(ErrorCode::kParse, "{}: unsupported .npy version {}", what, major);
  }
  if (b.size() < off + hlen) return fail(ErrorCode::kParse, "{}: truncated .npy header", what);
  std::string header(b.substr(off, hlen));
  std::smatch m;
  static const std::regex descr_re(R"('descr'\s*:\s*'([^']*)')");
  static const std::regex fortran_re(R"('fortran_order'\s*:\s*(True|False))");
  static const std::regex shape_re(R"('shape'\s*:\s*\(([^)]*)\))");
  if (!std::regex_search(header, m, descr_re)) return fail(ErrorCode::kParse, "{}: .npy header has no descr", what);
  std::string descr = m[1];
  if (!std::regex_search(header, m, fortran_re)) return fail(ErrorCode::kParse, "{}: .npy header has no fortran_order", what);
  if (m[1] == "True") return fail("{}: Fortran-order arrays are not supported (write C order)", what);
  if (!std::regex_search(header, m, shape_re)) return fail(ErrorCode::kParse, "{}: .npy header has no shape", what);
  std::string shape_text = m[1];
  const char* want = dtype_info(tag).npy_descr;
  bool descr_ok = descr == want || (tag == DType::U8 && (descr == "|b1" || descr == "<u1"));
  if (!descr_ok)
    return fail("{}: holds '{}' but kevo dtype {} needs '{}'", what, descr, dtype_name(tag), want);
  HostTensor t;
  t.dtype = tag;
  static const std::regex num_re(R"(\d+)");
  for (auto it = std::sregex_iterator(shape_text.begin(), shape_text.end(), num_re);
       it != std::sregex_iterator(); ++it)
    t.shape.push_back(std::stoll(it->str()));
  size_t nbytes = static_cast<size_t>(t.numel()) * dtype_size(tag);
  size_t data_off = off + hlen;
  if (b.size() - data_off != nbytes)
    return fail(ErrorCode::kParse, "{}: {} data bytes for shape ({}) of {}, expected {}", what, b.size() - data_off,
                shape_text, dtype_name(tag), nbytes);
  t.bytes.assign(reinterpret_cast<const uint8_t*>(b.data()) + data_off,
                 reinterpret_cast<const uint8_t*>(b.data()) + b.size());
  return t;
}

Status write_npy(const std::filesystem::path& p, const HostTensor& t) {
  return write_file_atomic(p, npy_encode(t));
}

Result<HostTensor> read_npy(const std::filesystem::path& p, DType tag) {
  auto data = read_file(p);
  if (!data) return data.unexpected();
  return npy_decode(*data, tag, p.string());
}

}  // namespace kevo::torch
