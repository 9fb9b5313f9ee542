#!/usr/bin/env python3
"""The Python half of the Python candidate runtime (python/kevo_bridge/candidate_runtime.py) on
CPU tensors: kevo_args built with ctypes over host buffers, each solution of data/solutions loaded
and called as kevo-runner would, and its return code compared with the reason its first line
names. Exits 77 (skipped) without torch."""

import ctypes
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

try:
    import torch
except ImportError:
    print("torch is not importable by", sys.executable, "- skipped")
    sys.exit(77)

from kevo_bridge import candidate_runtime as rt  # noqa: E402
from kevo_bridge import format_checks as fc  # noqa: E402

DIMS = [4, 64]  # kb_relu's batch_size, dim
META = {"problem": os.path.join(DATA, "solutions_gpu", "kb_relu.py"), "dims": ["batch_size", "dim"],
        "size_dims": ["batch_size", "dim"], "main_dims": DIMS, "args": [{"name": "x", "torch_dtype": "float32"}],
        "weights": [], "outputs": [{"name": "out", "torch_dtype": "float32", "shape": DIMS}], "compile": False}


def descriptor(t):
    d = rt._Tensor()
    d.data, d.dtype, d.ndim = t.data_ptr(), 0, t.dim()
    for i in range(t.dim()):
        d.shape[i], d.stride[i] = t.shape[i], t.stride(i)
    return d


class Call:
    """One kevo_args over host tensors x (input) and out (output), kept alive with it."""

    def __init__(self, x, out):
        self.ins, self.outs = (rt._Tensor * 1)(descriptor(x)), (rt._Tensor * 1)(descriptor(out))
        self.dims = (ctypes.c_int64 * 2)(*DIMS)
        self.args = rt._Args(1, ctypes.addressof(self.ins), 1, ctypes.addressof(self.outs), 1, None, 0,
                             ctypes.addressof(self.dims), 2, None, 0, None)

    def __call__(self):
        return rt.call(ctypes.addressof(self.args))


def expected(path):
    with open(path, encoding="utf-8") as f:
        return f.readline().split(":", 1)[1].strip()


def run_solution(path, calls=3):
    fd = os.open(path, os.O_RDONLY)
    try:
        err = rt.load(fd, os.path.basename(path), "ModelNew")
    finally:
        os.close(fd)
    if err:
        return None, err
    x, out = torch.empty(*DIMS), torch.empty(*DIMS)
    call = Call(x, out)
    for _ in range(calls):
        x.copy_(torch.randn(*DIMS))  # fresh values in the same buffer, as the runner draws them
        out.fill_(float("nan"))
        rc = call()
        if rc != rt.OK:
            return rc, rt.last_error()
        if not torch.equal(out, torch.relu(x)):
            return -1, "wrong output"
    return rt.OK, ""


class Runtime(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        rt.prepare(json.dumps(META), "cpu")
        cls.flags = fc.snapshot_flags()

    def setUp(self):
        fc.restore_flags(self.flags)

    def test_each_solution_gets_its_code(self):
        folder = os.path.join(DATA, "solutions")
        for f in sorted(x for x in os.listdir(folder) if x.endswith(".py")):
            want = expected(os.path.join(folder, f))
            with self.subTest(solution=f):
                fc.restore_flags(self.flags)
                rc, why = run_solution(os.path.join(folder, f))
                print(f"{f:24s} rc {rc} {why}")
                code = rt.OK if want == fc.OK else rt.FORMAT_BASE + 1 + rt.FORMAT_REASONS.index(want)
                self.assertEqual(rc, code, why)

    def test_a_module_without_modelnew_fails_its_load(self):
        rc, why = run_solution(META["problem"])
        self.assertIsNone(rc)
        self.assertIn("defines no class ModelNew", why)

    def test_an_inline_build_is_reported_even_when_the_solution_falls_back(self):
        path = os.path.join(DATA, "solutions_gpu", "inline_fallback_probe.py")
        if not os.path.exists(path):
            self.skipTest("no inline probe")
        rc, why = run_solution(path)
        self.assertEqual(rc, rt.INLINE_BUILD, why)


if __name__ == "__main__":
    unittest.main()
