"""Calling tools of `mdmem mcp` over stdio the way an agent's client does: one session, each call in turn."""

import asyncio

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from cli_process import command


def stdio_params(args: list[str], env: dict) -> StdioServerParameters:
    """How an agent's client starts `mdmem ARGS mcp` (this interpreter, the given environment)."""
    argv = command(*args, "mcp")
    return StdioServerParameters(command=argv[0], args=argv[1:], env=env)


def call_tools(args: list[str], env: dict, calls: list[tuple[str, dict]], errlog, timeout: float = 240) -> list:
    """The results of calls [(tool, arguments), …] made in one session of `mdmem ARGS mcp`."""
    params = stdio_params(args, env)

    async def session():
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                return [await s.call_tool(name, arguments) for name, arguments in calls]

    return asyncio.run(asyncio.wait_for(session(), timeout))
