#!/usr/bin/env python3
"""examples/anthropic_toolset.py against a real container, side by side with
the reference (run by scripts/docker-test.sh).

The same calls go to the example's tools (as-edit inside CONTAINER, workspace
WORKDIR there, which must be empty) and to the reference's tools on a local
empty directory, through `BetaAsyncFunctionTool.call` as a tool runner
calls them; the texts a runner would send must be equal once WORKDIR is
written as the local directory's path (the status too: `is_error` <=> an
exception, content blocks <=> a list). Grep's lines are compared sorted (rg's
order is its threads'). Prints each call and exits 1 on the first that
differs.

Usage: anthropic-example-test.py --container C --workdir /work [--docker docker]
"""

from __future__ import annotations

import os
import sys
import json
import asyncio
import argparse
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

CALLS = [
    ("write", {"file_path": "a.txt", "content": "foo 1\nbar\r\nfoo 3"}),
    ("write", {"file_path": "sub/deep/b.py", "content": "def foo():\n    return 'é'\n"}),
    ("write", {"file_path": ".env", "content": "foo=hidden\n"}),
    ("write", {"file_path": "n.txt", "content": "x" * 10}),
    ("read", {"file_path": "a.txt"}),
    ("read", {"file_path": "a.txt", "view_range": [2, 3]}),
    ("read", {"file_path": "a.txt", "view_range": ["1", 1]}),
    ("read", {"file_path": "missing.txt"}),
    ("read", {"file_path": "../etc/passwd"}),
    ("read", {"file_path": "sub"}),
    ("read", {"file_path": "a.txt", "view_range": [1]}),
    ("read", {"file_path": "a.txt", "extra": 1}),
    ("edit", {"file_path": "a.txt", "old_string": "foo", "new_string": "baz"}),
    ("edit", {"file_path": "a.txt", "old_string": "foo", "new_string": "baz", "replace_all": "yes"}),
    ("edit", {"file_path": "a.txt", "old_string": "nothing", "new_string": "x"}),
    ("read", {"file_path": "a.txt"}),
    ("glob", {"pattern": "**/*.py"}),
    ("glob", {"pattern": "*"}),
    ("glob", {"pattern": "/etc/*"}),
    ("glob", {"pattern": "{a,b}*"}),
    ("grep", {"pattern": "baz|foo"}),
    ("grep", {"pattern": "re.urn", "path": "sub"}),
    ("grep", {"pattern": "bar", "path": "a.txt"}),
    ("grep", {"pattern": "a("}),
    ("grep", {"pattern": "nothing here"}),
    ("grep", {"pattern": "x", "path": "../outside"}),
    ("write", {"file_path": "i.png", "content": "not really"}),
    ("read", {"file_path": "i.png"}),
]


def runner_text(result) -> tuple[str, str]:
    from anthropic.lib.tools._tool_dispatch import tool_result_content

    content = tool_result_content(result)
    return ("blocks", json.dumps(list(content))) if not isinstance(content, str) else ("text", content)


async def one(tools, name: str, inp) -> tuple[str, str]:
    from anthropic.lib.tools._tool_dispatch import tool_error_content

    try:
        return runner_text(await tools[name].call(inp))
    except Exception as e:  # what a runner sends with is_error
        content = tool_error_content(e)
        return ("error", content if isinstance(content, str) else json.dumps(content))


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--container", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--docker", default="docker")
    args = ap.parse_args()

    from anthropic_toolset import AgentToolContext, beta_agent_toolset_20260401
    from anthropic.lib.tools import agent_toolset as ref

    ours = {t.name: t for t in beta_agent_toolset_20260401(
        AgentToolContext(container=args.container, workdir=args.workdir, docker=args.docker))}
    assert sorted(ours) == ["edit", "glob", "grep", "read", "write"], sorted(ours)
    with tempfile.TemporaryDirectory() as tmp:
        local = os.path.realpath(os.path.join(tmp, "work"))
        os.mkdir(local)
        theirs = {t.name: t for t in ref.beta_agent_toolset_20260401(ref.AgentToolContext(workdir=local))}
        for i, (name, inp) in enumerate(CALLS):
            a = await one(ours, name, inp)
            b = await one(theirs, name, inp)
            a = (a[0], a[1].replace(args.workdir.rstrip("/") + "/", local + "/"))
            if name == "grep":
                a, b = (a[0], sorted(a[1].split("\n"))), (b[0], sorted(b[1].split("\n")))
            same = a == b
            print(f"{'ok' if same else 'DIFFERS'}: {name} {json.dumps(inp)[:80]} -> {a[0]} {str(a[1])[:70]!r}")
            if not same:
                print(f"  as-edit:   {a!r}\n  reference: {b!r}")
                return 1
            # Later mtimes must differ as on the reference's side (glob is newest first).
            await asyncio.sleep(0.02)
    print(f"ok: examples/anthropic_toolset.py answers as the reference for {len(CALLS)} calls")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
