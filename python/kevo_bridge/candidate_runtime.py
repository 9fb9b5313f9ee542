"""The Python half of kevo's Python candidate runtime (docs/PYTHON_CANDIDATES.md).

kevo-runner embeds the interpreter (runner/python_host.h) and calls three functions here:
``prepare`` before the sandbox closes (imports torch, reads the task's problem), ``load`` once the
process is confined (runs the candidate's module: a KernelBench ``ModelNew`` solution, or the
problem's own ``Model`` as the eager baseline), and ``call`` for every call the runner makes, with
the address of the C ABI's ``kevo_args``. The tensors are kevo's own buffers, wrapped without a
copy; the result is copied into kevo's output buffers on kevo's stream, so the outside clock, the
timed-output sums and the oracle's comparison judge what the candidate really produced.

The checks made here (format_checks) only name a failure precisely: the candidate's code shares
this interpreter and could defeat them. What decides is outside this process.
"""

import ast
import ctypes
import json
import os
import types

import torch

from . import format_checks
from .sizes import TopLevel

# Return codes of ``call`` (run/python_codes.h mirrors them; tests keep the two equal).
OK = 0
FORMAT_BASE = 100  # + 1 + the index of a format_checks reason in FORMAT_REASONS
FORMAT_REASONS = [format_checks.EARLY_EXIT, format_checks.FORWARD_RAISED, format_checks.FLAG_FLIPPED,
                  format_checks.NOT_A_TENSOR, format_checks.TENSOR_SUBCLASS, format_checks.ALIASED_INPUT,
                  format_checks.OUTPUT_REUSED, format_checks.INPUT_MODIFIED, format_checks.OUTPUT_COUNT,
                  format_checks.DTYPE_CHANGED]
OUTPUT_SHAPE = 120
WEIGHTS = 121
CONSTRUCT = 122
NOT_LOADED = 123
INLINE_BUILD = 124
INTERNAL = 125

_MAX_DIMS = 8


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("ndim", ctypes.c_int),
                ("shape", ctypes.c_int64 * _MAX_DIMS), ("stride", ctypes.c_int64 * _MAX_DIMS)]


class _Args(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_int),
                ("inputs", ctypes.c_void_p), ("num_inputs", ctypes.c_int),
                ("outputs", ctypes.c_void_p), ("num_outputs", ctypes.c_int),
                ("scalars", ctypes.c_void_p), ("num_scalars", ctypes.c_int),
                ("dims", ctypes.c_void_p), ("num_dims", ctypes.c_int),
                ("workspace", ctypes.c_void_p), ("workspace_bytes", ctypes.c_size_t),
                ("stream", ctypes.c_void_p)]


# kevo_dtype -> (array-interface type string, torch dtype seen through it, final torch dtype).
# bf16 has no type string: it is read as int16 and viewed.
_DTYPES = {0: ("<f4", torch.float32), 1: ("<f2", torch.float16), 2: ("<i2", torch.bfloat16),
           3: ("<i4", torch.int32), 4: ("<i8", torch.int64), 5: ("|u1", torch.uint8)}


class _Interface:
    """An object that lends a raw buffer to torch through the (CUDA) array interface."""

    def __init__(self, name, desc):
        setattr(self, name, desc)


class _State:
    def __init__(self):
        self.meta = None
        self.device = "cuda"
        self.problem_source = None
        self.cls = None
        self.models = {}       # dims tuple -> module
        self.tensors = {}      # raw descriptor bytes -> [tensor]
        self.streams = {}
        self.checker = None
        self.inline_attempts = []
        self.error = ""


_S = _State()


def _wrap(t, device):
    typestr, dt = _DTYPES.get(t.dtype, (None, None))
    if typestr is None:
        raise ValueError(f"unknown kevo dtype {t.dtype}")
    shape = tuple(t.shape[i] for i in range(t.ndim))
    item = int(typestr[2])
    strides = tuple(t.stride[i] * item for i in range(t.ndim))
    desc = {"shape": shape, "typestr": typestr, "data": (t.data or 0, False), "strides": strides,
            "version": 2}
    if device == "cuda":
        x = torch.as_tensor(_Interface("__cuda_array_interface__", desc), device="cuda")
    else:
        import numpy as np
        desc["version"] = 3
        x = torch.from_numpy(np.asarray(_Interface("__array_interface__", desc)))
    return x.view(torch.bfloat16) if dt is torch.bfloat16 else x


