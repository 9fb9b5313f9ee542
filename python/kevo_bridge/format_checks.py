"""Format checks around each call of a KernelBench solution's ``ModelNew.forward``.

These run in the candidate's process (never the bridge's: the oracle stays out of it) and close
what the ModelNew format allows that kevo's C ABI did not: lazy or subclassed results, results
that alias an input or an earlier call's result, inputs changed in place, global numerics switches
flipped, an early exit, and a lower-precision result. Every check returns a ``Verdict`` and never
raises: a candidate's hostile object must not be able to turn a check into a crash of the checker.

What they cannot see (left to other layers): a switch flipped and restored inside one forward
(only its effect on the result, caught by the tolerance), work computed in fp16 and cast back to
fp32 (same), ``os._exit`` (the process ends; the outside checker sees a runner that died without a
verdict), side-stream work and reading of the call stack.
"""

import dataclasses

import torch

OK = "ok"
EARLY_EXIT = "early_exit"
FORWARD_RAISED = "forward_raised"
FLAG_FLIPPED = "flag_flipped"
NOT_A_TENSOR = "not_a_tensor"
TENSOR_SUBCLASS = "tensor_subclass"
ALIASED_INPUT = "aliased_input"
OUTPUT_REUSED = "output_reused"
INPUT_MODIFIED = "input_modified"
OUTPUT_COUNT = "output_count"
DTYPE_CHANGED = "dtype_changed"

# The order in which a call's failures are reported: the first is the verdict's reason. Aliasing
# comes before input_modified because an in-place result is both and aliasing is its cause.
_PRIORITY = [EARLY_EXIT, FORWARD_RAISED, FLAG_FLIPPED, NOT_A_TENSOR, TENSOR_SUBCLASS, ALIASED_INPUT,
             OUTPUT_REUSED, INPUT_MODIFIED, OUTPUT_COUNT, DTYPE_CHANGED]


@dataclasses.dataclass(frozen=True)
class Verdict:
    reason: str
    message: str = ""

    @property
    def ok(self):
        return self.reason == OK

    def as_dict(self):
        return {"reason": self.reason, "message": self.message}


PASS = Verdict(OK)


def _first(failures):
    """The verdict of several failures: the highest-priority one, or PASS."""
    if not failures:
        return PASS
    rank = {r: i for i, r in enumerate(_PRIORITY)}
    return min(failures, key=lambda v: rank.get(v.reason, len(rank)))


def _safe_repr(x):
    try:
        return repr(x)
    except BaseException:  # a hostile __repr__ must not break the report
        return f"<{type(x).__name__}>"


# --- Global numerics switches -------------------------------------------------------------------

def _matmul(name):
    return lambda: getattr(torch.backends.cuda.matmul, name)


# Each reader is called under a guard: some switches do not exist in every torch version (the
# cuda.matmul namespace raises AssertionError, not AttributeError, for unknown names).
_FLAGS = {
    "torch.backends.cuda.matmul.allow_tf32": _matmul("allow_tf32"),
    "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction":
        _matmul("allow_fp16_reduced_precision_reduction"),
    "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction":
        _matmul("allow_bf16_reduced_precision_reduction"),
    "torch.backends.cudnn.allow_tf32": lambda: torch.backends.cudnn.allow_tf32,
    "torch.backends.cudnn.benchmark": lambda: torch.backends.cudnn.benchmark,
    "torch.backends.cudnn.deterministic": lambda: torch.backends.cudnn.deterministic,
    "torch.backends.cudnn.enabled": lambda: torch.backends.cudnn.enabled,
    "torch.backends.mkldnn.enabled": lambda: torch.backends.mkldnn.enabled,
    "torch.get_default_dtype()": torch.get_default_dtype,
    "torch.get_float32_matmul_precision()": lambda: torch.get_float32_matmul_precision(),
    "torch.are_deterministic_algorithms_enabled()": torch.are_deterministic_algorithms_enabled,
    "torch.is_grad_enabled()": torch.is_grad_enabled,
}

_ABSENT = "<absent in this torch>"


def snapshot_flags():
    """The current value of every global numerics switch (a switch this torch lacks reads as
    absent, the same before and after)."""
    snap = {}
    for name, read in _FLAGS.items():
        try:
            snap[name] = read()
        except Exception:
            snap[name] = _ABSENT
    return snap


def compare_flags(before, after, when="during forward"):
    changed = [(n, before.get(n), after.get(n)) for n in before if before.get(n) != after.get(n)]
    if not changed:
        return PASS
    what = ", ".join(f"{n} {_safe_repr(b)} -> {_safe_repr(a)}" for n, b, a in changed)
    return Verdict(FLAG_FLIPPED, f"global numerics switch changed {when}: {what}")


