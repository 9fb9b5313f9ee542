#!/usr/bin/env python3
"""A scripted OpenAI-compatible chat-completions server for GPU benchmark runs without an LLM.

`kevo bench --model http://127.0.0.1:PORT/v1#scripted` against it exercises the whole pipeline
(prompts, parsing, compile, checker, timing, selection, re-verification) with real kernels. Each
task gets a fixed rotation of answers, by the n-th request naming that task ("Task: NAME"):

  - for a task imported from bench/kernelbench/: first the matching bundled baseline (a correct
    translation); for a bundled task: first a known faster kernel from tests/gpu/kernels/good/,
    if there is one
  - a kernel that writes nothing (the checker must reject it: unwritten outputs)
  - a kernel that does not compile (an undeclared identifier)
  - (imported tasks) the known faster kernel, if there is one
  - then the baseline with its `// kevo: tune` constants set to each other combination in turn
    (or the good kernel again with a distinct tag when there are none)

With `--distinct` (bench/throughput.sh) every answer is instead a correct kernel no earlier answer
for the task repeats, so each is compiled, checked and timed: the known faster kernels and the
baseline's `// kevo: tune` variants (and the baseline) in turn, each with a constant of its own
(`constexpr int kDistinctAnswer = N;`), which survives kevo's fingerprint (comments and whitespace
do not). `--latency-s S` holds every answer back S seconds, as a remote model would; requests are
answered concurrently (a thread each), so N requests in flight take S seconds, not N x S.

With --tools, a request that offers tools (kevo's tool-using episodes, `--mutator agent`) is
answered with tool calls in OpenAI's chat-completions form, by the turn the conversation is at (the
assistant messages it holds): `task`, `compile` of a kernel that does not build, `evaluate` of one
that writes nothing (a mismatch), then `--episode-evals` correct kernels (the rotation above, or
--distinct's), then `submit` of the last one.

Usage: scripted_llm.py [--port N] [--root REPO] [--latency-s S] [--distinct [--first-answer K]]
[--tools [--episode-evals E]]; prints "PORT N" once listening. Stdlib only.
"""
import argparse
import http.server
import itertools
import json
import pathlib
import re
import sys
import threading
import time

GOOD = {  # task -> kernels in tests/gpu/kernels/good known to be faster than the baseline
    "gelu": ["gelu_float4.cu"],
    "softmax": ["softmax_online.cu"],
    "transpose": ["transpose_smem.cu"],
    "matmul_bf16": ["matmul_bf16_wmma.cu"],
    "matmul_f32": ["matmul_f32_regtile.cu"],
    "layernorm": ["layernorm_welford.cu"],
    "prefix_sum": ["prefix_sum_warp.cu"],
    "row_sum": ["row_sum_warp.cu"],
}

# Tasks imported from bench/kernelbench/*.py -> the bundled task whose baseline computes the same
# thing with the same ABI layout (its baseline is the scripted "translation").
IMPORTED = {"gelu_kb": "gelu", "relu_kb": "relu", "softmax_kb": "softmax", "rowsum_kb": "row_sum",
            "matmul_kb": "matmul_f32"}

NOOP = """#include <kevo/kernel.h>
// Returns at once: every output stays as the checker poisoned it.
KEVO_EXPORT int kevo_forward(const kevo_args* a) { (void)a; return 0; }
"""

BROKEN = """#include <kevo/kernel.h>
KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  launch_fast_kernel(a);  // never declared
  return 0;
}
"""

ANNOT = re.compile(r"//\s*kevo:\s*tune\s+(\w+)\s+in\s*\{([^}]*)\}")


def tune_variants(src):
    """The baseline with each combination of its `// kevo: tune` values except its own."""
    lines = src.split("\n")
    found = []  # (line index, name, current value, values, regex of the definition)
    for i, line in enumerate(lines):
        a = ANNOT.search(line)
        if not a:
            continue
        name, values = a.group(1), [v.strip() for v in a.group(2).split(",") if v.strip()]
        d = re.compile(r"\b" + name + r"\b(\s*=\s*|\s+)([^\s;,)]+)")
        m = d.search(line[: a.start()])
        if m:
            found.append((i, name, m.group(2), values, d))
    out = []
    for combo in itertools.product(*[f[3] for f in found]):
        if all(c == f[2] for f, c in zip(found, combo)):
            continue
        new = list(lines)
        for (i, name, cur, values, d), c in zip(found, combo):
            a = ANNOT.search(new[i])
            code = d.sub(lambda m: name + m.group(1) + c, new[i][: a.start()], count=1)
            new[i] = code + new[i][a.start():]
        out.append(({f[1]: c for f, c in zip(found, combo)}, "\n".join(new)))
    return out


