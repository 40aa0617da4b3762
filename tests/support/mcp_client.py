"""An MCP client (the `mcp` SDK) that starts a server command over stdio, as Claude Code or Claude Desktop does."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp_types import Implementation


@asynccontextmanager
async def mcp_client(command: str, args: list[str], env: dict[str, str], client: str = "claude-code",
                     ) -> AsyncIterator[ClientSession]:
    """An initialized session with the server `command args`; its stderr is printed if the block fails.

    The stdio client passes the server only a safe few variables (PATH, HOME, …) plus `env`."""
    # The test session's state folder (tests/conftest.py), unless the test gives one: the seal key and the state of
    # folders kept beside are there, and a server with another would not vouch for the test's queue, nor it for his.
    if os.environ.get("XDG_STATE_HOME") and "XDG_STATE_HOME" not in env:
        env = {**env, "XDG_STATE_HOME": os.environ["XDG_STATE_HOME"]}
    with tempfile.TemporaryFile("w+") as errlog:
        try:
            async with stdio_client(StdioServerParameters(command=command, args=args, env=env), errlog=errlog) as (
                read, write,
            ):
                async with ClientSession(read, write, client_info=Implementation(name=client, version="1.0")) as s:
                    await s.initialize()
                    yield s
        except BaseException:
            errlog.seek(0)
            sys.stderr.write("server stderr:\n" + errlog.read())
            raise


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content)
