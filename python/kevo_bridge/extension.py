"""A PyTorch C++/CUDA extension as a timing baseline (the ``time`` op's ``extension`` mode).

EvoEngineer and AI CUDA Engineer records come with a CUDA extension that binds ``forward`` with
``PYBIND11_MODULE`` and stands in for the functional reference's ``module_fn``: a module reference
(``Model.forward(self, x, fn=module_fn)``) is called as ``model(*args, fn=ext.forward)``, a function
reference is replaced by ``ext.forward(*args)`` outright.

The extension is built with ``torch.utils.cpp_extension.load`` at most once per bridge session
(keyed by the source's SHA-256 and the torch version; a failed build is remembered too). Every
reason it cannot be built or called here is an ``ExtensionError`` whose message names the cause:
no CUDA, no CUDA toolkit, no C++ compiler, no ninja, a compile error (with the compiler's output).
"""

import hashlib
import inspect
import os
import shutil
import time

_STALE_LOCK_S = 30 * 60  # a build lock this old was left by a killed build
_MAX_LOG = 6000


class ExtensionError(Exception):
    """The extension cannot be built or called here; the message says why."""


def _is_cuda_source(path):
    return path.endswith((".cu", ".cuh"))


def _check_environment(path, dev):
    import torch
    from torch.utils import cpp_extension
    name = os.path.basename(path)
    if _is_cuda_source(path):
        if not dev.startswith("cuda"):
            raise ExtensionError(f"no CUDA: {name} is CUDA code and the timing device is '{dev}'")
        if torch.version.cuda is None:
            raise ExtensionError(f"no CUDA: torch {torch.__version__} was built without CUDA and cannot "
                                 f"build {name}")
        if not torch.cuda.is_available():
            raise ExtensionError(f"no CUDA: torch {torch.__version__} sees no CUDA device")
        if cpp_extension.CUDA_HOME is None:
            raise ExtensionError("no CUDA toolkit: torch.utils.cpp_extension finds no nvcc "
                                 "(set CUDA_HOME to the toolkit's folder)")
    cxx = os.environ.get("CXX", "c++")
    if shutil.which(cxx) is None:
        raise ExtensionError(f"no C++ compiler: '{cxx}' is not on PATH (install g++ or set CXX); "
                             f"torch.utils.cpp_extension needs one to build {name}")
    try:
        cpp_extension.verify_ninja_availability()
    except RuntimeError:
        raise ExtensionError("no ninja: torch.utils.cpp_extension needs ninja to build extensions "
                             "(apt-get install ninja-build, or pip install ninja)") from None


def _build(path, key, build_root):
    from torch.utils import cpp_extension
    name = f"kevo_ext_{key}"
    build_dir = None
    if build_root:
        build_dir = os.path.join(build_root, name)
        os.makedirs(build_dir, exist_ok=True)
        lock = os.path.join(build_dir, "lock")
        try:
            if time.time() - os.path.getmtime(lock) > _STALE_LOCK_S:
                os.remove(lock)  # torch would wait for it forever
        except OSError:
            pass
    cuda = _is_cuda_source(path)
    try:
        return cpp_extension.load(name=name, sources=[path], extra_cflags=["-O3"],
                                  extra_cuda_cflags=["-O3"] if cuda else None,
                                  build_directory=build_dir, verbose=False)
    except BaseException as e:  # a compile error, a linker error, an import error of the result
        if isinstance(e, KeyboardInterrupt):
            raise
        msg = str(e)
        if len(msg) > _MAX_LOG:
            msg = "..." + msg[-_MAX_LOG:]
        raise ExtensionError(f"the extension {os.path.basename(path)} does not build: "
                             f"{type(e).__name__}: {msg}") from None


class Extensions:
    """Built extensions of one bridge session, by source hash."""

    def __init__(self):
        self._built = {}  # key -> module, or the ExtensionError its build raised

    def module(self, spec, dev):
        import torch
        path = (spec or {}).get("path")
        if not path:
            raise ExtensionError("no extension source given (the task names no torch_baseline)")
        try:
            with open(path, "rb") as f:
                src = f.read()
        except OSError as e:
            raise ExtensionError(f"cannot read the extension source {path}: {e.strerror}") from None
        _check_environment(path, dev)
        h = hashlib.sha256(src)
        h.update(torch.__version__.encode())
        h.update(os.path.splitext(path)[1].encode())
        key = h.hexdigest()[:16]
        if key not in self._built:
            try:
                self._built[key] = _build(path, key, (spec or {}).get("build_root"))
            except ExtensionError as e:
                self._built[key] = e
        m = self._built[key]
        if isinstance(m, ExtensionError):
            raise m
        return m

    def callable(self, ref, spec, dev):
        """What to time: the reference with the extension's forward in place of module_fn."""
        mod = self.module(spec, dev)
        fwd = getattr(mod, "forward", None)
        if fwd is None:
            raise ExtensionError("the extension defines no 'forward' "
                                 "(PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"forward\", ...); })")
        if ref.model is None:
            return fwd
        try:
            params = inspect.signature(ref.model.forward).parameters
        except (TypeError, ValueError):
            params = {}
        if "fn" not in params:
            raise ExtensionError(f"{ref.path}: Model.forward takes no fn= argument, so the extension's "
                                 f"forward cannot stand in for module_fn (functional references do: "
                                 f"def forward(self, x, fn=module_fn))")
        model = ref.model
        return lambda *a: model(*a, fn=fwd)
