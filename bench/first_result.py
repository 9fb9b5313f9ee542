#!/usr/bin/env python3
"""The first result as a new user sees it (issue 16): `kevo evolve TASK` with no model, run twice
with a fresh compile cache and no runner pool; per run the wall time, the time from the start to
the first candidate's verdict (its event), the peak RSS of kevo and its children, and whether the
baseline was checked or reused.
   bench/first_result.py BUILD_DIR OUT_DIR [TASK]   (on the GPU machine)"""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time


def one(kevo, out, task, label, env):
    db, events = os.path.join(out, f"{label}.db"), os.path.join(out, f"{label}.events.jsonl")
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.time()
    with open(os.path.join(out, f"{label}.log"), "w") as log:
        rc = subprocess.call([kevo, "evolve", task, "--db", db, "--events", "jsonl", events, "--quiet"],
                             stdout=log, stderr=subprocess.STDOUT, env=env)
    wall = time.time() - t0
    # ru_maxrss of children is the largest child so far: meaningful when this run's is the largest.
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    ev = [json.loads(line) for line in open(events)] if os.path.exists(events) else []
    first = next((e["t"] - t0 for e in ev if e.get("kind") == "candidate"), None)
    reused = any(e.get("kind") == "baseline_reused" for e in ev)
    best = [e for e in ev if e.get("kind") == "new_best"]
    print(f"FIRST_RESULT {label}: exit {rc}, wall {wall:.2f} s, first verdict "
          + (f"{first:.2f} s" if first is not None else "none")
          + f", peak RSS {rss / 1024:.0f} MB{' (or an earlier run)' if rss == before else ''}"
          + f", baseline {'reused' if reused else 'checked'}, candidates {sum(e.get('kind') == 'candidate' for e in ev)}"
          + (f", best {best[-1]['speedup']:.3f}x" if best else ""))


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: bench/first_result.py BUILD_DIR OUT_DIR [TASK]")
    build, out = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
    task = sys.argv[3] if len(sys.argv) > 3 else "softmax"
    for exe in ("kevo", "kevo-runner"):
        if not os.access(f"{build}/bin/{exe}", os.X_OK):
            sys.exit(f"first_result: {build}/bin/{exe} is not built")
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ, KEVO_RUNNER_POOL="off", KEVO_RUNNER=f"{build}/bin/kevo-runner",
               LD_LIBRARY_PATH=f"{build}/lib:" + os.environ.get("LD_LIBRARY_PATH", ""),
               PATH="/usr/local/cuda/bin:" + os.environ.get("PATH", ""))
    with tempfile.TemporaryDirectory() as cache:
        env["KEVO_CACHE_DIR"] = cache
        for label in ("first", "second"):
            one(f"{build}/bin/kevo", out, task, label, env)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # kevo, in the same process group, got it too and stopped its run
        sys.exit(130)
