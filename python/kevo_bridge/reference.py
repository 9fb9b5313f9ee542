"""Loading a PyTorch reference (KernelBench style or functional) and running it.

A reference file defines either
  * ``class Model(nn.Module)`` plus ``get_inputs()`` and ``get_init_inputs()`` (KernelBench and the
    functional rewrites of the AI CUDA Engineer / EvoEngineer, whose Model.forward calls a
    ``module_fn``), or
  * a plain function ``module_fn(*inputs)`` plus ``get_inputs()`` (a functional reference without
    parameters).

Sizes are top-level names bound to positive integers however they are written (``N = 2048 * 2``,
tuples; sizes.py). kevo varies them as the task's dims: ``load`` runs the file's top level with the
new values in place, so globals derived from them (``out = 2 * dim``) follow.
"""

import ast
import contextlib
import inspect
import math
import re
import sys
import types

import torch

from . import tensors
from .needs import explain
from .sizes import SizeError, TopLevel

_IDENT = re.compile(r"[^A-Za-z0-9_]")


class ReferenceError_(Exception):
    """A problem with the reference file itself (not a Python exception inside it)."""


def _sanitize(name):
    s = _IDENT.sub("_", name)
    if not s or s[0].isdigit():
        s = "t_" + s
    return s


@contextlib.contextmanager
def _no_init():
    """Makes torch.nn.init no-ops and the random fills meta tensors (shape-only loads of big
    models and inputs)."""
    saved = []
    names = [n for n in dir(torch.nn.init) if n.endswith("_") and not n.startswith("_")]
    for n in names:
        saved.append((torch.nn.init, n, getattr(torch.nn.init, n)))
        setattr(torch.nn.init, n, lambda t, *a, **k: t)
    for n in ("uniform_", "normal_"):
        saved.append((torch.Tensor, n, getattr(torch.Tensor, n)))
        setattr(torch.Tensor, n, lambda self, *a, **k: self)

    # Random tensors become meta tensors: shapes and dtypes without memory, even when the file
    # goes on computing with them (torch.randint(0, 2, x.shape).bool() of a GB-sized x).
    def meta_fill(*a, **k):
        k.pop("generator", None)
        k.setdefault("device", "meta")
        return torch.empty(*a, **k)

    def meta_randint(*a, **k):
        size = k.pop("size", None)
        if size is None:
            size = next(x for x in reversed(a) if isinstance(x, (tuple, list, torch.Size)))
        return torch.empty(size, dtype=k.get("dtype") or torch.int64, device=k.get("device") or "meta")

    def meta_like(t, *a, **k):
        return torch.empty_like(t, dtype=k.get("dtype"), device=k.get("device") or "meta")

    fills = {"randn": meta_fill, "rand": meta_fill, "randint": meta_randint,
             "rand_like": meta_like, "randn_like": meta_like, "randint_like": meta_like}
    for n, f in fills.items():
        saved.append((torch, n, getattr(torch, n)))
        setattr(torch, n, f)
    try:
        yield
    finally:
        for obj, n, f in reversed(saved):
            setattr(obj, n, f)


def _stats(t):
    if t.numel() == 0:
        return None
    x = t.detach().to(torch.float64)
    return {
        "min": float(x.min()),
        "max": float(x.max()),
        "mean": float(x.mean()),
        "std": float(x.std(unbiased=False)) if t.numel() > 1 else 0.0,
    }


def _tensor_info(name, t, what, stats):
    info = {
        "name": name,
        "kind": "tensor",
        "dtype": tensors.kevo_dtype(t, what),
        "torch_dtype": tensors.torch_dtype_name(t),
        "shape": list(t.shape),
    }
    if stats:
        info["stats"] = _stats(t)
    return info