def _tensors(addr, n):
    """kevo's tensors at addr as torch tensors, the same objects while the descriptors are the
    same (the runner reuses its buffers: a wrapper per call would be timed work)."""
    if n == 0:
        return []
    raw = ctypes.string_at(addr, n * ctypes.sizeof(_Tensor))
    got = _S.tensors.get(raw)
    if got is None:
        arr = (_Tensor * n).from_buffer_copy(raw)
        got = [_wrap(arr[i], _S.device) for i in range(n)]
        if len(_S.tensors) > 64:
            _S.tensors.clear()
        _S.tensors[raw] = got
    return got


def _inline_refused(*args, **kwargs):
    name = kwargs.get("name", args[0] if args else "?")
    _S.inline_attempts.append(str(name))
    raise RuntimeError(f"kevo: torch.utils.cpp_extension build of '{name}' inside the candidate's process: "
                       "its process cannot run a compiler")


def prepare(meta_json, device="cuda"):
    """Before the sandbox closes: torch imported (and its CUDA state made), the problem read."""
    _S.meta = json.loads(meta_json)
    _S.device = device
    with open(_S.meta["problem"], "r", encoding="utf-8") as f:
        _S.problem_source = f.read()
    if device == "cuda":
        torch.cuda.init()
        torch.empty(1, device="cuda").add_(1)
        torch.cuda.synchronize()
    import torch.utils.cpp_extension as ext
    ext.load_inline = _inline_refused
    ext.load = _inline_refused
    # Inference, for the whole process: grad mode is one of the switches the checks watch, so it is
    # set once here, not flipped around every call.
    torch.set_grad_enabled(False)
    _S.dtypes = [getattr(torch, o["torch_dtype"]) for o in _S.meta["outputs"]]
    _S.flags = format_checks.snapshot_flags()
    return torch.__version__


def _problem_namespace(dims):
    ns = {"__name__": "kevo_problem", "__file__": "problem.py"}
    tree = ast.parse(_S.problem_source, filename="problem.py")
    TopLevel(tree, "problem.py").run(ns, dims)
    return ns


def load(fd, filename, entry):
    """Runs the candidate's module (read from fd) and finds `entry`; "" or what went wrong. The
    main config's module is made here, so an import or __init__ that fails fails the load."""
    _S.cls, _S.models, _S.tensors, _S.inline_attempts = None, {}, {}, []
    format_checks.restore_flags(_S.flags)
    _S.checker = format_checks.CallChecker(expected_dtypes=_S.dtypes, baseline=_S.flags, keep=2, check_inputs=False)
    try:
        if entry == "Model":
            ns = _problem_namespace({})
        else:
            data = os.pread(fd, 64 << 20, 0) if fd >= 0 else b""
            mod = types.ModuleType("kevo_candidate")
            mod.__file__ = filename
            exec(compile(data, filename, "exec"), mod.__dict__)
            ns = mod.__dict__
        cls = ns.get(entry)
        if not isinstance(cls, type) or not issubclass(cls, torch.nn.Module):
            return f"{filename} defines no class {entry} (a torch.nn.Module)"
        _S.cls = cls
        _model(tuple(_S.meta["main_dims"]))
        return ""
    except BaseException as e:  # SystemExit included: the load failed, whatever it says
        return f"{filename}: {type(e).__name__}: {format_checks._safe_repr(e)}"[:2000]


def _model(dims):
    m = _S.models.get(dims)
    if m is None:
        sizes = {k: int(v) for k, v in zip(_S.meta["dims"], dims) if k in _S.meta["size_dims"]}
        ns = _problem_namespace(sizes)
        init = ns.get("get_init_inputs", lambda: [])()
        torch.manual_seed(0)
        m = _S.cls(*init)
        m = m.to(_S.device) if isinstance(m, torch.nn.Module) else m
        if _S.meta.get("compile"):
            m = torch.compile(m)
        _S.models[dims] = m
    return m


