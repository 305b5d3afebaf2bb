"""Anthropic's `agent_toolset_20260401` file tools (read, write, edit, glob,
grep) run inside a container by as-edit, for the SDK's async tool runners.

The reference (`anthropic.lib.tools.agent_toolset`, PyPI `anthropic` 2.17.0)
works on the runner's own disk. These five tools have the reference's names,
input schemas and signatures (so the SDK validates the model's input exactly
as it does for the reference), and each body runs

    docker exec -i [-w WORKDIR] CONTAINER /opt/as-edit/as-edit --toolset agent_toolset_20260401

with `{"name": TOOL, "input": INPUT}` on stdin. as-edit prints the text the
reference returns for the same tree: exit 0 is the tool's text, exit 1 the
reference's error (raised here as `ToolError` with that text, so the runner
sends it with `is_error` as it sends the reference's), exit 3 an image or PDF
read's content blocks (JSON). Anything else (exit 2: a request as-edit cannot
take; 126/127: no helper in the container) raises `RuntimeError`.

Wiring, one import swapped (the helper copied into the image first, e.g.
`COPY --from=as-edit:latest /opt/as-edit/as-edit /opt/as-edit/as-edit`):

    # from anthropic.lib.tools.agent_toolset import AgentToolContext, beta_agent_toolset_20260401
    from anthropic_toolset import AgentToolContext, beta_agent_toolset_20260401
    tools = beta_agent_toolset_20260401(AgentToolContext(container="my-sandbox", workdir="/work"))
    runner = client.beta.messages.tool_runner(model=..., tools=tools, messages=...)

Unlike the reference's list, this one has no `bash` tool (run the model's
commands with `docker exec` yourself); the paths the tools print are the
container's.
"""

from __future__ import annotations

import json
from typing import Any, List, Optional
from dataclasses import dataclass

import anyio
from anthropic.lib.tools import ToolError, BetaAsyncFunctionTool, beta_async_tool
from anthropic.types.beta import (
    BetaManagedAgentsAgentToolset20260401EditInput,
    BetaManagedAgentsAgentToolset20260401GlobInput,
    BetaManagedAgentsAgentToolset20260401GrepInput,
    BetaManagedAgentsAgentToolset20260401ReadInput,
    BetaManagedAgentsAgentToolset20260401WriteInput,
)

__all__ = ["AgentToolContext", "beta_agent_toolset_20260401", "EXIT_BLOCKS"]

TOOLSET = "agent_toolset_20260401"
# as-edit's exit status for an image or PDF read: stdout is the JSON list of
# content blocks (a text read of a file holding such JSON is exit 0).
EXIT_BLOCKS = 3


@dataclass
class AgentToolContext:
    """Where the tools run.

    Attributes:
        container: the container's name or id, as `docker exec` takes it.
        workdir: the workspace inside the container (the tools' root; paths
            outside it are refused as the reference refuses them). `None`:
            the image's working directory.
        docker: the CLI to run (`docker`, or `podman`, whose `exec` is the same).
        helper: the path of as-edit inside the container.
    """

    container: str
    workdir: Optional[str] = None
    docker: str = "docker"
    helper: str = "/opt/as-edit/as-edit"


async def _call(ctx: AgentToolContext, name: str, inp: dict[str, Any]) -> Any:
    argv = [ctx.docker, "exec", "-i"]
    if ctx.workdir is not None:
        argv += ["-w", ctx.workdir]
    argv += [ctx.container, ctx.helper, "--toolset", TOOLSET]
    request = json.dumps({"name": name, "input": inp}).encode()
    done = await anyio.run_process(argv, input=request, check=False)
    text = done.stdout.decode("utf-8", errors="replace")
    if done.returncode == 0:
        return text
    if done.returncode == 1:
        raise ToolError(text)
    if done.returncode == EXIT_BLOCKS:
        return json.loads(text)
    why = text or done.stderr.decode("utf-8", errors="replace")
    raise RuntimeError(f"as-edit --toolset in {ctx.container}: exit {done.returncode}: {why.strip()}")


def _given(**kw: Any) -> dict[str, Any]:
    # The reference treats an absent optional field and null alike.
    return {k: v for k, v in kw.items() if v is not None}


def beta_agent_toolset_20260401(ctx: AgentToolContext) -> list[BetaAsyncFunctionTool[Any]]:
    """The five file tools of `agent_toolset_20260401`, run in `ctx.container`."""

    @beta_async_tool(name="read", input_schema=BetaManagedAgentsAgentToolset20260401ReadInput)
    async def read(file_path: str, view_range: Optional[List[int]] = None) -> Any:
        """Read a file rooted at the working directory."""
        return await _call(ctx, "read", _given(file_path=file_path, view_range=view_range))

    @beta_async_tool(name="write", input_schema=BetaManagedAgentsAgentToolset20260401WriteInput)
    async def write(file_path: str, content: str) -> str:
        """Write a file, creating parent directories as needed."""
        return await _call(ctx, "write", {"file_path": file_path, "content": content})

    @beta_async_tool(name="edit", input_schema=BetaManagedAgentsAgentToolset20260401EditInput)
    async def edit(file_path: str, old_string: str, new_string: str, replace_all: Optional[bool] = None) -> str:
        """Replace text in a file by exact string match."""
        inp = _given(file_path=file_path, old_string=old_string, new_string=new_string, replace_all=replace_all)
        return await _call(ctx, "edit", inp)

    @beta_async_tool(name="glob", input_schema=BetaManagedAgentsAgentToolset20260401GlobInput)
    async def glob(pattern: str, path: Optional[str] = None) -> str:
        """List files matching a glob pattern, newest first."""
        return await _call(ctx, "glob", _given(pattern=pattern, path=path))

    @beta_async_tool(name="grep", input_schema=BetaManagedAgentsAgentToolset20260401GrepInput)
    async def grep(pattern: str, path: Optional[str] = None) -> str:
        """Search file contents for a regular expression."""
        return await _call(ctx, "grep", _given(pattern=pattern, path=path))

    return [read, write, edit, glob, grep]