def restore_flags(snap):
    """Puts the switches back (so a test process, or a runner that goes on to report, is not left
    running with the candidate's settings). Never raises."""
    setters = {
        "torch.backends.cuda.matmul.allow_tf32":
            lambda v: setattr(torch.backends.cuda.matmul, "allow_tf32", v),
        "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction":
            lambda v: setattr(torch.backends.cuda.matmul, "allow_fp16_reduced_precision_reduction", v),
        "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction":
            lambda v: setattr(torch.backends.cuda.matmul, "allow_bf16_reduced_precision_reduction", v),
        "torch.backends.cudnn.allow_tf32": lambda v: setattr(torch.backends.cudnn, "allow_tf32", v),
        "torch.backends.cudnn.benchmark": lambda v: setattr(torch.backends.cudnn, "benchmark", v),
        "torch.backends.cudnn.deterministic": lambda v: setattr(torch.backends.cudnn, "deterministic", v),
        "torch.backends.cudnn.enabled": lambda v: setattr(torch.backends.cudnn, "enabled", v),
        "torch.backends.mkldnn.enabled": lambda v: setattr(torch.backends.mkldnn, "enabled", v),
        "torch.get_default_dtype()": torch.set_default_dtype,
        "torch.get_float32_matmul_precision()": torch.set_float32_matmul_precision,
        "torch.are_deterministic_algorithms_enabled()": torch.use_deterministic_algorithms,
        "torch.is_grad_enabled()": torch.set_grad_enabled,
    }
    now = snapshot_flags()
    for name, value in snap.items():
        if value == _ABSENT or now.get(name) == value or name not in setters:
            continue
        try:
            setters[name](value)
        except Exception:
            pass


# --- Outputs and inputs -------------------------------------------------------------------------

def flatten(out):
    """A forward's result as a flat list of its leaves (a tensor, or tuples and lists of them)."""
    if isinstance(out, (tuple, list)):
        leaves = []
        for x in out:
            leaves.extend(flatten(x))
        return leaves
    return [out]


def _storage_range(t):
    """(device, first byte, end byte) of the memory a plain tensor's storage holds, or None for
    an empty one (nothing to share). Uses the whole storage, not the view, so that two views of one
    buffer count as shared even where their elements do not overlap."""
    try:
        s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
        n = s.nbytes()
        p = s.data_ptr()
    except Exception:
        return None
    if n == 0 or p == 0:
        return None
    return (str(t.device), p, p + n)


def _overlap(a, b):
    return a is not None and b is not None and a[0] == b[0] and a[1] < b[2] and b[1] < a[2]


def _is_plain(t):
    return type(t) is torch.Tensor


def check_output_types(outputs):
    """Each result a plain torch.Tensor: a subclass can compute lazily (only when compared) or
    carry empty storage, so the timed call did no work."""
    failures = []
    for i, t in enumerate(outputs):
        if not isinstance(t, torch.Tensor):
            failures.append(Verdict(NOT_A_TENSOR, f"output {i} is a {type(t).__name__}, not a torch.Tensor"))
        elif not _is_plain(t):
            failures.append(Verdict(
                TENSOR_SUBCLASS,
                f"output {i} is a {type(t).__module__}.{type(t).__qualname__} (a torch.Tensor subclass); "
                "results must be plain torch.Tensor"))
    return failures


def check_not_aliased(outputs, inputs):
    """No result shares storage with an input: an in-place result hides the cost of a fresh
    allocation and destroys the input the checker compares against."""
    failures = []
    ranges = [(j, _storage_range(x)) for j, x in enumerate(inputs) if _is_plain(x)]
    for i, t in enumerate(outputs):
        if not _is_plain(t):
            continue
        r = _storage_range(t)
        for j, x in enumerate(inputs):
            if t is x:
                failures.append(Verdict(ALIASED_INPUT, f"output {i} is input {j} itself"))
                break
        else:
            for j, rx in ranges:
                if _overlap(r, rx):
                    failures.append(Verdict(ALIASED_INPUT, f"output {i} shares storage with input {j}"))
                    break
    return failures


def check_not_reused(outputs, earlier):
    """No result is an object, or lies in storage, returned by an earlier call: a cached result
    skips the work on every call after the first. ``earlier`` must hold the earlier results alive
    (CallChecker does), so their memory cannot be handed out again and a match is a real reuse."""
    failures = []
    for i, t in enumerate(outputs):
        if not _is_plain(t):
            continue
        r = _storage_range(t)
        for call, prev in earlier:
            hit = None
            for k, p in enumerate(prev):
                if t is p:
                    hit = f"output {i} is the same object as output {k} of call {call}"
                elif _is_plain(p) and _overlap(r, _storage_range(p)):
                    hit = f"output {i} shares storage with output {k} of call {call}"
                if hit:
                    break
            if hit:
                failures.append(Verdict(OUTPUT_REUSED, hit))
                break
    return failures


def snapshot_inputs(inputs):
    """Clones of the inputs (with their shape and strides) to compare after the call; a non-tensor
    input is kept as is."""
    snap = []
    for x in inputs:
        if isinstance(x, torch.Tensor):
            try:
                snap.append((x.detach().clone(), tuple(x.shape), tuple(x.stride()), x.dtype))
            except Exception:
                snap.append(None)
        else:
            snap.append(x)
    return snap


