#include "interop/backward_reference.h"

#include <fmt/format.h>

namespace kevo::interop {

std::string backward_module_source(const std::string& forward_reference, const BackwardSignature& sig,
                                   const std::string& comment) {
  std::string params, args, grads, unsaved, wrt, arg_grads = "None";
  for (const auto& a : sig.args) {
    params += ", " + a;
    args += a + ", ";
  }
  for (const auto& g : sig.grad_outputs) {
    params += ", " + g;
    grads += g + ", ";
  }
  for (const auto& u : sig.unsaved) unsaved += fmt::format("\"{}\", ", u);
  for (const auto& w : sig.parameters) wrt += fmt::format("\"{}\", ", w);
  if (sig.arg_grads) {
    arg_grads = "(";
    for (bool g : *sig.arg_grads) arg_grads += g ? "True, " : "False, ";
    arg_grads += ")";
  }
  return forward_reference + "\n\n" + comment + fmt::format(R"PY(import torch as _kevo_torch

_KEVO_PARAMETERS = ({3})  # torch paths, in the order of the gradients
_KEVO_UNSAVED = ({4})  # parameters that are constants here, not inputs
_KEVO_ARG_GRADS = {5}  # per argument: is its gradient an output (None: every floating-point one)
_kevo_forward = Model.forward
_kevo_forward_inputs = get_inputs
_kevo_model_init = Model.__init__


def _kevo_init(self, *a, **k):
    _kevo_model_init(self, *a, **k)
    # In a dict, not an attribute: kevo passes every tensor of a module as an input.
    object.__setattr__(self, "_kevo_constants", {{n: self._parameters.pop(n).detach() for n in _KEVO_UNSAVED}})
    object.__setattr__(self, "_kevo_active", dict(self._kevo_constants))


Model.__init__ = _kevo_init
for _kevo_name in _KEVO_UNSAVED:
    # While __init__ runs the lookup fails and nn.Module finds the parameter itself.
    setattr(Model, _kevo_name, property(lambda self, n=_kevo_name: self._kevo_active[n]))


def _kevo_as_list(ys):
    return list(ys) if isinstance(ys, (tuple, list)) else [ys]


def _kevo_attribute(model, path):
    # By attribute: under functional_call (a meta forward) the attributes are the tensors in use.
    t = model
    for part in path.split("."):
        t = getattr(t, part)
    return t


def _kevo_constants_to(model, device, grad):
    # Copies for this call; the module keeps its own (a meta forward must not replace them).
    object.__setattr__(model, "_kevo_active", {{n: c.detach().to(device).requires_grad_(grad)
                                                for n, c in model._kevo_constants.items()}})


def _kevo_wants_grad(i, a):
    if not (_kevo_torch.is_tensor(a) and a.is_floating_point()):
        return False
    return _KEVO_ARG_GRADS is None or _KEVO_ARG_GRADS[i]


def _kevo_gradients(model, args, grads):
    device = next(a.device for a in list(args) + list(grads) if _kevo_torch.is_tensor(a))
    with _kevo_torch.enable_grad():
        _kevo_constants_to(model, device, True)
        leaves = [a.detach().requires_grad_(True) if _kevo_wants_grad(i, a) else a for i, a in enumerate(args)]
        params = [_kevo_attribute(model, p) for p in _KEVO_PARAMETERS]
        for p in params:
            if not p.requires_grad:
                p.requires_grad_(True)
        # Clones: a forward that writes into its input stays differentiable.
        ys = _kevo_as_list(_kevo_forward(model, *[a.clone() if _kevo_torch.is_tensor(a) and a.requires_grad else a
                                                  for a in leaves]))
        wrt = [a for a in leaves if _kevo_torch.is_tensor(a) and a.requires_grad] + params
        if device.type == "meta":  # shapes only: torch has no meta kernels for most backward ops
            return tuple(_kevo_torch.empty_like(w) for w in wrt)
        pairs = [(y, g.reshape(y.shape).to(y.dtype)) for g, y in zip(grads, ys) if y.requires_grad]
        gs = _kevo_torch.autograd.grad([y for y, _ in pairs], wrt, [g for _, g in pairs], allow_unused=True)
    return tuple(_kevo_torch.zeros_like(w) if g is None else g.detach() for g, w in zip(gs, wrt))


def _kevo_backward(self{0}):
    return _kevo_gradients(self, [{1}], [{2}])


# The module's forward becomes the backward pass (the Model class is kept: its own methods refer to
# it by name).
Model.forward = _kevo_backward


def get_inputs():
    args = list(_kevo_forward_inputs())
    shapes = Model(*get_init_inputs()).to("meta")
    _kevo_constants_to(shapes, "meta", False)
    with _kevo_torch.no_grad():
        ys = _kevo_as_list(_kevo_forward(shapes, *[_kevo_torch.empty_like(a, device="meta") if _kevo_torch.is_tensor(a) else a
                                                   for a in args]))
    return args + [_kevo_torch.randn(y.shape, dtype=y.dtype) for y in ys]
)PY",
                                                            params, args, grads, wrt, unsaved, arg_grads);
}

}  // namespace kevo::interop
