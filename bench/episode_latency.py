#!/usr/bin/env python3
"""The tool calls of a run's agent episodes, from its run database (the "episode" events): how many
episodes and calls, and the wall time of the in-episode evaluate and profile calls (waiting for
the evaluation pool included): median, p95, max. Stdlib only.
  bench/episode_latency.py RUNS.DB [RUN]
"""
import json
import sqlite3
import statistics
import sys


def main():
    db = sqlite3.connect(sys.argv[1])
    run = int(sys.argv[2]) if len(sys.argv) > 2 else db.execute("select max(id) from runs").fetchone()[0]
    episodes, calls, secs, ends = 0, 0, [], {}
    for (data,) in db.execute("select data from events where run_id = ? and kind = 'episode'", (run,)):
        e = json.loads(data)
        episodes += 1
        ends[e.get("end", "?")] = ends.get(e.get("end", "?"), 0) + 1
        for t in e.get("turns", []):
            for c in t.get("calls", []):
                calls += 1
                if c.get("tool") in ("evaluate", "profile") and not c.get("error") and "seconds" in c:
                    secs.append(c["seconds"])
    if not secs:
        print(f"EPISODES run {run}: {episodes} episode(s), {calls} call(s), no evaluation timed")
        return 0
    secs.sort()
    p95 = secs[min(len(secs) - 1, int(round(0.95 * (len(secs) - 1))))]
    print(f"EPISODES run {run}: {episodes} episode(s) (ended: {ends}), {calls} tool call(s); in-episode "
          f"evaluate: {len(secs)} calls, median {statistics.median(secs):.3f} s, p95 {p95:.3f} s, max {secs[-1]:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
