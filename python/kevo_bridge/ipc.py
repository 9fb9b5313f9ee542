"""Tensors that lie in another process's memory, used in place (the ``run_ipc`` op and ``time`` with
``ipc`` arguments; docs/INTEROP.md).

kevo's oracle runner draws a config's inputs on the GPU and exports them, and the buffers the
reference's outputs go to, as CUDA IPC handles (64 bytes, sent as hex). The bridge opens them with
the driver API (``cuIpcOpenMemHandle`` through ctypes on libcuda.so.1) and wraps each as a torch
tensor without a copy: raw bytes (``__cuda_array_interface__`` typestr ``|u1``) viewed as the
tensor's dtype, so bf16 needs no numpy support. Nothing of this process is exported.

Tests without a GPU use kevo's fake runner, whose stand-in for an IPC handle is the absolute path
of a file holding the buffer's bytes: such a handle is mapped (``numpy.memmap``, shared) and used
on the CPU, so the same protocol runs end to end. A file handle needs device ``cpu``, a CUDA handle
device ``cuda``.
"""

import ctypes
import math
import os

import numpy as np
import torch

from .tensors import KEVO_DTYPES, TensorError

_HANDLE_BYTES = 64
_LAZY_ENABLE_PEER_ACCESS = 1


class _Handle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_ubyte * _HANDLE_BYTES)]


class _Driver:
    """The few driver-API entry points needed; loaded on first use."""

    _instance = None

    @classmethod
    def get(cls):
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    def __init__(self):
        try:
            lib = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise TensorError(f"CUDA IPC: cannot load the CUDA driver (libcuda.so.1): {e}")
        self.lib = lib
        # cuda.h maps cuIpcOpenMemHandle to its _v2 symbol; older drivers have only the first.
        self.open_fn = getattr(lib, "cuIpcOpenMemHandle_v2", None) or lib.cuIpcOpenMemHandle
        self.open_fn.argtypes = [ctypes.POINTER(ctypes.c_uint64), _Handle, ctypes.c_uint]
        self.open_fn.restype = ctypes.c_int
        lib.cuIpcCloseMemHandle.argtypes = [ctypes.c_uint64]
        lib.cuIpcCloseMemHandle.restype = ctypes.c_int
        lib.cuCtxGetCurrent.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        lib.cuCtxGetCurrent.restype = ctypes.c_int
        lib.cuGetErrorName.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        lib.cuGetErrorName.restype = ctypes.c_int

    def check(self, rc, what):
        if rc != 0:
            name = ctypes.c_char_p()
            self.lib.cuGetErrorName(rc, ctypes.byref(name))
            raise TensorError(f"CUDA IPC: {what} failed: {(name.value or b'?').decode()} ({rc})")

    def ensure_context(self, device):
        # The handle opens into the calling thread's current context: torch's, made current by
        # the runtime on its first allocation.
        torch.empty(1, device=device)
        ctx = ctypes.c_void_p()
        self.check(self.lib.cuCtxGetCurrent(ctypes.byref(ctx)), "cuCtxGetCurrent")
        if not ctx.value:
            raise TensorError("CUDA IPC: torch made no CUDA context current on this thread")

    def open(self, hex_handle):
        try:
            raw = bytes.fromhex(hex_handle)
        except ValueError:
            raw = b""
        if len(raw) != _HANDLE_BYTES:
            raise TensorError(f"CUDA IPC: '{hex_handle[:40]}' is not a {_HANDLE_BYTES}-byte handle in hex")
        ptr = ctypes.c_uint64()
        self.check(self.open_fn(ctypes.byref(ptr), _Handle.from_buffer_copy(raw), _LAZY_ENABLE_PEER_ACCESS),
                   "cuIpcOpenMemHandle")
        return ptr.value

    def close(self, ptr):
        self.check(self.lib.cuIpcCloseMemHandle(ptr), "cuIpcCloseMemHandle")


class _DeviceBytes:
    """nbytes of device memory at ptr, as torch.as_tensor takes it (no copy, no owner)."""

    def __init__(self, ptr, nbytes):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (ptr, False),
                                         "strides": None, "version": 2}


class Session:
    """The tensors of one request. Closing synchronizes the device and closes every handle: the
    exporting process may free the buffers once the reply is sent. Tensors taken from a session
    must not be used after it is closed (the reference module copies weights into its own
    parameters; it must not keep its inputs)."""

    def __init__(self, device):
        self.device = device
        self._ptrs = []
        self._maps = []

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            self.close()
        except TensorError:
            if exc_type is None:
                raise  # else the request's own error is the one to report
        return False

    def tensor(self, spec, what):
        """spec: {"ipc": handle, "dtype": kevo dtype, "shape": [...], "torch_dtype"?}."""
        dtype = spec.get("dtype")
        if dtype not in KEVO_DTYPES:
            raise TensorError(f"{what}: unknown kevo dtype '{dtype}'")
        tdt, ndt = KEVO_DTYPES[dtype]
        shape = [int(s) for s in spec.get("shape", [])]
        nbytes = math.prod(shape) * ndt.itemsize
        handle = str(spec.get("ipc", ""))
        if os.path.isabs(handle):
            raw = self._file(handle, nbytes, what)
        else:
            raw = self._cuda(handle, nbytes, what)
        t = raw.view(tdt).reshape(shape)
        if spec.get("torch_dtype") == "bool":
            t = t.to(torch.bool)  # a copy: u8 0/1 in kevo's buffer
        return t

    def _file(self, path, nbytes, what):
        if self.device != "cpu":
            raise TensorError(f"{what}: a file handle (the fake runner's stand-in for CUDA IPC) needs "
                              f"device cpu, not '{self.device}'")
        size = os.path.getsize(path)
        if size < nbytes:
            raise TensorError(f"{what}: {path} holds {size} bytes, the tensor needs {nbytes}")
        if nbytes == 0:
            return torch.empty(0, dtype=torch.uint8)
        m = np.memmap(path, dtype=np.uint8, mode="r+", shape=(nbytes,))
        self._maps.append(m)
        return torch.from_numpy(m)

    def _cuda(self, handle, nbytes, what):
        if not self.device.startswith("cuda"):
            raise TensorError(f"{what}: a CUDA IPC handle needs device cuda, not '{self.device}'")
        drv = _Driver.get()
        if not self._ptrs:
            drv.ensure_context(self.device)
        ptr = drv.open(handle)
        self._ptrs.append(ptr)
        dev = torch.device(self.device)
        if dev.index is None:
            dev = torch.device("cuda", torch.cuda.current_device())
        if nbytes == 0:
            return torch.empty(0, dtype=torch.uint8, device=dev)
        t = torch.as_tensor(_DeviceBytes(ptr, nbytes), device=dev)
        if t.data_ptr() != ptr:  # a copy would leave the outputs unwritten: never silently
            raise TensorError(f"{what}: torch copied the IPC buffer instead of using it in place")
        return t

    def close(self):
        errors = []
        if self._ptrs:
            try:
                torch.cuda.synchronize()
            except Exception as e:  # the context is broken; the handles still go
                errors.append(f"synchronize: {e}")
            drv = _Driver.get()
            for p in self._ptrs:
                try:
                    drv.close(p)
                except TensorError as e:
                    errors.append(str(e))
        for m in self._maps:
            m.flush()
        self._ptrs, self._maps = [], []
        if errors:
            raise TensorError("; ".join(errors))
