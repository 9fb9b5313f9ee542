#!/usr/bin/env python3
"""Every bundled backward task's baseline against PyTorch's own backward, on the GPU (issue 21).

For each task of suites/backward.txt (or --tasks):
  1. `kevo eval TASK --baseline --json` (the real checker: every config against the CPU reference,
     then timed with the outside clock); its verdict and the baseline's median on the main config;
  2. PyTorch's backward of the same forward on the same main-config shapes: the forward is run
     once with autograd (not timed), then `torch.autograd.grad(y, leaves, dy)` is timed, i.e. the
     backward alone, as robust-kbench times it; once eager and once through torch.compile (whose
     AOTAutograd compiles the backward graph too). TF32 is off for matmuls and convolutions: the
     tasks ask for f32 accuracy, so a TF32 PyTorch would be timed on easier work.
The kevo evals run a few at a time (their timing phases take kevo's per-GPU lock, so each is timed
with the GPU to itself), then PyTorch is timed, never at the same time as an eval: the ratios are
of the same GPU in the same run. PyTorch's figure is the median of CUDA-event spans
over >= 20 calls; kevo's is the checker's median (docs/ARCHITECTURE.md, timing).

  python3 bench/backward_vs_torch.py BUILD_DIR OUT_DIR [--tasks a b ...] [--timeout S] [--jobs N]
Prints one `BWD_VS_TORCH` line per task and writes OUT_DIR/backward_vs_torch.json.
"""
import argparse
import concurrent.futures
import json
import math
import os
import subprocess
import sys
import time
import tomllib

import torch
import torch.nn.functional as F


def main_dims(task_dir):
    d = tomllib.load(open(os.path.join(task_dir, "task.toml"), "rb"))
    for c in d.get("configs", []):
        if c.get("name") == "main":
            return c["dims"]
    return d["configs"][0]["dims"]


def cdiv(a, b):
    return (a + b - 1) // b


# Each entry: dims -> (forward function, list of leaves that get gradients, other args). The
# forwards are the forward tasks' definitions (tasks/<of>/task.toml's description).
def case(name, d, dev):
    r = lambda *s, std=1.0: (torch.randn(*s, device=dev) * std)  # noqa: E731
    if name == "linear_backward":
        x, W, b = r(d["M"], d["K"]), r(d["N"], d["K"], std=0.05), r(d["N"])
        return (lambda x, W, b: F.linear(x, W, b)), [x, W, b], []
    if name == "gemm_bias_relu_backward":
        x, W, b = r(d["M"], d["K"]), r(d["N"], d["K"], std=0.05), r(d["N"])
        return (lambda x, W, b: torch.relu(F.linear(x, W, b))), [x, W, b], []
    if name == "layernorm_backward":
        x, w, b = r(d["B"], d["N"]), r(d["N"]), r(d["N"])
        return (lambda x, w, b: F.layer_norm(x, [x.shape[1]], w, b, 1e-5)), [x, w, b], []
    if name == "rms_norm_backward":
        x, w = r(d["B"], d["C"], d["S"]), r(d["C"])
        f = lambda x, w: x * torch.rsqrt(x.pow(2).mean(1, keepdim=True) + 1e-5) * w.view(1, -1, 1)  # noqa: E731
        return f, [x, w], []
    if name == "softmax_backward":
        return (lambda x: torch.softmax(x, 1)), [r(d["B"], d["N"], std=4.0)], []
    if name == "gelu_backward":
        return (lambda x: F.gelu(x)), [r(d["N"])], []
    if name == "cross_entropy_backward":
        t = torch.randint(0, d["C"], (d["B"],), device=dev)
        return (lambda x, t: F.cross_entropy(x, t)), [r(d["B"], d["C"], std=4.0)], [t]
    if name == "maxpool2d_backward":
        x = r(d["N"], d["C"], d["H"], d["W"])
        return (lambda x: F.max_pool2d(x, d["KS"], d["T"], d["P"])), [x], []
    if name == "conv2d_backward":
        x, w = r(d["N"], d["C"], d["H"], d["W"]), r(d["K"], d["C"], d["R"], d["S"], std=0.05)
        return (lambda x, w: F.conv2d(x, w, padding=d["P"])), [x, w], []
    if name == "attention_backward":
        q, k, v = (r(d["BH"], d["S"], d["D"]) for _ in range(3))
        def attn(q, k, v):  # the math form: f32 end to end, like the task (no flash/TF32 path)
            s = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), -1)
            return s @ v
        return attn, [q, k, v], []
    return None


