#!/usr/bin/env python3
"""Training through an exported forward+backward pair, against plain PyTorch, on the GPU (issue 21).

DIR is the output of
  kevo export-torch linear FWD.cu DIR --backward linear_backward --backward-kernel BWD.cu
(the bundled tasks/linear and tasks/linear_backward; f32 only, so torch.autograd.gradcheck, which
needs float64, cannot run on these kernels), or with --relu of
  kevo export-torch gemm_bias_relu FWD.cu DIR --backward gemm_bias_relu_backward --backward-kernel BWD.cu
(y = relu(x W^T + b); the forward saves its output y for the backward, `saved_outputs`). Two checks:
  1. gradients: KevoFunction (both kevo kernels) against autograd of F.linear at 6 seeds and ragged
     shapes, within the tasks' tolerance (atol 1e-4 scaled by the gradient's RMS, rtol 1e-4, the
     looser of the two tasks' f32 tolerances, as test_autograd.py uses);
  2. training (with --relu, the hidden layers are the fused layer; the last one F.linear): the same 3-layer MLP (100 -> 300 -> 200 -> 10, ReLU, cross-entropy, SGD with
     momentum 0.9, lr 0.05, batch 64, 200 steps on a fixed synthetic classification set) twice from
     the same initial weights: once with F.linear, once with every layer through KevoFunction. The
     loss curves must agree within a relative 1e-3 at every step (f32 summation order differs, and
     the difference compounds over steps, so this is looser than one call's tolerance).
TF32 is off on PyTorch's side (the tasks ask for f32 accuracy).
  python3 bench/train_pair.py DIR [--relu] [--steps 200] [--json OUT.json]
Prints GRAD_CHECK and TRAIN lines; exit 0 when both pass.
"""
import argparse
import json
import os
import sys

import torch
import torch.nn.functional as F


def kevo_linear(autograd):
    return lambda x, W, b: autograd.KevoFunction.apply(None, x, W, b)


def linear_relu(x, W, b):
    return torch.relu(F.linear(x, W, b))


def grad_check(lin, ref, seeds=6):
    shapes = [(5, 7, 3), (64, 100, 300), (33, 17, 129), (1000, 1001, 999), (2, 1, 1), (257, 64, 255)]
    worst, bad = 0.0, 0
    for s in range(seeds):
        M, N, K = shapes[s % len(shapes)]
        g = torch.Generator(device="cuda").manual_seed(100 + s)
        x = torch.randn(M, K, device="cuda", generator=g)
        W = torch.randn(N, K, device="cuda", generator=g) * 0.05
        b = torch.randn(N, device="cuda", generator=g)
        dy = torch.randn(M, N, device="cuda", generator=g)
        got, want = [], []
        for f, sink in ((lin, got), (ref, want)):
            leaves = [t.clone().requires_grad_(True) for t in (x, W, b)]
            y = f(*leaves)
            if not torch.is_tensor(y):  # a one-output layer must return a tensor, as F.linear does
                print(f"GRAD_CHECK FAIL the pair returned {type(y).__name__}, not a tensor")
                return False
            sink.append(y.detach())
            sink.extend(torch.autograd.grad(y, leaves, dy))
        for name, a, w in zip(("y", "dx", "dW", "db"), got, want):
            scale = max(1.0, w.pow(2).mean().sqrt().item())
            err = ((a - w).abs() - 1e-4 * w.abs()).max().item() / scale
            worst = max(worst, err)
            if a.shape != w.shape or not torch.allclose(a, w, atol=1e-4 * scale, rtol=1e-4):
                bad += 1
                print(f"GRAD_CHECK FAIL seed {s} shape M={M} N={N} K={K} {name}: max excess {err:.3g}")
    print(f"GRAD_CHECK {'PASS' if not bad else 'FAIL'} {seeds} seeds, ragged shapes, outputs y dx dW db; "
          f"worst |got-want| - rtol*|want| over atol-scale: {worst:.3g} (pass < 1e-4)")
    return bad == 0


def make_data(n=2048, d_in=100, classes=10):
    g = torch.Generator(device="cuda").manual_seed(7)
    X = torch.randn(n, d_in, device="cuda", generator=g)
    T = torch.randn(d_in, classes, device="cuda", generator=g)
    return X, (torch.tanh(X @ T) + 0.1 * torch.randn(n, classes, device="cuda", generator=g)).argmax(1)


def init_params(sizes):
    g = torch.Generator(device="cuda").manual_seed(11)
    ps = []
    for i, o in zip(sizes, sizes[1:]):
        bound = 1.0 / i ** 0.5
        ps.append((torch.rand(o, i, device="cuda", generator=g) * 2 - 1) * bound)
        ps.append((torch.rand(o, device="cuda", generator=g) * 2 - 1) * bound)
    return ps


def train(lin, params, X, Y, steps, fused_relu=False, batch=64, lr=0.05):
    ps = [p.clone().requires_grad_(True) for p in params]
    opt = torch.optim.SGD(ps, lr=lr, momentum=0.9)
    losses = []
    for step in range(steps):
        idx = (torch.arange(batch, device="cuda") * 37 + step * batch) % X.shape[0]
        h = X[idx]
        for i in range(0, len(ps), 2):
            last = i + 2 >= len(ps)
            if fused_relu:  # lin is a linear layer with its ReLU; the output layer has none
                h = F.linear(h, ps[i], ps[i + 1]) if last else lin(h, ps[i], ps[i + 1])
                continue
            h = lin(h, ps[i], ps[i + 1])
            if not last:
                h = torch.relu(h)
        loss = F.cross_entropy(h, Y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, ps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--relu", action="store_true", help="DIR holds the gemm_bias_relu pair")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--json")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("SKIP: the kernels need CUDA")
        return 0
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    sys.path.insert(0, os.path.abspath(a.dir))
    import autograd  # the exported pair

    if not (autograd.FORWARD_KERNEL and autograd.BACKWARD_KERNEL):
        print("FAIL: the pair must have both kernels (the docstring says which side falls back)")
        return 1
    lin = kevo_linear(autograd)
    plain = linear_relu if a.relu else F.linear
    ok = grad_check(lin, plain)
    X, Y = make_data()
    params = init_params([100, 300, 200, 10])
    ref, ref_ps = train(plain, params, X, Y, a.steps, a.relu)
    got, got_ps = train(lin, params, X, Y, a.steps, a.relu)
    rel = [abs(g - r) / max(abs(r), 1e-6) for g, r in zip(got, ref)]
    worst = max(range(len(rel)), key=rel.__getitem__)
    pdev = max(((p - q).abs().max() / q.abs().max().clamp_min(1e-6)).item() for p, q in zip(got_ps, ref_ps))
    train_ok = rel[worst] <= 1e-3
    print(f"TRAIN {'PASS' if train_ok else 'FAIL'} {a.steps} steps: loss {ref[0]:.4f} -> {ref[-1]:.4f} (PyTorch), "
          f"{got[0]:.4f} -> {got[-1]:.4f} (kevo pair); max relative loss deviation {rel[worst]:.2e} at step "
          f"{worst} (tolerance 1e-3); final weights max relative deviation {pdev:.2e}")
    for s in (0, 1, 9, 49, 99, 149, a.steps - 1):
        if s < len(ref):
            print(f"TRAIN_CURVE step {s + 1} pytorch {ref[s]:.6f} kevo {got[s]:.6f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "pytorch": ref, "kevo": got,
                       "max_rel_deviation": rel[worst], "final_weight_rel_deviation": pdev}, f)
    return 0 if ok and train_ok else 1


if __name__ == "__main__":
    sys.exit(main())
