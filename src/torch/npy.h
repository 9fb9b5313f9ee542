// The .npy format (version 1.0 written, 1.0-3.0 read) for HostTensors: how tensors cross the
// PyTorch bridge. numpy has no bfloat16, so bf16 is stored as raw little-endian uint16 ('<u2') and
// the dtype travels beside the file as a kevo dtype tag; numpy bool ('|b1') reads as u8.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "task/tensor.h"
#include "util/result.h"

namespace kevo::torch {

// Serializes a tensor (C order). An empty shape writes a 0-dim array.
std::string npy_encode(const HostTensor& t);
// Parses .npy bytes. `tag` is the kevo dtype the data stands for; the file's descr must be
// dtype_info(tag).npy_descr (task/dtype.h; or '|b1' for u8). `what` names the source in errors;
// a malformed file is ErrorCode::kParse.
Result<HostTensor> npy_decode(std::string_view bytes, DType tag, const std::string& what);

Status write_npy(const std::filesystem::path& p, const HostTensor& t);
Result<HostTensor> read_npy(const std::filesystem::path& p, DType tag);

}  // namespace kevo::torch