def time_backward(fn, leaves, others, reps=20, min_s=0.5):
    xs = [t.detach().requires_grad_(True) for t in leaves]
    y = fn(*xs, *others)
    dy = torch.randn_like(y)
    for _ in range(3):
        torch.autograd.grad(y, xs, dy, retain_graph=True)
    torch.cuda.synchronize()
    spans, t0 = [], time.time()
    while len(spans) < reps or (time.time() - t0 < min_s and len(spans) < 1000):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        torch.autograd.grad(y, xs, dy, retain_graph=True)
        b.record()
        b.synchronize()
        spans.append(a.elapsed_time(b))
    spans.sort()
    return spans[len(spans) // 2]


def kevo_eval(kevo, task, timeout):
    t0 = time.time()
    try:
        p = subprocess.run([kevo, "eval", task, "--baseline", "--seeds", "1", "--json"], capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"outcome": "timeout", "seconds": timeout}
    try:
        j = json.loads(p.stdout)
    except json.JSONDecodeError:
        return {"outcome": f"no JSON (exit {p.returncode})", "stderr": p.stderr[-600:], "seconds": time.time() - t0}
    t = j.get("timing") or {}
    return {"outcome": j.get("outcome"), "reason": j.get("reason", ""), "exit": p.returncode,
            "median_ms": (t.get("candidate") or {}).get("median_ms"), "seconds": round(time.time() - t0, 1),
            "configs": f"{sum(1 for c in j.get('configs', []) if c.get('ok'))}/{len(j.get('configs', []))}",
            "message": j.get("message", "")[:300]}


def torch_side(name, dims):
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    c = case(name, dims, "cuda")
    if c is None:
        return {"error": "no PyTorch form in this script"}
    fn, leaves, others = c
    out = {}
    try:
        out["eager_ms"] = time_backward(fn, leaves, others)
    except Exception as ex:  # a failure of PyTorch's side is reported, not fatal
        out["eager_error"] = str(ex)[:200]
    try:
        t0 = time.time()
        cf = torch.compile(fn)
        out["compile_ms"] = time_backward(cf, leaves, others)
        out["compile_build_s"] = round(time.time() - t0, 1)
    except Exception as ex:
        out["compile_error"] = str(ex)[:200]
    torch.cuda.empty_cache()
    return out


def ratio(a, b):
    return f"{a / b:.2f}x" if isinstance(a, float) and isinstance(b, float) and b > 0 else "n/a"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("out")
    ap.add_argument("--tasks", nargs="*")
    ap.add_argument("--timeout", type=float, default=240)
    ap.add_argument("--jobs", type=int, default=4)
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    tasks = a.tasks or [t.strip() for t in open(os.path.join(root, "suites/backward.txt"))
                        if t.strip() and not t.startswith("#")]
    os.makedirs(a.out, exist_ok=True)
    kevo = os.path.join(a.build, "bin", "kevo")
    rows, bad = [], 0
    # The checker's evals run a.jobs at a time: their correctness phases overlap, and kevo's per-GPU
    # lock (util/gpu_lock.h) gives each timing phase the GPU alone. PyTorch is timed after them all.
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        evals = dict(zip(tasks, pool.map(lambda n: kevo_eval(kevo, os.path.join(root, "tasks", n), a.timeout), tasks)))
    for name in tasks:
        dims = main_dims(os.path.join(root, "tasks", name))
        k = evals[name]
        p = torch_side(name, dims)
        rows.append({"task": name, "dims": dims, "kevo": k, "pytorch": p})
        km = k.get("median_ms")
        # speedup of kevo's baseline = PyTorch's time / the baseline's time (> 1: the baseline is faster)
        print(f"BWD_VS_TORCH {name} {k['outcome']} [{k.get('reason', '')}] configs {k.get('configs', '-')} "
              f"eval {k['seconds']} s | baseline {km} ms | eager {p.get('eager_ms')} ms "
              f"(baseline {ratio(p.get('eager_ms'), km)}) | torch.compile {p.get('compile_ms')} ms "
              f"(baseline {ratio(p.get('compile_ms'), km)}) {p.get('eager_error', '')}{p.get('compile_error', '')}",
              flush=True)
        if k["outcome"] != "pass":
            bad += 1
            print("  ", k.get("message") or k.get("stderr", ""), flush=True)
    with open(os.path.join(a.out, "backward_vs_torch.json"), "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}, f, indent=1)
    print(f"BWD_VS_TORCH_DONE {len(tasks) - bad}/{len(tasks)} baselines pass")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