class Reference:
    def __init__(self, path, dims=None, seed=0, shapes_only=False):
        self.path = path
        self.shapes_only = shapes_only
        with open(path, "r", encoding="utf-8") as f:
            source = f.read()
        tree = ast.parse(source, filename=path)
        self.module = types.ModuleType("kevo_reference")
        self.module.__file__ = path
        sys.modules["kevo_reference"] = self.module
        torch.manual_seed(seed)
        try:
            sizes = TopLevel(tree, path).run(self.module.__dict__, dims)
        except SizeError as e:
            raise ReferenceError_(str(e)) from None
        ns = self.module.__dict__
        if "get_inputs" not in ns or not callable(ns["get_inputs"]):
            raise ReferenceError_(f"{path}: defines no get_inputs() function")
        self.model_cls = ns.get("Model")
        self.fn = None
        if self.model_cls is None:
            fn = ns.get("module_fn")
            if not callable(fn):
                raise ReferenceError_(
                    f"{path}: defines neither a Model class (KernelBench style) nor a module_fn "
                    f"function (functional style)"
                )
            self.fn = fn
        elif not (inspect.isclass(self.model_cls) and issubclass(self.model_cls, torch.nn.Module)):
            raise ReferenceError_(f"{path}: Model is not a subclass of torch.nn.Module")
        self.globals = sizes  # {size: value as loaded}, file order
        self.size_globals = sizes
        self.seed = seed
        with (_no_init() if shapes_only else contextlib.nullcontext()):
            torch.manual_seed(seed)
            if self.model_cls is not None:
                init = ns.get("get_init_inputs", lambda: [])()
                if not isinstance(init, (list, tuple)):
                    raise ReferenceError_(f"{path}: get_init_inputs() must return a list, not {type(init).__name__}")
                self.model = self.model_cls(*init)
                self.callable = self.model
            else:
                self.model = None
                self.callable = self.fn
        self.device = "cpu"
        self.compiled = None
        self.unread = []
        self._bindings = self._attribute_bindings()

    # ---- names ------------------------------------------------------------------------------
    def _forward_param_names(self):
        f = self.model.forward if self.model is not None else self.fn
        names = []
        for p in inspect.signature(f).parameters.values():
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                names.append(p.name)
        return names

    def weight_items(self):
        """(kevo name, torch path, tensor, kind) for every parameter, buffer and plain tensor
        attribute (state such as an RNN's h0 that is neither: kind "attribute"), in that order."""
        if self.model is None:
            return []
        items = []
        for path, p in self.model.named_parameters():
            items.append([_sanitize(path), path, p, "parameter"])
        for path, b in self.model.named_buffers():
            if b is None:
                continue
            items.append([_sanitize(path), path, b, "buffer"])
        for path, _, t in self._attributes():
            items.append([_sanitize(path), path, t, "attribute"])
        return items

    def _attributes(self):
        """(torch path, module, tensor) of tensor attributes that are neither parameters nor
        buffers. kevo passes them like weights; run() sets them like weights."""
        out = []
        for mod_path, mod in self.model.named_modules():
            for k, v in vars(mod).items():
                if isinstance(v, torch.Tensor) and not isinstance(v, torch.nn.Parameter):
                    out.append((f"{mod_path}.{k}" if mod_path else k, mod, k))
        return [(p, m, getattr(m, k)) for p, m, k in out]

    def arg_names(self, n):
        params = self._forward_param_names()
        names = []
        for i in range(n):
            names.append(_sanitize(params[i]) if i < len(params) else f"in{i}")
        return names

    # ---- describe ---------------------------------------------------------------------------
    def sample_inputs(self, fill=True):
        """get_inputs(); with fill=False (or a shapes_only load) its random fills are skipped."""
        with (_no_init() if self.shapes_only or not fill else contextlib.nullcontext()):
            torch.manual_seed(self.seed + 1)
            xs = self.module.get_inputs()
        if not isinstance(xs, (list, tuple)):
            raise ReferenceError_(f"{self.path}: get_inputs() must return a list, not {type(xs).__name__}")
        return list(xs)

    def describe(self, stats=True, forward="auto"):
        # Without stats the values matter only for a forward on the CPU (when the meta device
        # cannot derive the output shapes): get_inputs() runs without its random fills, which for a
        # GB-sized config saves seconds (the oracle describes every config it loads).
        values = stats and not self.shapes_only
        xs = self.sample_inputs(fill=values)
        names = self.arg_names(len(xs))
        args = []
        for i, (n, x) in enumerate(zip(names, xs)):
            if isinstance(x, torch.Tensor):
                args.append(_tensor_info(n, x, f"input {i} ('{n}')", stats and not self.shapes_only))
            elif isinstance(x, (bool,)):
                raise ReferenceError_(f"{self.path}: get_inputs()[{i}] ('{n}') is a bool; kevo scalars are numbers")
            elif isinstance(x, (int, float)):
                args.append({"name": n, "kind": "scalar", "value": x, "is_int": isinstance(x, int)})
            else:
                raise ReferenceError_(
                    f"{self.path}: get_inputs()[{i}] ('{n}') is a {type(x).__name__}; kevo inputs are "
                    f"tensors or numbers"
                )
        taken = {a["name"] for a in args}
        weights = []
        for kname, path, t, kind in self._named_weights(len(xs)):
            taken.add(kname)
            info = _tensor_info(kname, t, f"{kind} '{path}'", stats and not self.shapes_only)
            info["path"] = path
            info["kind"] = kind
            weights.append(info)
        outs, method, unread = self._output_shapes(xs, forward, None if values else self.sample_inputs)
        self.unread = [{"name": w["name"], "path": w["path"], "kind": w["kind"], "shape": w["shape"]}
                       for w in weights if w["path"] in unread]
        weights = [w for w in weights if w["path"] not in unread]
        outputs = []
        for i, o in enumerate(outs):
            n = "out" if len(outs) == 1 else f"out{i}"
            while n in taken:
                n = "y_" + n
            taken.add(n)
            outputs.append({
                "name": n,
                "dtype": tensors.kevo_dtype(o, f"output {i}"),
                "torch_dtype": tensors.torch_dtype_name(o),
                "shape": list(o.shape),
            })
        return {
            "path": self.path,
            "style": "module" if self.model is not None else "function",
            "globals": self.globals,
            "args": args,
            "weights": weights,
            "outputs": outputs,
            "output_shapes_from": method,
            "unread": self.unread,
        }

    def count_flops(self):
        """The forward's operations counted on the meta device (flops.py)."""
        from . import flops
        xs = [x.to("meta") if isinstance(x, torch.Tensor) else x for x in self.sample_inputs(fill=False)]
        if self.model is None:
            return flops.count(self.fn, xs)
        state = self._state_dict_on("meta")
        return flops.count(
            lambda *a: functional_call(self.model, state, tuple(a)), xs)

    def _state_dict_on(self, device):
        return {p: torch.empty_like(t, device=device) for _, p, t, _ in self.weight_items()}

    def _output_shapes(self, xs, forward, redraw=None):
        errors = []
        if forward in ("auto", "meta"):
            try:
                from .reads import Reads
                mx = [x.to("meta") if isinstance(x, torch.Tensor) else x for x in xs]
                state = self._state_dict_on("meta") if self.model is not None else {}
                reads = Reads(list(state.items()))
                with torch.no_grad(), reads:
                    if self.model is not None:
                        out = functional_call(self.model, state, tuple(mx))
                    else:
                        out = self.fn(*mx)
                outs = _flatten_outputs(out, self.path)
                return outs, "meta", set(state) - reads.reaching(outs)
            except ReferenceError_:
                raise
            except Exception as e:  # an op without a meta kernel: fall back to a real run
                if explain(e):
                    raise
                errors.append(f"meta: {type(e).__name__}: {e}")
                if forward == "meta":
                    raise
        if self.shapes_only:
            raise ReferenceError_(
                f"{self.path}: cannot derive output shapes without running the model ("
                + "; ".join(errors) + ")")
        if redraw is not None:
            xs = redraw()  # a real run needs real values
        self._restore_attributes()
        with torch.no_grad():
            out = self.callable(*xs)
        self._restore_attributes()
        return _flatten_outputs(out, self.path), "cpu", set()

    # ---- autograd ---------------------------------------------------------------------------
    def grad_probe(self):
        """What autograd reaches from the forward's outputs, on the meta device (nothing is computed,
        nothing materialized): the forward runs with every floating-point tensor argument (passed as
        a clone, so in-place ops on an input stay legal) and parameter requiring grad, and its graph
        is walked without a backward (torch 1.13 has no meta kernels for most backward ops).
        verdict: "ok" (with which arguments and parameters the outputs depend on), "disconnected"
        (no output depends on any of them), "inplace" (a tensor the backward needs was modified in
        place), "unknown" (the forward does not run on the meta device: error says why)."""
        from .flops import MetaShim
        xs = self.sample_inputs(fill=False)
        leaves, args = [], []
        for x in xs:
            if isinstance(x, torch.Tensor):
                m = torch.empty_like(x, device="meta")
                grad = m.is_floating_point()
                leaves.append(m.requires_grad_(True) if grad else None)
                args.append(m.clone() if grad else m)
            else:
                leaves.append(None)
                args.append(x)
        state = {}
        for _, path, t, kind in self.weight_items():
            m = torch.empty_like(t, device="meta")
            state[path] = m.requires_grad_(True) if kind == "parameter" and m.is_floating_point() else m
        try:
            with torch.enable_grad(), MetaShim():
                if self.model is not None:
                    out = functional_call(self.model, state, tuple(args))
                else:
                    out = self.fn(*args)
            ys = _flatten_outputs(out, self.path)
        except ReferenceError_:
            raise
        except Exception as e:  # an op without a meta kernel
            if explain(e):
                raise
            return {"verdict": "unknown", "error": f"{type(e).__name__}: {e}"}
        ys = [y for y in ys if y.requires_grad and y.grad_fn is not None]
        if not ys:
            return {"verdict": "disconnected"}
        reached, error = _reached_leaves(ys)
        if error is not None:
            return {"verdict": "inplace", "error": error}
        return {
            "verdict": "ok",
            "args": [leaf is not None and any(leaf is r for r in reached) for leaf in leaves],
            "weights": [p for p, t in state.items() if t.requires_grad and any(t is r for r in reached)],
        }

    # ---- run --------------------------------------------------------------------------------
    def _attribute_bindings(self):
        if self.model is None:
            return []
        return [(mod, k, v) for _, mod in self.model.named_modules() for k, v in list(vars(mod).items())
                if isinstance(v, torch.Tensor) and not isinstance(v, torch.nn.Parameter)]

    def _restore_attributes(self):
        """A forward may rebind its tensor attributes (self.c0 = self.h0.to(x.device) makes c0 the
        very tensor h0 is): each call starts from the bindings the module was built with, so the
        weights kevo sets land in the module's own tensors, never one in another's."""
        for mod, k, v in self._bindings:
            vars(mod)[k] = v

    def to_device(self, device):
        self._restore_attributes()
        if device != self.device:
            if self.model is not None:
                self.model.to(device)
                for mod, k, v in self._bindings:  # .to() leaves these behind
                    vars(mod)[k] = v.to(device)
                self._bindings = self._attribute_bindings()
            self.device = device
            self.compiled = None

    def set_weights(self, weights, n_args):
        """weights: {kevo name or torch path: tensor}. Unknown names are errors."""
        if not weights:
            return
        by_name = {}
        for kname, path, t, kind in self._named_weights(n_args):
            by_name[kname] = t
            by_name[path] = t
        with torch.no_grad():
            for n, v in weights.items():
                t = by_name.get(n)
                if t is None:
                    raise ReferenceError_(f"no parameter or buffer named '{n}' (known: "
                                          + ", ".join(k for k in by_name) + ")")
                if t.dim() == 0 and v.numel() == 1:
                    v = v.reshape(())  # kevo passes 0-dim tensors with shape [1]
                if tuple(t.shape) != tuple(v.shape):
                    raise ReferenceError_(f"weight '{n}': shape {list(v.shape)} given, the module has "
                                          f"{list(t.shape)}")
                t.copy_(v.to(t.device, t.dtype))

    def _named_weights(self, n_args):
        # Argument names first; a weight whose name collides with one gets a "w_" prefix.
        taken = set(self.arg_names(n_args))
        out = []
        for item in self.weight_items():
            kname = item[0]
            while kname in taken:
                kname = "w_" + kname
            taken.add(kname)
            out.append((kname, item[1], item[2], item[3]))
        return out

    def run(self, args):
        with torch.no_grad():
            out = self.callable(*args)
        return _flatten_outputs(out, self.path)


