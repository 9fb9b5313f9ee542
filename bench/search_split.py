#!/usr/bin/env python3
"""Where a search's candidates spent their evaluation: per phase and per work item of the stored
verdicts (kevo's run database, SQLite), the median, the 90th percentile and the sum over the run.
   bench/search_split.py RUN.db [RUN_ID]"""
import json
import os
import sqlite3
import statistics
import sys


def die(msg):
    print(f"search_split: {msg}", file=sys.stderr)
    sys.exit(2)


def open_run(argv):
    """The database (read-only) and the run asked for, or the newest; a clear error otherwise."""
    if len(argv) < 2 or len(argv) > 3:
        die("usage: bench/search_split.py RUN.db [RUN_ID]")
    if not os.path.isfile(argv[1]):
        die(f"{argv[1]}: no such run database")
    try:
        db = sqlite3.connect(f"file:{argv[1]}?mode=ro", uri=True)
        newest = db.execute("SELECT max(id) FROM runs").fetchone()[0]
    except sqlite3.Error as e:
        die(f"{argv[1]}: not a kevo run database ({e})")
    try:
        run = int(argv[2]) if len(argv) > 2 else newest
    except ValueError:
        die(f"RUN_ID '{argv[2]}' is not a number")
    if run is None or db.execute("SELECT 1 FROM runs WHERE id = ?", (run,)).fetchone() is None:
        die(f"{argv[1]}: no run {run if run is not None else '(the database has none)'}")
    return db, run


def main():
    db, run = open_run(sys.argv)
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