class Script:
    def __init__(self, root, distinct=False, first_answer=0):
        self.root = pathlib.Path(root)
        self.distinct = distinct
        self.first_answer = first_answer
        self.count = {}
        self.lock = threading.Lock()

    def answer(self, prompt):
        m = re.search(r"Task: (\w+)", prompt)
        task = m.group(1) if m else "unknown"
        with self.lock:
            n = self.count.get(task, 0)
            self.count[task] = n + 1
        bundled = IMPORTED.get(task, task)
        base_file = self.root / "tasks" / bundled / "baseline.cu"
        base = base_file.read_text() if base_file.exists() else NOOP
        good = [(self.root / "tests/gpu/kernels/good" / g).read_text() for g in GOOD.get(bundled, [])]
        variants = tune_variants(base)
        if self.distinct:
            return self.distinct_answer(n, self.first_answer + n, base, good, variants)
        # A fixed rotation first, then the baseline's tuning variants in turn.
        rot = []
        if task in IMPORTED:
            rot.append(("translation", "the direct CUDA form of the reference", base))
        elif good:
            rot.append(("good", "a known faster kernel", good[0]))
        rot.append(("noop", "skip the work entirely", NOOP))
        rot.append(("broken", "call a helper kernel", BROKEN))
        if task in IMPORTED and good:
            rot.append(("good", "a known faster kernel", good[0]))
        if n < len(rot):
            return rot[n]
        idx = n - len(rot)
        if variants:
            assign, text = variants[idx % len(variants)]
            label = " ".join(f"{a}={b}" for a, b in assign.items())
            return f"tuned_{idx}", f"launch shape {label}", text
        src = good[0] if good else base
        return f"again_{n}", "the same idea, restated", src + f"\nconstexpr int kScriptedAnswer = {n};\n"

    @staticmethod
    def distinct_answer(n, number, base, good, variants):
        """The n-th correct kernel, unlike every earlier one (its own constant, `number`)."""
        pool = [("good", "a known faster kernel", g) for g in good]
        for assign, text in variants:
            label = " ".join(f"{a}={b}" for a, b in assign.items())
            pool.append(("tuned", f"launch shape {label}", text))
        pool.append(("baseline", "the baseline as it is", base))
        name, thought, src = pool[n % len(pool)]
        return f"{name}_{number}", thought, src + f"\nconstexpr int kDistinctAnswer = {number};\n"


def tool_turn(script, body, evals):
    """The tool calls of a scripted episode's next turn, and a name for it."""
    msgs = body.get("messages", [])
    k = sum(1 for m in msgs if m.get("role") == "assistant")
    prompt = "\n".join(str(m.get("content") or "") for m in msgs if m.get("role") in ("system", "user"))
    if k == 0:
        return "task", {}
    if k == 1:
        return "compile", {"source": BROKEN}
    if k == 2:
        return "evaluate", {"source": NOOP, "name": "noop", "idea": "skip the work (must be caught)"}
    if k < 3 + evals:
        name, thought, code = script.answer(prompt)
        return "evaluate", {"source": code, "name": name, "idea": thought}
    last = NOOP  # the conversation's own last evaluated kernel, as its assistant turns hold it
    for m in msgs:
        for c in m.get("tool_calls") or []:
            if c.get("function", {}).get("name") == "evaluate":
                last = json.loads(c["function"].get("arguments") or "{}").get("source", last)
    return "submit", {"source": last}


class Handler(http.server.BaseHTTPRequestHandler):
    script = None
    latency_s = 0.0
    tools = False
    episode_evals = 3

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
        else:
            self._json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        try:
            body = json.loads(self.rfile.read(n) or b"{}")
        except json.JSONDecodeError:
            self._json(400, {"error": {"message": "malformed JSON", "type": "invalid_request_error"}})
            return
        if self.tools and body.get("tools"):
            self._tool_answer(body)
            return
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        name, thought, code = self.script.answer(prompt)
        if self.latency_s > 0:
            time.sleep(self.latency_s)  # this request's thread only: others are answered meanwhile
        text = f"NAME: {name}\nTHOUGHT: {thought}\n\n```cuda\n{code}```\n"
        self._json(200, {
            "id": "chatcmpl-scripted", "object": "chat.completion", "created": 0,
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": len(text) // 4,
                      "total_tokens": (len(prompt) + len(text)) // 4},
        })

    def _tool_answer(self, body):
        tool, args = tool_turn(self.script, body, self.episode_evals)
        if self.latency_s > 0:
            time.sleep(self.latency_s)
        k = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        call = {"id": f"call_s{k}", "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}}
        size = len(json.dumps(body)) // 4
        self._json(200, {
            "id": "chatcmpl-scripted", "object": "chat.completion", "created": 0,
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                         "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": size, "completion_tokens": 40, "total_tokens": size + 40},
        })

    def _json(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--root", default=".")
    ap.add_argument("--latency-s", type=float, default=0.0, help="seconds before each answer")
    ap.add_argument("--distinct", action="store_true", help="every answer a correct kernel of its own")
    ap.add_argument("--first-answer", type=int, default=0,
                    help="--distinct: number answers from here (servers of several runs sharing a compile "
                         "cache give each a range of its own, so no answer is a cache hit)")
    ap.add_argument("--tools", action="store_true", help="answer requests that offer tools with tool calls")
    ap.add_argument("--episode-evals", type=int, default=3, help="--tools: correct kernels evaluated per episode")
    a = ap.parse_args()
    Handler.script = Script(a.root, a.distinct, a.first_answer)
    Handler.latency_s = a.latency_s
    Handler.tools = a.tools
    Handler.episode_evals = a.episode_evals
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True  # a request still sleeping does not hold the server's exit
    print(f"PORT {srv.server_address[1]}", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