def functional_call(model, state, args):
    """model(*args) with its parameters, buffers and tensor attributes replaced by state's
    ({torch path: tensor}). torch 1.13's functional_call swaps attributes but not the list of
    weights an RNN module keeps (_flat_weights), so an LSTM would still see its own tensors (on
    another device): those lists are rebuilt from state for the call."""
    saved = []
    for path, mod in model.named_modules():
        names = getattr(mod, "_flat_weights_names", None)
        if not isinstance(mod, torch.nn.RNNBase) or names is None:
            continue
        prefix = path + "." if path else ""
        flat = [state.get(prefix + n, getattr(mod, n, None)) for n in names]
        saved.append((mod, mod._flat_weights))
        mod._flat_weights = flat
    try:
        return torch.nn.utils.stateless.functional_call(model, state, args)
    finally:
        for mod, flat in saved:
            mod._flat_weights = flat


def _reached_leaves(ys):
    """The leaf tensors the graph of ys reaches, and the first saved tensor that was modified in
    place after it was saved (its unpacking raises the error backward would), or None."""
    seen, reached, stack = set(), [], [y.grad_fn for y in ys]
    while stack:
        f = stack.pop()
        if f is None or f in seen:
            continue
        seen.add(f)
        if hasattr(f, "variable"):  # AccumulateGrad: a leaf
            reached.append(f.variable)
            continue
        for name in dir(f):
            if name.startswith("_saved_"):
                try:
                    getattr(f, name)
                except RuntimeError as e:
                    return reached, f"{type(f).__name__}: {e}"
        stack.extend(g for g, _ in f.next_functions)
    return reached, None


def _flatten_outputs(out, path):
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)) and out and all(isinstance(o, torch.Tensor) for o in out):
        return list(out)
    raise ReferenceError_(
        f"{path}: forward returned {type(out).__name__}; kevo needs a tensor or a tuple of tensors")


def median_ci(samples):
    """Median and an approximate 95% confidence interval from order statistics."""
    s = sorted(samples)
    n = len(s)
    med = s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])
    h = 1.96 * math.sqrt(n) / 2
    lo = s[max(0, int(math.floor(n / 2 - h)))]
    hi = s[min(n - 1, int(math.ceil(n / 2 + h)))]
    return med, lo, hi
