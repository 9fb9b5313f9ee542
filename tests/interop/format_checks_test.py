#!/usr/bin/env python3
"""The format checks around ModelNew.forward (python/kevo_bridge/format_checks.py) against the
small hostile solutions in data/solutions/: each must get the reason its first line names, and the
well-behaved one must pass. CPU only; exits 77 (skipped) without torch."""

import importlib.util
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOLUTIONS = os.path.join(HERE, "data", "solutions")
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

try:
    import torch
except ImportError:
    print("torch is not importable by", sys.executable, "- skipped")
    sys.exit(77)

from kevo_bridge import format_checks as fc  # noqa: E402

CALLS = 3  # enough for a result kept from call 1 to show up in call 2


def expected_reason(path):
    with open(path, encoding="utf-8") as f:
        first = f.readline()
    assert first.startswith("# expect:"), f"{path}: first line must be '# expect: REASON'"
    return first.split(":", 1)[1].strip()


def load(path):
    name = "kevo_solution_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_solution(path):
    """Loads the solution under a checker (baseline taken first) and calls it CALLS times on fresh
    inputs; returns the first failing call's result, or the last one when all pass."""
    torch.manual_seed(0)
    ref_dtypes = [torch.relu(torch.randn(4, 8)).dtype]
    checker = fc.CallChecker(expected_dtypes=ref_dtypes)
    model = load(path).ModelNew()
    result = None
    for _ in range(CALLS):
        x = torch.randn(4, 8)
        result = checker.call(model.forward, [x])
        if not result.verdict.ok:
            return result
        torch.testing.assert_close(result.outputs[0], torch.relu(x))
    return result


class HostileSolutions(unittest.TestCase):
    def setUp(self):
        self.flags = fc.snapshot_flags()

    def tearDown(self):
        fc.restore_flags(self.flags)
        self.assertEqual(fc.snapshot_flags(), self.flags)

    def test_each_solution_gets_its_reason(self):
        files = sorted(f for f in os.listdir(SOLUTIONS) if f.endswith(".py"))
        self.assertGreaterEqual(len(files), 9)
        for f in files:
            path = os.path.join(SOLUTIONS, f)
            want = expected_reason(path)
            with self.subTest(solution=f):
                fc.restore_flags(self.flags)
                r = check_solution(path)
                print(f"{f:24s} {r.verdict.reason:16s} {r.verdict.message}")
                self.assertEqual(r.verdict.reason, want, r.failures)
                if want != fc.OK:
                    self.assertTrue(r.verdict.message)

    def test_in_place_result_is_also_an_input_change(self):
        r = check_solution(os.path.join(SOLUTIONS, "aliased_input.py"))
        self.assertIn(fc.INPUT_MODIFIED, [v.reason for v in r.failures])

    def test_flag_flip_names_the_switch(self):
        r = check_solution(os.path.join(SOLUTIONS, "flag_tf32.py"))
        self.assertIn("torch.backends.cuda.matmul.allow_tf32", r.verdict.message)
        fc.restore_flags(self.flags)
        r = check_solution(os.path.join(SOLUTIONS, "flag_default_dtype.py"))
        self.assertIn("torch.get_default_dtype()", r.verdict.message)


class Checks(unittest.TestCase):
    def test_view_of_an_input_is_aliased(self):
        x = torch.randn(8, 8)
        f = fc.check_not_aliased([x[2:4]], [x])
        self.assertEqual([v.reason for v in f], [fc.ALIASED_INPUT])
        self.assertEqual(fc.check_not_aliased([x.clone()], [x]), [])

    def test_nan_inputs_left_alone_are_unchanged(self):
        x = torch.tensor([1.0, float("nan")])
        snap = fc.snapshot_inputs([x])
        self.assertEqual(fc.check_inputs_unchanged([x], snap), [])
        x[0] = 2.0
        self.assertEqual([v.reason for v in fc.check_inputs_unchanged([x], snap)], [fc.INPUT_MODIFIED])

    def test_odd_results_give_verdicts_not_exceptions(self):
        checker = fc.CallChecker()
        self.assertEqual(checker.call(lambda: 3, []).verdict.reason, fc.NOT_A_TENSOR)
        self.assertEqual(checker.call(lambda: 1 / 0, []).verdict.reason, fc.FORWARD_RAISED)

        def interrupt():
            raise KeyboardInterrupt
        self.assertEqual(checker.call(interrupt, []).verdict.reason, fc.EARLY_EXIT)
        self.assertEqual(checker.call(lambda: torch.nn.Parameter(torch.ones(2)), []).verdict.reason,
                         fc.TENSOR_SUBCLASS)

    def test_fresh_results_each_call_pass(self):
        checker = fc.CallChecker(expected_dtypes=[torch.float32, torch.float32])
        for _ in range(3):
            x = torch.randn(3)
            r = checker.call(lambda a: (a + 1, a * 2), [x])
            self.assertTrue(r.verdict.ok, r.failures)

    def test_empty_results_do_not_count_as_shared(self):
        checker = fc.CallChecker()
        for _ in range(2):
            self.assertTrue(checker.call(lambda: torch.empty(0), []).verdict.ok)


if __name__ == "__main__":
    unittest.main(verbosity=2)
