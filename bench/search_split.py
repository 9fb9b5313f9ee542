#!/usr/bin/env python3
"""Where a search's candidates spent their evaluation: per phase and per work item of the stored
verdicts (kevo's run database, SQLite), the median, the 90th percentile and the sum over the run.
   bench/search_split.py RUN.db [RUN_ID]"""
import json
import sqlite3
import statistics
import sys


def main():
    db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
    run = int(sys.argv[2]) if len(sys.argv) > 2 else db.execute("SELECT max(id) FROM runs").fetchone()[0]
    rows = db.execute("SELECT verdict FROM candidates WHERE run_id = ? AND verdict != ''", (run,)).fetchall()
    items = {}
    for (text,) in rows:
        try:
            v = json.loads(text)
        except ValueError:
            continue
        for group in ("phases", "work_seconds"):
            for k, s in (v.get(group) or {}).items():
                items.setdefault(f"{group[:5]}.{k}", []).append(float(s))
        if "seconds" in v:
            items.setdefault("verdict", []).append(float(v["seconds"]))
    print(f"run {run}: {len(rows)} verdicts")
    for k in sorted(items):
        xs = sorted(items[k])
        p90 = xs[min(len(xs) - 1, int(0.9 * len(xs)))]
        print(f"  {k:28s} n {len(xs):3d}  median {statistics.median(xs):.3f}  p90 {p90:.3f}  sum {sum(xs):.2f} s")


if __name__ == "__main__":
    main()
