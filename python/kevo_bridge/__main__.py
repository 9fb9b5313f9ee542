"""``python3 -m kevo_bridge``: the request loop (protocol in docs/INTEROP.md).

The protocol uses the process's original stdin/stdout. Before anything else they are moved to
private descriptors and fd 0/1 are pointed at /dev/null and stderr, so a print() or input() in user
code can neither forge nor swallow a protocol message.
"""

import json
import os
import struct
import sys
import time
import traceback

MAX_MESSAGE = 64 << 20


class NoCudaError(RuntimeError):
    """A request for device "cuda" where torch sees no CUDA device (reply kind "no_cuda")."""


def _take_stdio():
    proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
    proto_out = os.fdopen(os.dup(1), "wb", buffering=0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return proto_in, proto_out


def _read_exact(f, n):
    buf = b""
    while len(buf) < n:
        chunk = f.read(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def read_message(f):
    head = _read_exact(f, 4)
    if head is None:
        return None
    (n,) = struct.unpack("<I", head)
    if n > MAX_MESSAGE:
        raise ValueError(f"message of {n} bytes")
    body = _read_exact(f, n)
    if body is None:
        return None
    return json.loads(body.decode("utf-8"))


def _finite(x):
    """JSON has no NaN/Infinity: non-finite numbers become null."""
    if isinstance(x, float) and (x != x or x in (float("inf"), float("-inf"))):
        return None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    return x


def write_message(f, msg):
    body = json.dumps(_finite(msg), allow_nan=False).encode("utf-8")
    f.write(struct.pack("<I", len(body)) + body)
    f.flush()


class Bridge:
    def __init__(self):
        import torch  # noqa: F401  (imported here so an import failure becomes an error reply)
        from .extension import Extensions
        self.ref = None
        self.extensions = Extensions()  # built once per session

    # -- ops --------------------------------------------------------------------------------
    def op_hello(self, req):
        import numpy
        import torch
        from . import PROTOCOL_VERSION
        cuda = bool(torch.cuda.is_available())
        return {
            "protocol": PROTOCOL_VERSION,
            "python": sys.version.split()[0],
            "torch": torch.__version__,
            "numpy": numpy.__version__,
            "cuda": cuda,
            "device_name": torch.cuda.get_device_name(0) if cuda else None,
            "has_compile": hasattr(torch, "compile"),
        }

    def op_load(self, req):
        from .reference import Reference
        self.ref = None
        self.ref = Reference(req["path"], dims=req.get("dims") or None, seed=int(req.get("seed", 0)),
                             shapes_only=bool(req.get("shapes_only", False)))
        return {
            "style": "module" if self.ref.model is not None else "function",
            "globals": self.ref.globals,
            "size_globals": self.ref.size_globals,
        }

    def _need_ref(self):
        if self.ref is None:
            raise RuntimeError("no reference loaded (send 'load' first)")
        return self.ref

    def op_describe(self, req):
        return self._need_ref().describe(stats=bool(req.get("stats", True)),
                                         forward=req.get("forward", "auto"))

    def op_solution_info(self, req):
        """A KernelBench solution file parsed, never run (solution.py)."""
        from .solution import inspect
        return inspect(req["path"])

    def op_unread(self, req):
        """The module's tensors the last describe found its outputs never read (reads.py): they
        are not among its weights."""
        return {"unread": self._need_ref().unread}

    def op_grad_probe(self, req):
        return self._need_ref().grad_probe()

    def op_count_flops(self, req):
        return self._need_ref().count_flops()

    def _device(self, req):
        import torch
        dev = req.get("device", "cpu")
        if dev.startswith("cuda") and not torch.cuda.is_available():
            raise NoCudaError(f"no CUDA: torch {torch.__version__} sees no CUDA device "
                              f"(torch.cuda.is_available() is False)")
        if dev != "cpu" and not dev.startswith("cuda"):
            raise RuntimeError(f"unknown device '{dev}' (cpu or cuda)")
        return dev

    def _args(self, req, dev, session=None):
        """Forward's arguments: tensors from .npy files ("file") or, with a session, in place from
        another process's buffers ("ipc"); numbers ("value"). Weights are copied into the module."""
        from . import tensors
        ref = self._need_ref()

        def tensor(a, what):
            if "file" in a:
                return tensors.load(a["file"], a["dtype"], a.get("torch_dtype"))
            if "ipc" in a and session is not None:
                return session.tensor(a, what)
            raise ValueError(f"{what}: needs 'file'" + (" or 'ipc'" if session is not None else ""))

        args = []
        for a in req.get("args", []):
            if "value" in a:
                args.append(a["value"])
            else:
                args.append(tensor(a, f"argument '{a.get('name')}'").to(dev))
        weights = {}
        for w in req.get("weights", []):
            weights[w["name"]] = tensor(w, f"weight '{w.get('name')}'")
        if ref.shapes_only:
            raise RuntimeError("the reference was loaded with shapes_only (no real weights); load it again")
        ref.to_device(dev)
        ref.set_weights(weights, len(args))
        return args

    def op_run(self, req):
        from . import tensors
        ref = self._need_ref()
        dev = self._device(req)
        args = self._args(req, dev)
        outs = ref.run(args)
        if dev != "cpu":
            import torch
            torch.cuda.synchronize()
        out_dir = req["out_dir"]
        prefix = req.get("out_prefix", "out")
        replies = []
        for i, o in enumerate(outs):
            path = os.path.join(out_dir, f"{prefix}{i}.npy")
            d = tensors.save(o, path, f"output {i}")
            replies.append({"file": path, "dtype": d, "shape": list(o.shape)})
        return {"outputs": replies}

    def op_run_ipc(self, req):
        """run on tensors that lie in kevo's oracle runner (ipc.py): the inputs are used in place
        and the outputs are copied into the runner's output buffers; nothing comes back but their
        shapes. The runner lends copies of its inputs, so a reference that writes into its inputs
        changes nothing kevo compares against."""
        import torch
        from . import ipc, tensors
        from .reference import ReferenceError_
        ref = self._need_ref()
        dev = self._device(req)
        specs = req.get("outputs", [])
        with ipc.Session(dev) as session:
            args = self._args(req, dev, session)
            targets = [session.tensor(dict(o, torch_dtype=None), f"output {i}") for i, o in enumerate(specs)]
            outs = ref.run(args)
            if len(outs) != len(targets):
                raise ReferenceError_(f"the PyTorch reference returns {len(outs)} outputs, the task declares "
                                      f"{len(targets)}")
            shapes = []
            for i, (o, t, spec) in enumerate(zip(outs, targets, specs)):
                d = tensors.kevo_dtype(o, f"output {i}")
                if d != spec["dtype"]:
                    raise ReferenceError_(f"output {i} is {d}, the task declares {spec['dtype']}")
                if o.numel() != t.numel():
                    raise ReferenceError_(f"output {i} has {o.numel()} elements, the task declares {t.numel()}")
                with torch.no_grad():
                    t.copy_(o.reshape(t.shape))
                shapes.append(list(o.shape))
        return {"outputs": [{"dtype": s["dtype"], "shape": sh} for s, sh in zip(specs, shapes)]}

    def op_time(self, req):
        from . import ipc
        with ipc.Session(self._device(req)) as session:
            return self._time(req, session)

    def _time(self, req, session):
        import torch
        from .extension import ExtensionError
        ref = self._need_ref()
        dev = self._device(req)  # "no CUDA: ..." when cuda is asked for and torch sees none
        args = self._args(req, dev, session)
        clock = _Clock(dev)
        warmup = int(req.get("warmup", 3))
        min_reps = int(req.get("min_reps", 10))
        max_reps = int(req.get("max_reps", 1000))
        budget = float(req.get("budget_s", 4.0))
        modes = req.get("modes", ["eager", "compile"])
        for mode in modes:
            if mode not in ("eager", "compile", "extension"):
                raise ValueError(f"unknown timing mode '{mode}' (eager, compile or extension)")
        result = {"device": dev, "device_name": clock.name, "l2_flush_bytes": clock.flush_bytes}
        for mode in modes:
            try:
                if mode == "eager":
                    fn = ref.callable
                elif mode == "compile":
                    if not hasattr(torch, "compile"):
                        result[mode] = {"error": f"torch.compile needs torch >= 2.0 (this is {torch.__version__})"}
                        continue
                    if ref.compiled is None:
                        ref.compiled = torch.compile(ref.callable)
                    fn = ref.compiled
                else:  # extension
                    fn = self.extensions.callable(ref, req.get("extension"), dev)
            except ExtensionError as e:
                result[mode] = {"error": str(e)}
                continue
            except Exception as e:
                what = "torch.compile failed: " if mode == "compile" else ""
                result[mode] = {"error": f"{what}{type(e).__name__}: {e}", "traceback": traceback.format_exc()}
                continue
            try:
                result[mode] = _time_fn(fn, args, clock, warmup, min_reps, max_reps, budget)
            except Exception as e:
                what = "torch.compile failed: " if mode == "compile" else ""
                result[mode] = {"error": f"{what}{type(e).__name__}: {e}", "traceback": traceback.format_exc()}
        return result


class _Clock:
    """CUDA events on a GPU, time.perf_counter on the CPU; either way every call is preceded by
    zeroing a buffer larger than the last-level cache, outside the timed interval."""

    def __init__(self, dev):
        import torch
        self.cuda = dev.startswith("cuda")
        if self.cuda:
            props = torch.cuda.get_device_properties(torch.device(dev))
            l2 = int(getattr(props, "L2_cache_size", 0) or (64 << 20))
            self.name = torch.cuda.get_device_name(dev)
            self.flush = torch.empty(2 * l2 + (8 << 20), dtype=torch.uint8, device=dev)
        else:
            self.name = _cpu_name()
            self.flush = torch.empty(64 << 20, dtype=torch.uint8)
        self.flush_bytes = self.flush.numel()

    def sync(self):
        if self.cuda:
            import torch
            torch.cuda.synchronize()

    def batch(self, fn, args, n):
        """n timed calls, in milliseconds."""
        import torch
        if not self.cuda:
            out = []
            for _ in range(n):
                self.flush.zero_()
                t0 = time.perf_counter()
                fn(*args)
                out.append((time.perf_counter() - t0) * 1e3)
            return out
        evs = []
        for _ in range(n):
            self.flush.zero_()  # outside the event pair: every call starts with a cold L2
            s = torch.cuda.Event(enable_timing=True)
            e = torch.cuda.Event(enable_timing=True)
            s.record()
            fn(*args)
            e.record()
            evs.append((s, e))
        torch.cuda.synchronize()
        return [s.elapsed_time(e) for s, e in evs]


def _cpu_name():
    try:
        with open("/proc/cpuinfo", "r", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return "CPU: " + line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return "CPU: " + (platform.processor() or platform.machine() or "unknown")


def _time_fn(fn, args, clock, warmup, min_reps, max_reps, budget):
    import torch
    from .reference import median_ci
    with torch.no_grad():
        for _ in range(warmup):
            fn(*args)
        clock.sync()
        samples = []
        t0 = time.monotonic()
        while len(samples) < max_reps:
            samples += clock.batch(fn, args, min(10, max_reps - len(samples)))
            if len(samples) >= min_reps:
                med, lo, hi = median_ci(samples)
                if hi - lo <= 0.02 * med or time.monotonic() - t0 > budget:
                    break
    med, lo, hi = median_ci(samples)
    return {"median_ms": med, "ci_low_ms": lo, "ci_high_ms": hi, "min_ms": min(samples), "n": len(samples)}


def main():
    proto_in, proto_out = _take_stdio()
    try:
        bridge = Bridge()
        startup_error = None
    except BaseException as e:  # torch missing or broken: every request gets this error
        bridge = None
        startup_error = (f"cannot import torch: {type(e).__name__}: {e}", traceback.format_exc())
    while True:
        try:
            req = read_message(proto_in)
        except Exception as e:
            write_message(proto_out, {"ok": False, "error": f"protocol error: {e}", "kind": "protocol"})
            return 2
        if req is None:
            return 0
        rid = req.get("id")
        op = req.get("op", "")
        if op == "shutdown":
            write_message(proto_out, {"id": rid, "ok": True})
            return 0
        if bridge is None:
            write_message(proto_out, {"id": rid, "ok": False, "error": startup_error[0],
                                      "traceback": startup_error[1], "kind": "environment"})
            continue
        handler = getattr(bridge, "op_" + op, None)
        if handler is None:
            write_message(proto_out, {"id": rid, "ok": False, "kind": "protocol",
                                      "error": f"unknown op '{op}' (hello, load, describe, count_flops, grad_probe, unread, solution_info, run, run_ipc, time, shutdown)"})
            continue
        try:
            reply = handler(req)
            reply.update({"id": rid, "ok": True})
        except BaseException as e:  # user code may raise anything, SystemExit included
            if isinstance(e, KeyboardInterrupt):
                raise
            from .reference import ReferenceError_
            from .tensors import TensorError
            from .needs import explain
            need = explain(e)
            if isinstance(e, NoCudaError):
                kind = "no_cuda"
            elif need or isinstance(e, (ReferenceError_, TensorError)):
                kind = "reference"
            else:
                kind = "python"
            msg = need or (f"{type(e).__name__}: {e}" if kind == "python" else str(e))
            reply = {"id": rid, "ok": False, "kind": kind, "error": msg,
                     "traceback": traceback.format_exc()}
        try:
            write_message(proto_out, reply)
        except (TypeError, ValueError) as e:
            write_message(proto_out, {"id": rid, "ok": False, "kind": "protocol",
                                      "error": f"reply not serializable: {e}"})


if __name__ == "__main__":
    sys.exit(main())
