#!/usr/bin/env python3
"""bench/scripted_llm.py for bench/agent_episode.sh, with one more way to script an episode.

--compile-first: the episode compiles every kernel before it evaluates it, as a careful agent does
(task, compile of a kernel that does not build, then for the kernel that writes nothing and each
of --episode-evals correct kernels: compile it, evaluate it; then submit the last). That is the
pattern kevo's speculative evaluation serves: a clean compile starts the kernel's evaluation while
the model writes its next turn. Without it, the episodes are scripted_llm.py's.
Every other argument is scripted_llm.py's. Stdlib only.
"""
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import scripted_llm  # noqa: E402

plain_tool_turn = scripted_llm.tool_turn


def last_call_source(msgs, tool):
    """The source of the conversation's last `tool` call, as its assistant turns hold it."""
    src = None
    for m in msgs:
        for c in m.get("tool_calls") or []:
            if c.get("function", {}).get("name") == tool:
                src = json.loads(c["function"].get("arguments") or "{}").get("source", src)
    return src


def compile_first_turn(script, body, evals):
    msgs = body.get("messages", [])
    k = sum(1 for m in msgs if m.get("role") == "assistant")
    prompt = "\n".join(str(m.get("content") or "") for m in msgs if m.get("role") in ("system", "user"))
    if k == 0:
        return "task", {}
    if k == 1:
        return "compile", {"source": scripted_llm.BROKEN}
    if k == 2:
        return "compile", {"source": scripted_llm.NOOP}
    if k == 3:
        return "evaluate", {"source": scripted_llm.NOOP, "name": "noop", "idea": "skip the work (must be caught)"}
    if k < 4 + 2 * evals:
        if k % 2 == 0:  # compile a new kernel
            _, _, code = script.answer(prompt)
            return "compile", {"source": code}
        return "evaluate", {"source": last_call_source(msgs, "compile"), "name": f"kernel {k // 2 - 1}"}
    return "submit", {"source": last_call_source(msgs, "evaluate")}


def main():
    args = sys.argv[1:]
    if "--compile-first" in args:
        args.remove("--compile-first")
        scripted_llm.tool_turn = compile_first_turn
    sys.argv = [sys.argv[0]] + args
    return scripted_llm.main()


if __name__ == "__main__":
    sys.exit(main())
