"""An MCP client (the official `mcp` package) using toolround's tools through
the console's MCP gateway: it lists the tools and reads a file in a round.

    pip install mcp
    CONSOLE_TOKEN=... python examples/python/mcp_gateway.py
"""
import asyncio
import os

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

CONSOLE = os.environ.get("CONSOLE_URL", "http://127.0.0.1:8780")
URL = CONSOLE + "/api/v1/mcp?session=%s&run=py-mcp" % os.environ.get("SESSION", "demo")


async def main():
    headers = {"Authorization": "Bearer " + os.environ["CONSOLE_TOKEN"]}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=600)) as http:
        async with streamable_http_client(URL, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = await session.list_tools()
                print("tools:", ", ".join(t.name for t in tools.tools))
                res = await session.call_tool("find_files", {"pattern": "*.md"})
                print(res.content[0].text)
                print("round:", res.meta["dev.toolround/workflow_id"])


asyncio.run(main())
