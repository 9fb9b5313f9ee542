"""Which of a module's tensors its forward's outputs depend on (the state it reads).

The forward runs on the meta device under a dispatch mode that follows data flow op by op: each
storage carries the set of module tensors whose values reached it; an op's outputs, and the
arguments it writes in place, get the union of what its inputs carry. A module tensor that reaches
no output is state the forward never reads: a training-mode BatchNorm's running statistics and
batch counter (updated, never used for the output), or an RNN's initial cell state that the forward
overwrites before use. kevo does not make those task inputs.

Storages, not tensor objects, carry the sets, so a view shares what its base carries. The one op
that takes tensors only to update them is batch norm in training mode (its running mean and
variance); every other argument counts as read, so an op kevo does not know can only keep a
tensor, never drop one that is read.
"""

import torch

from .flops import MetaShim

# Batch norm ops whose arguments 3 and 4 (running mean, running variance) are only updated when
# training; `always` ones are training-only forms.
_BATCH_NORM = {"native_batch_norm": "flag", "_native_batch_norm_legit": "flag",
               "_native_batch_norm_legit_functional": "flag", "_batch_norm_with_update": "always"}


def _key(t):
    # untyped_storage (torch >= 2.0) spares the TypedStorage deprecation warning; a tensor without
    # a storage to name is its own key.
    try:
        storage = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
        return storage._cdata
    except (RuntimeError, NotImplementedError, AttributeError):
        return ("tensor", id(t))


def _tensors(xs):
    out = []
    for x in xs:
        if isinstance(x, torch.Tensor):
            out.append(x)
        elif isinstance(x, (list, tuple)):
            out += _tensors(x)
        elif isinstance(x, dict):
            out += _tensors(list(x.values()))
    return out


def _updated_only(name, args):
    """Positions of the arguments the op only updates (not read for its outputs)."""
    form = _BATCH_NORM.get(name)
    if form is None:
        return ()
    if form == "always" or (len(args) > 5 and bool(args[5])):
        return (3, 4)
    return ()


def _written(func, args, kwargs):
    """Tensor arguments the op writes in place (per its schema)."""
    out = []
    schema = getattr(func, "_schema", None)
    if schema is None:
        return out
    for i, a in enumerate(schema.arguments):
        info = a.alias_info
        if info is None or not info.is_write:
            continue
        v = args[i] if i < len(args) else kwargs.get(a.name)
        out += _tensors([v])
    return out


class Reads(MetaShim):
    """Dispatch mode over a meta forward: sources is [(name, tensor)] of the module's tensors."""

    def __init__(self, sources):
        super().__init__()
        self.carried = {}
        self.keep = []  # holds every storage seen, so that no key is reused while the mode runs
        for name, t in sources:
            self.carried.setdefault(_key(t), set()).add(name)
            self.keep.append(t)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = super().__torch_dispatch__(func, types, args, kwargs)
        skip = _updated_only(func.overloadpacket.__name__, args)
        ins = _tensors([a for i, a in enumerate(args) if i not in skip]) + _tensors([kwargs])
        src = set()
        for t in ins:
            src |= self.carried.get(_key(t), set())
        if src:
            for t in _tensors([out]) + _written(func, args, kwargs):
                self.carried.setdefault(_key(t), set()).update(src)
                self.keep.append(t)
        return out

    def reaching(self, outputs):
        """The names whose values reach any of outputs."""
        names = set()
        for t in outputs:
            names |= self.carried.get(_key(t), set())
        return names
