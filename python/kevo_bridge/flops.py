"""Counting a reference's floating-point operations from the ATen ops its forward runs (the
``count_flops`` op; docs/INTEROP.md, "FLOPs").

The forward runs on the ``meta`` device under a dispatch mode that sees every ATen op after
decomposition, so nothing is computed and no memory is used. Each op that computes becomes a
record ``{op, kind, coef, factors}`` whose count is ``coef * prod(factors)``; the factors are shape
entries of the op's tensors, so kevo can write the count as an expression of the task's dims
(src/interop/flops.*). What counts (multiply-add = 2):

* matmul family (mm, addmm, bmm, baddbmm, mv, dot): 2*M*K*N (times the batch);
* convolution: 2 * output elements * (C_in/groups * kernel); transposed: 2 * input elements *
  (C_out/groups * kernel); a bias adds one per output element;
* attention kernels (scaled_dot_product_*): 4*B*H*L*S*E (QK^T and PV);
* softmax / log_softmax: 5 per element; batch/group/layer/instance norm: 5 per element;
* reductions, cumulative ops, pooling windows: one per input element read (pooling: per window
  element);
* pointwise ops: one per output element.
Views, copies, fills and indexing count nothing.
"""

import math

import torch
from torch.utils._python_dispatch import TorchDispatchMode

_FREE = {
    "view", "_unsafe_view", "reshape", "expand", "permute", "transpose", "t", "squeeze", "unsqueeze",
    "clone", "copy_", "_to_copy", "contiguous", "empty", "empty_like", "empty_strided", "zeros",
    "zeros_like", "ones", "ones_like", "full", "full_like", "fill_", "fill", "zero_", "detach", "alias",
    "slice", "select", "index_select", "index", "gather", "cat", "stack", "split", "split_with_sizes",
    "chunk", "unsafe_chunk", "unsafe_split", "unbind", "flatten", "unflatten", "as_strided", "new_empty", "new_zeros", "new_ones",
    "new_full", "arange", "scalar_tensor", "lift_fresh", "lift_fresh_copy", "_reshape_alias", "lift",
    "narrow", "expand_as", "view_as", "repeat", "roll", "flip", "tril", "triu", "diag", "diag_embed",
    "diagonal", "masked_fill", "masked_fill_", "constant_pad_nd", "pad", "set_", "resize_",
    "bernoulli_", "bernoulli", "native_dropout", "rand", "randn", "randint", "uniform_", "normal_",
    "embedding", "_local_scalar_dense", "sym_size", "sym_stride", "sym_numel", "_softmax_backward_data",
    "native_dropout_backward", "max_pool2d_with_indices_backward", "unfold", "im2col", "col2im",
}
_REDUCE = {
    "sum", "mean", "amax", "amin", "max", "min", "argmax", "argmin", "logsumexp", "prod", "var",
    "std", "var_mean", "std_mean", "norm", "linalg_vector_norm", "cumsum", "cumprod", "cummax",
    "cummin", "any", "all", "nansum", "aminmax", "mode", "median", "sort", "topk", "kthvalue",
}
_LOSS = {
    "nll_loss_forward", "nll_loss2d_forward", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
    "kl_div", "binary_cross_entropy", "binary_cross_entropy_with_logits", "soft_margin_loss",
    "margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss", "triplet_margin_loss",
}
_POINTWISE = {
    "add", "sub", "mul", "div", "neg", "abs", "exp", "exp2", "expm1", "log", "log2", "log1p", "sqrt",
    "rsqrt", "pow", "relu", "gelu", "silu", "mish", "sigmoid", "tanh", "elu", "selu", "celu",
    "leaky_relu", "hardtanh", "hardsigmoid", "hardswish", "softplus", "softshrink", "hardshrink",
    "threshold", "clamp", "clamp_min", "clamp_max", "clip", "maximum", "minimum", "where", "sign",
    "reciprocal", "erf", "erfc", "sin", "cos", "floor", "ceil", "round", "trunc", "frac", "lt", "le",
    "gt", "ge", "eq", "ne", "logical_and", "logical_or", "logical_not", "bitwise_and", "bitwise_or",
    "remainder", "fmod", "lerp", "addcmul", "addcdiv", "log_sigmoid_forward", "sigmoid_backward",
    "rsub", "square", "xlogy", "atan", "atan2", "asin", "acos", "sinh", "cosh", "isnan", "isinf",
    "nan_to_num", "logit", "prelu", "_prelu_kernel", "glu", "hardtanh", "relu6", "softsign",
}
_NORM = {
    "native_batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_no_training",
    "native_group_norm", "native_layer_norm", "batch_norm", "instance_norm", "group_norm", "layer_norm",
    "_batch_norm_impl_index", "cudnn_batch_norm",
}
_ATTENTION = {
    "_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention", "_scaled_dot_product_flash_attention_for_cpu",
    "_efficient_attention_forward", "_flash_attention_forward",
}


def _shape(t):
    return [int(s) for s in t.shape]


def _tensors(args):
    out = []
    for a in args:
        if isinstance(a, torch.Tensor):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out += _tensors(a)
    return out


def _first_tensor(x):
    if isinstance(x, torch.Tensor):
        return x
    if isinstance(x, (list, tuple)):
        for e in x:
            t = _first_tensor(e)
            if t is not None:
                return t
    return None