def _same_values(a, b):
    if a.dtype != b.dtype or a.shape != b.shape or a.device != b.device:
        return False
    if a.is_floating_point() or a.is_complex():
        # NaN == NaN here: an input with NaNs is unchanged when its NaNs stay where they were.
        return bool(((a == b) | (a.isnan() & b.isnan())).all())
    return torch.equal(a, b)


def check_inputs_unchanged(inputs, snap):
    failures = []
    for j, (x, s) in enumerate(zip(inputs, snap)):
        if not isinstance(x, torch.Tensor):
            continue
        if s is None:
            continue
        clone, shape, stride, dtype = s
        try:
            if tuple(x.shape) != shape or tuple(x.stride()) != stride or x.dtype != dtype:
                failures.append(Verdict(INPUT_MODIFIED, f"input {j} changed shape, strides or dtype "
                                        f"({shape} {stride} {dtype} -> {tuple(x.shape)} {tuple(x.stride())} {x.dtype})"))
            elif not _same_values(x.detach(), clone):
                failures.append(Verdict(INPUT_MODIFIED, f"input {j} was modified in place"))
        except Exception as e:
            failures.append(Verdict(INPUT_MODIFIED, f"input {j} cannot be compared after the call: {e}"))
    return failures


def check_dtypes(outputs, expected):
    """Each result in the reference's dtype: a fp16 result of a fp32 task is a different, cheaper
    computation, whatever the tolerance says. ``expected`` is the reference's output dtypes in
    order (None: not checked)."""
    if expected is None:
        return []
    if len(outputs) != len(expected):
        return [Verdict(OUTPUT_COUNT, f"forward returned {len(outputs)} tensors, the reference {len(expected)}")]
    failures = []
    for i, (t, d) in enumerate(zip(outputs, expected)):
        if isinstance(t, torch.Tensor) and t.dtype != d:
            failures.append(Verdict(DTYPE_CHANGED, f"output {i} is {t.dtype}, the reference's is {d}"))
    return failures


# --- One call -----------------------------------------------------------------------------------

@dataclasses.dataclass
class CallResult:
    outputs: list            # the flattened result ([] when forward did not return)
    verdict: Verdict         # the first failure by priority, or PASS
    failures: list           # every failure found


class CallChecker:
    """The checks around every call of one solution. Construct it before the solution's module is
    imported: its baseline of switches then also catches one flipped at import or in __init__,
    which a before/after snapshot around forward alone would miss."""

    def __init__(self, expected_dtypes=None, baseline=None, keep=None, check_inputs=True):
        self.expected_dtypes = expected_dtypes
        self.baseline = snapshot_flags() if baseline is None else baseline
        self.calls = 0
        self.earlier = []  # (call number, outputs): held alive on purpose, see check_not_reused
        # keep: how many earlier calls' results are held (None: all). A runtime that makes
        # thousands of timed calls holds the last few; a cache keyed on the (unchanging) input
        # buffers returns the same object every call, which one call back already sees.
        self.keep = keep
        # check_inputs False: no clone of the inputs per call (the runtime's checker compares
        # them from outside, and a clone per timed call would be timed work).
        self.check_inputs = check_inputs

    def call(self, forward, inputs):
        """Runs forward(*inputs) under the checks. Never raises (except for os._exit, which no
        in-process code can stop)."""
        self.calls += 1
        failures = []
        try:
            before = snapshot_flags()
            failures.extend(_list(compare_flags(self.baseline, before, "before forward (at import or in __init__)")))
            snap = snapshot_inputs(inputs) if self.check_inputs else None
        except BaseException as e:  # a hostile input's clone; the checker must still answer
            return CallResult([], Verdict(FORWARD_RAISED, f"inputs cannot be snapshot: {e!r}"), [])
        try:
            out = forward(*inputs)
        except (SystemExit, KeyboardInterrupt) as e:
            # Only the checker's verdict counts: an exit(0) from forward must not read as success.
            v = Verdict(EARLY_EXIT, f"forward raised {type(e).__name__}({_safe_repr(getattr(e, 'code', ''))})")
            return CallResult([], v, [v] + failures)
        except BaseException as e:
            v = Verdict(FORWARD_RAISED, f"forward raised {type(e).__name__}: {_safe_repr(e)}")
            return CallResult([], v, [v] + failures)
        try:
            outputs = flatten(out)
            failures.extend(_list(compare_flags(before, snapshot_flags())))
            failures.extend(check_output_types(outputs))
            failures.extend(check_not_aliased(outputs, inputs))
            failures.extend(check_not_reused(outputs, self.earlier))
            if snap is not None:
                failures.extend(check_inputs_unchanged(inputs, snap))
            failures.extend(check_dtypes(outputs, self.expected_dtypes))
        except BaseException as e:  # e.g. a subclass whose comparison raises
            v = Verdict(FORWARD_RAISED, f"result cannot be checked: {type(e).__name__}: {_safe_repr(e)}")
            return CallResult([], v, failures + [v])
        self.earlier.append((self.calls, outputs))
        if self.keep is not None and len(self.earlier) > self.keep:
            del self.earlier[0]
        return CallResult(outputs, _first(failures), failures)


def _list(v):
    return [] if v.ok else [v]
