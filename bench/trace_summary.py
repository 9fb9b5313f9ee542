#!/usr/bin/env python3
"""Where runner calls spend their time, from KEVO_TRACE_CALLS=1 stderr (run/runner_client.cpp):
lines "kevo-trace <pid> <cmd> <ms> [{runner's own account: handler_ms, alloc_ms/allocs, free_ms/frees,
export_ms/exports, open_ms/opens, close_ms/closes}]". Prints, per request kind, the calls, their
round trips and what the runners say the driver calls inside took; then the slowest calls.

    bench/trace_summary.py LOG [LOG...] [--top N]
"""
import json
import re
import sys
from collections import defaultdict

PARTS = ["handler", "alloc", "free", "export", "open", "close"]


def calls(paths):
    for path in paths:
        for line in open(path, errors="replace"):
            m = re.match(r"kevo-trace (\d+) (\S+) ([0-9.]+)(?: (\{.*\}))?\s*$", line)
            if not m:
                continue
            inside = json.loads(m[4]) if m[4] else {}
            yield {"pid": int(m[1]), "cmd": m[2], "ms": float(m[3]), "inside": inside, "file": path}


def main(argv):
    top = 10
    if "--top" in argv:
        i = argv.index("--top")
        top = int(argv[i + 1])
        del argv[i:i + 2]
    if not argv:
        sys.exit(__doc__)
    rows = list(calls(argv))
    if not rows:
        sys.exit("no kevo-trace lines (was KEVO_TRACE_CALLS=1 set?)")
    by = defaultdict(lambda: defaultdict(float))
    for r in rows:
        s = by[r["cmd"]]
        s["calls"] += 1
        s["round_trip"] += r["ms"]
        for p in PARTS:
            s[p] += r["inside"].get(p + "_ms", 0.0)
    print(f"{'request':<12}{'calls':>7}{'round trip ms':>15}" + "".join(f"{p + ' ms':>12}" for p in PARTS))
    for cmd, s in sorted(by.items(), key=lambda kv: -kv[1]["round_trip"]):
        print(f"{cmd:<12}{int(s['calls']):>7}{s['round_trip']:>15.1f}" + "".join(f"{s[p]:>12.1f}" for p in PARTS))
    print(f"\nslowest {top} calls:")
    for r in sorted(rows, key=lambda r: -r["ms"])[:top]:
        inside = ", ".join(f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}" for k, v in r["inside"].items())
        print(f"  {r['ms']:8.1f} ms  {r['cmd']:<10} pid {r['pid']}  {inside}")


if __name__ == "__main__":
    main(sys.argv[1:])