def _bind_weights(model, weights):
    """Model's parameters and buffers, by their torch paths, made views of kevo's buffers (only
    when a buffer moved: rebinding costs a dict walk)."""
    module = getattr(model, "_orig_mod", model)
    for (path, _name), t in zip(_S.meta["weights"], weights):
        owner, _, leaf = path.rpartition(".")
        sub = module.get_submodule(owner) if owner else module
        cur = getattr(sub, leaf, None)
        if not isinstance(cur, torch.Tensor):
            raise LookupError(f"the solution's module has no parameter or buffer '{path}' (the problem's Model has; "
                              "kevo passes Model's weights by their names)")
        if cur.data_ptr() == t.data_ptr():
            continue
        v = t.reshape(cur.shape) if cur.dim() == 0 and t.numel() == 1 else t
        if tuple(v.shape) != tuple(cur.shape) or v.dtype != cur.dtype:
            raise LookupError(f"'{path}': the solution's is {cur.dtype} {list(cur.shape)}, the problem's "
                              f"{v.dtype} {list(v.shape)}")
        cur.data = v


def _stream(ptr):
    if _S.device != "cuda":
        return None
    s = _S.streams.get(ptr)
    if s is None:
        s = torch.cuda.ExternalStream(ptr) if ptr else torch.cuda.default_stream()
        _S.streams[ptr] = s
    return s


def call(addr):
    """One call of the C ABI: the result code, and _S.error saying why when it is not OK."""
    if _S.cls is None:
        _S.error = "no candidate loaded"
        return NOT_LOADED
    try:
        a = _Args.from_address(addr)
        ins = _tensors(a.inputs, a.num_inputs)
        outs = _tensors(a.outputs, a.num_outputs)
        dims = tuple((ctypes.c_int64 * a.num_dims).from_address(a.dims)) if a.num_dims else ()
        scalars = list((ctypes.c_double * a.num_scalars).from_address(a.scalars)) if a.num_scalars else []
    except BaseException as e:
        _S.error = f"the call's arguments: {e!r}"
        return INTERNAL
    s = _stream(a.stream)
    if s is None:
        return _call(dims, ins, outs, scalars)
    with torch.cuda.stream(s):
        return _call(dims, ins, outs, scalars)


def _arguments(ins, scalars):
    args, ti, si = [], 0, 0
    for arg in _S.meta["args"]:
        if arg.get("scalar"):
            v = scalars[si] if si < len(scalars) else 0.0
            args.append(int(v) if arg.get("int") else v)
            si += 1
        else:
            args.append(ins[ti])
            ti += 1
    return args, ins[ti:]


def _call(dims, ins, outs, scalars):
    try:
        model = _model(dims)
    except BaseException as e:
        _S.error = f"constructing the module for dims {list(dims)}: {type(e).__name__}: {format_checks._safe_repr(e)}"
        return CONSTRUCT
    args, weights = _arguments(ins, scalars)
    try:
        _bind_weights(model, weights)
    except BaseException as e:
        _S.error = str(e)
        return WEIGHTS
    r = _S.checker.call(model, args)
    if _S.inline_attempts:
        _S.error = (f"it builds an inline extension ({', '.join(sorted(set(_S.inline_attempts)))}) in its own process; "
                    "kevo builds a solution's extensions before it runs (never a silent fallback to PyTorch)")
        return INLINE_BUILD
    if not r.verdict.ok:
        _S.error = f"{r.verdict.reason}: {r.verdict.message}"
        return FORMAT_BASE + 1 + FORMAT_REASONS.index(r.verdict.reason)
    if len(r.outputs) != len(outs):
        _S.error = f"forward returned {len(r.outputs)} tensors, the task has {len(outs)} outputs"
        return FORMAT_BASE + 1 + FORMAT_REASONS.index(format_checks.OUTPUT_COUNT)
    for i, (dst, src) in enumerate(zip(outs, r.outputs)):
        if src.numel() != dst.numel():
            _S.error = f"output {i} has shape {list(src.shape)}, the task's is {list(dst.shape)}"
            return OUTPUT_SHAPE
        dst.copy_(src.reshape(dst.shape))
    return OK


def last_error():
    return _S.error