def _pool_out(n, k, s, p, d, ceil_mode):
    span = n + 2 * p - d * (k - 1) - 1
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _max_pool_meta(args, kwargs, dims):
    x = args[0]
    def arg(i, name, default):
        v = args[i] if len(args) > i else kwargs.get(name, default)
        v = list(v) if isinstance(v, (list, tuple)) else [v]
        return (v or default) * (dims if len(v or default) == 1 else 1)
    k = arg(1, "kernel_size", [1])
    s = arg(2, "stride", k)
    p = arg(3, "padding", [0])
    d = arg(4, "dilation", [1])
    ceil_mode = bool(args[5] if len(args) > 5 else kwargs.get("ceil_mode", False))
    lead = list(x.shape[:-dims])
    spatial = [_pool_out(int(n), k[i], s[i], p[i], d[i], ceil_mode) for i, n in enumerate(x.shape[-dims:])]
    out = torch.empty(lead + spatial, dtype=x.dtype, device="meta")
    return out, torch.empty(lead + spatial, dtype=torch.int64, device="meta")


# Output shapes of ops that have no meta kernel in some torch releases (Debian's 1.13).
_META_SHIMS = {
    "max_pool3d_with_indices": lambda a, k: _max_pool_meta(a, k, 3),
    "max_pool2d_with_indices": lambda a, k: _max_pool_meta(a, k, 2),
}


class MetaShim(TorchDispatchMode):
    """Runs ops on meta tensors, giving output shapes by formula where an op has no meta kernel."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        try:
            return func(*args, **kwargs)
        except NotImplementedError:
            shim = _META_SHIMS.get(func.overloadpacket.__name__)
            if shim is None or not any(t.is_meta for t in _tensors(args)):
                raise
            return shim(args, kwargs)


class _Counter(MetaShim):
    def __init__(self):
        super().__init__()
        self.records = []
        self.unknown = {}

    def add(self, op, kind, coef, factors):
        factors = [int(f) for f in factors]
        if coef and all(f > 0 for f in factors):
            self.records.append({"op": op, "kind": kind, "coef": coef, "factors": factors})

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = super().__torch_dispatch__(func, types, args, kwargs)
        name = func.overloadpacket.__name__
        if name.endswith("_") and not name.startswith("_") and name not in _FREE:
            name = name[:-1]  # in-place ops (add_) count as their functional form
        self.count(name, args, kwargs, out)
        return out

    def count(self, name, args, kwargs, out):
        res = _first_tensor(out)
        if name in _FREE or res is None and name not in _REDUCE:
            return
        ts = _tensors(args)
        if name in ("mm", "addmm"):
            a, b = (args[0], args[1]) if name == "mm" else (args[1], args[2])
            self.add(name, "matmul", 2, [a.shape[0], a.shape[1], b.shape[1]])
            if name == "addmm":
                self.add(name, "elementwise", 1, _shape(res))
        elif name in ("bmm", "baddbmm"):
            a, b = (args[0], args[1]) if name == "bmm" else (args[1], args[2])
            self.add(name, "matmul", 2, [a.shape[0], a.shape[1], a.shape[2], b.shape[2]])
            if name == "baddbmm":
                self.add(name, "elementwise", 1, _shape(res))
        elif name in ("mv", "addmv"):
            a = args[0] if name == "mv" else args[1]
            self.add(name, "matmul", 2, _shape(a))
        elif name == "dot":
            self.add(name, "matmul", 2, _shape(args[0]))
        elif name in ("convolution", "_convolution", "convolution_overrideable", "cudnn_convolution",
                      "mkldnn_convolution", "_slow_conv2d_forward", "slow_conv3d_forward"):
            x, w = args[0], args[1]
            transposed = bool(args[6]) if len(args) > 6 else False
            per = _shape(w)[1:]
            self.add(name, "conv", 2, (_shape(x) if transposed else _shape(res)) + per)
            if len(args) > 2 and isinstance(args[2], torch.Tensor):
                self.add(name, "elementwise", 1, _shape(res))
        elif name in _ATTENTION:
            q, k, v = args[0], args[1], args[2]
            b, h, l, e = _shape(q)
            s, ev = _shape(k)[-2], _shape(v)[-1]
            self.add(name, "attention", 2, [b, h, l, s, e])
            self.add(name, "attention", 2, [b, h, l, s, ev])
            self.add(name, "softmax", 5, [b, h, l, s])
        elif name in ("_softmax", "_log_softmax", "softmax", "log_softmax"):
            self.add(name, "softmax", 5, _shape(ts[0]))
        elif name in _NORM:
            self.add(name, "norm", 5, _shape(ts[0]))
        elif name in _REDUCE or name in _LOSS:
            self.add(name, "reduction", 1, _shape(ts[0]))
        elif "pool" in name:
            kernel = args[1] if len(args) > 1 and isinstance(args[1], (list, tuple)) else None
            if "adaptive" in name or kernel is None:
                self.add(name, "reduction", 1, _shape(ts[0]))
            else:
                self.add(name, "pool", 1, _shape(res) + [int(k) for k in kernel])
        else:
            if not self._pointwise(name):
                self.unknown[name] = self.unknown.get(name, 0) + 1
            self.add(name, "elementwise", 1, _shape(res))

    @staticmethod
    def _pointwise(name):
        if name in _POINTWISE:
            return True
        op = getattr(torch.ops.aten, name, None)
        tags = getattr(getattr(op, "default", None), "tags", None) or []
        pointwise = getattr(getattr(torch, "Tag", None), "pointwise", None)
        return pointwise is not None and pointwise in tags


def count(callable_, args):
    """Runs callable_(*args) (meta tensors) counting its ops: {records, total, unknown}."""
    c = _Counter()
    with torch.no_grad(), c:
        callable_(*args)
    total = sum(r["coef"] * math.prod(r["factors"]) for r in c.records)
    return {"records": c.records, "total": total, "unknown": sorted(c.unknown)}
