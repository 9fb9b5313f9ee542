#!/usr/bin/env python3
"""Sorts a timer's batches (bench/context_interference.cu) by what overlapped them: a context being
made ("C" windows), a process with a context ending ("E"), or neither while the churn ran ("quiet").
Prints per class: batches, the median of the per-call event times, and the batch walls' median,
95th percentile and maximum, with the shift of each median from the quiet class's.
  bench/context_interference.py timer.txt churn.txt [more churn files...]"""
import sys


def read(path, kinds):
    out = []
    for line in open(path):
        f = line.split()
        if f and f[0] in kinds:
            out.append((f[0], int(f[1]), int(f[2]), float(f[3]) if len(f) > 3 else 0.0))
    return out


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * (len(xs) - 1) + 0.5))] if xs else float("nan")


def main():
    batches = read(sys.argv[1], {"B"})
    windows = [w for p in sys.argv[2:] for w in read(p, {"C", "E"})]
    if not batches or not windows:
        sys.exit("context_interference: no batches or no windows")
    lo, hi = min(w[1] for w in windows), max(w[2] for w in windows)
    classes = {"quiet": [], "C": [], "E": []}
    for _, t0, t1, ev in batches:
        if t1 < lo or t0 > hi:
            continue
        hit = [w[0] for w in windows if w[1] < t1 and w[2] > t0]
        cls = "E" if "E" in hit else "C" if "C" in hit else "quiet"
        classes[cls].append((ev, (t1 - t0) / 1e6))
    for k in ("C", "E"):
        ws = [(w[2] - w[1]) / 1e6 for w in windows if w[0] == k]
        print(f"{k} windows: {len(ws)}, median {pct(ws, 0.5):.1f} ms, max {max(ws):.1f} ms")
    q = classes["quiet"]
    qe, qw = pct([e for e, _ in q], 0.5), pct([w for _, w in q], 0.5)
    names = {"quiet": "no window", "C": "a context being made", "E": "a context ending"}
    for k, v in classes.items():
        if not v:
            print(f"{names[k]:>22}: no batches")
            continue
        e, w = [x for x, _ in v], [x for _, x in v]
        print(f"{names[k]:>22}: {len(v):5d} batches, events median {pct(e, 0.5):.4f} ms ({(pct(e, 0.5) / qe - 1) * 100:+.2f}%),"
              f" p95 {pct(e, 0.95):.4f}; wall median {pct(w, 0.5):.3f} ms ({(pct(w, 0.5) / qw - 1) * 100:+.2f}%),"
              f" p95 {pct(w, 0.95):.3f}, max {max(w):.3f}")


main()
