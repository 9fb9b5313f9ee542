"""Tensors <-> .npy files with kevo dtype tags.

numpy has no bfloat16, so bf16 tensors are stored as raw uint16 ('<u2') and the kevo dtype tag
("bf16") travels next to the file name in the JSON message. Booleans are stored as uint8 0/1.
"""

import numpy as np
import torch

# kevo dtype name -> (torch dtype, numpy dtype of the file): a mirror of the dtype table in
# src/task/dtype.cpp (tests/task/dtype_test.cpp keeps the two equal).
KEVO_DTYPES = {
    "f32": (torch.float32, np.dtype("<f4")),
    "f16": (torch.float16, np.dtype("<f2")),
    "bf16": (torch.bfloat16, np.dtype("<u2")),
    "i32": (torch.int32, np.dtype("<i4")),
    "i64": (torch.int64, np.dtype("<i8")),
    "u8": (torch.uint8, np.dtype("|u1")),
}

_TORCH_TO_KEVO = {
    torch.float32: "f32",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.int32: "i32",
    torch.int64: "i64",
    torch.uint8: "u8",
    torch.bool: "u8",
}


class TensorError(Exception):
    pass


def kevo_dtype(t, what):
    """The kevo dtype name of a torch tensor, or a clear error naming `what`."""
    d = _TORCH_TO_KEVO.get(t.dtype)
    if d is None:
        raise TensorError(
            f"{what}: dtype {t.dtype} has no kevo equivalent (kevo dtypes: f32 f16 bf16 i32 i64 u8)"
        )
    return d


def torch_dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def save(t, path, what="tensor"):
    """Writes a torch tensor as .npy; returns its kevo dtype name."""
    d = kevo_dtype(t, what)
    t = t.detach().to("cpu").contiguous()
    if t.dtype == torch.bool:
        t = t.to(torch.uint8)
    if t.dtype == torch.bfloat16:
        a = t.view(torch.int16).numpy().view(np.uint16)
    else:
        a = t.numpy()
    np.save(path, np.ascontiguousarray(a.astype(KEVO_DTYPES[d][1], copy=False)), allow_pickle=False)
    return d


def load(path, dtype, torch_dtype=None):
    """Reads a .npy file written by kevo; `dtype` is the kevo tag, `torch_dtype` an optional
    final torch dtype name (e.g. "bool" for a u8 file that stands for a bool tensor)."""
    if dtype not in KEVO_DTYPES:
        raise TensorError(f"{path}: unknown kevo dtype '{dtype}'")
    tdt, ndt = KEVO_DTYPES[dtype]
    a = np.load(path, allow_pickle=False)
    if a.dtype != ndt:
        raise TensorError(f"{path}: file holds {a.dtype}, expected {ndt} for kevo dtype {dtype}")
    a = np.ascontiguousarray(a)
    if dtype == "bf16":
        t = torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    else:
        t = torch.from_numpy(a.copy())
    if torch_dtype == "bool":
        t = t.to(torch.bool)
    return t
