#!/usr/bin/env python3
"""One line of bench/agent_episode.sh from a run's events (kevo evolve --events jsonl FILE):
candidates/min over the search, the evaluators' occupancy and NVML's GPU utilization (the
"finished" event), the wall time of the in-episode evaluate and profile calls, waiting for the pool
included (median, p95, max: the "episode" events), and what speculative evaluation did (the
"speculation" event: started, used with the verdict ready or still running, wasted, never started,
and the slot seconds of the wasted ones). Stdlib only.
  bench/agent_episode_summary.py EVENTS.JSONL LABEL
"""
import json
import statistics
import sys


def read(path):
    fin, spec, secs, episodes = None, None, [], 0
    for line in open(path):
        try:
            j = json.loads(line)
        except ValueError:
            continue
        kind = j.get("kind")
        if kind == "finished":
            fin = j
        elif kind == "speculation":
            spec = j
        elif kind == "episode":
            episodes += 1
            for t in j.get("turns", []):
                for c in t.get("calls", []):
                    if c.get("tool") in ("evaluate", "profile") and not c.get("error") and "seconds" in c:
                        secs.append(c["seconds"])
    return fin, spec, sorted(secs), episodes


def main():
    try:
        fin, spec, secs, episodes = read(sys.argv[1])
    except OSError as e:
        print(f"AGENT {sys.argv[2]}: no events ({e})")
        return 1
    if fin is None:
        print(f"AGENT {sys.argv[2]}: no finished event")
        return 1
    n, s = fin.get("search_candidates", 0), fin.get("search_s", 0.0)
    util = fin.get("search_gpu_util_nvml")
    out = (f"AGENT {sys.argv[2]}: {n * 60.0 / s if s > 0 else 0:.1f} candidates/min ({n} in {s:.1f} s), evaluators "
           f"busy {100 * fin.get('search_evaluators_busy', 0):.0f}%, GPU util "
           f"{'n/a' if util is None else f'{100 * util:.0f}%'} (NVML), {episodes} episode(s)")
    if secs:
        p95 = secs[min(len(secs) - 1, int(round(0.95 * (len(secs) - 1))))]
        out += (f"; in-episode evaluate: {len(secs)} calls, median {statistics.median(secs):.2f} s, "
                f"p95 {p95:.2f} s, max {secs[-1]:.2f} s")
    if spec is None:
        out += "; speculation: not reported"
    elif not spec.get("enabled"):
        out += "; speculation: off"
    else:
        out += (f"; speculative: {spec['started']} started, {spec['used']} used ({spec['used_ready']} ready, "
                f"{spec['used_running']} still running), {spec['wasted']} wasted "
                f"({spec['wasted_gpu_s']:.1f} slot-s), {spec['dropped']} never started")
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
