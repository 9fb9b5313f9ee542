#!/usr/bin/env python3
"""Drives `kevo mcp TASK` over stdio with real kernels (for the GPU machine, which has no Node):
initialize, task, compile, evaluate a kernel file, profile it, submit it; prints each call's
wall time and the verdict lines, and exits non-zero when a step did not answer as expected.
  scripts/mcp-smoke.py KEVO_BIN TASK KERNEL.cu DB [extra kevo mcp args...]
"""
import json
import subprocess
import sys
import time


def main():
    kevo, task, kernel, db = sys.argv[1:5]
    extra = sys.argv[5:]
    source = open(kernel).read()
    p = subprocess.Popen([kevo, "mcp", task, "--db", db, *extra], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True, bufsize=1)
    ids = iter(range(1, 1000))

    def rpc(method, params=None, notify=False):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        if not notify:
            msg["id"] = next(ids)
        p.stdin.write(json.dumps(msg) + "\n")
        p.stdin.flush()
        if notify:
            return None
        line = p.stdout.readline()
        if not line:
            sys.exit(f"kevo mcp closed its stdout during {method}")
        return json.loads(line)

    def tool(name, args):
        t = time.monotonic()
        r = rpc("tools/call", {"name": name, "arguments": args})
        dt = time.monotonic() - t
        res = r.get("result", {})
        text = "\n".join(c.get("text", "") for c in res.get("content", []))
        print(f"== {name}: {dt:.2f} s, isError={res.get('isError')}\n{text[:1500]}")
        return res, dt

    init = rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "mcp-smoke", "version": "1"}})
    print("server:", init["result"]["serverInfo"], init["result"]["protocolVersion"])
    rpc("notifications/initialized", notify=True)
    ok = True
    task_r, _ = tool("task", {})
    ok &= not task_r.get("isError")
    comp, _ = tool("compile", {"source": source})
    ok &= bool(comp.get("structuredContent", {}).get("ok"))
    ev, _ = tool("evaluate", {"source": source, "name": "smoke", "idea": "the kernel file given"})
    s = ev.get("structuredContent", {})
    ok &= s.get("outcome") == "pass"
    cand = s.get("candidate", 0)
    if cand:
        prof, _ = tool("profile", {"candidate": cand})
        sub, _ = tool("submit", {"candidate": cand})
        ok &= not sub.get("isError")
    bad, _ = tool("evaluate", {"source": source.replace("kevo_forward", "kevo_forward_x", 1), "name": "broken"})
    ok &= bad.get("structuredContent", {}).get("outcome") not in (None, "pass")
    p.stdin.close()
    p.wait(timeout=120)
    print("kevo mcp exit", p.returncode)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
