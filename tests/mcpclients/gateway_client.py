"""The official MCP Python SDK's client (`mcp` from PyPI) against the MCP gateway.

tests/mcpgateway_clients_test.go drives it (Z5): it reads one JSON command a
line on stdin and answers each with one JSON line on stdout that carries the
command's tag. Commands:

  {"op": "connect", "tag": T, "client": C}   open client C (a new MCP session)
  {"op": "list", "tag": T, "client": C}      tools/list: {"tools": [...]}
  {"op": "call", "tag": T, "client": C, "name": N, "arguments": A}
      tools/call, answered when it returns: {"result": <the CallToolResult
      as on the wire>} or {"error": "..."}; other commands go on meanwhile
  {"op": "drop", "tag": T, "client": C}      client C goes away: its calls
      are cancelled (each answers {"error": "cancelled"}) and it closes
  {"op": "quit"}

The endpoint is GATEWAY_URL, the bearer token GATEWAY_TOKEN.
"""

import json
import os
import sys
import traceback

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation

URL = os.environ["GATEWAY_URL"]
TOKEN = os.environ["GATEWAY_TOKEN"]


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def wire(model):
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


class Client:
    """One MCP client: its own HTTP client, transport and session."""

    def __init__(self, name):
        self.name = name
        self.session = None
        self.calls = None
        self.scope = anyio.CancelScope()
        self.ready = anyio.Event()
        self.closed = anyio.Event()
        self.error = None

    async def run(self):
        try:
            with self.scope:
                headers = {"Authorization": "Bearer " + TOKEN}
                timeout = httpx2.Timeout(30, read=300)
                async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http:
                    async with streamable_http_client(URL, http_client=http) as (read, write):
                        info = Implementation(name="gateway-test-python-" + self.name, version="1")
                        async with ClientSession(read, write, client_info=info) as session:
                            await session.initialize()
                            self.session = session
                            async with anyio.create_task_group() as calls:
                                self.calls = calls
                                self.ready.set()
                                await anyio.sleep_forever()
        except Exception as e:  # noqa: BLE001 - reported to the driver
            self.error = "".join(traceback.format_exception_only(e)).strip()
        finally:
            self.ready.set()
            self.closed.set()

    async def call(self, tag, name, arguments):
        try:
            result = await self.session.call_tool(name, arguments)
            say({"tag": tag, "result": wire(result)})
        except anyio.get_cancelled_exc_class():
            say({"tag": tag, "error": "cancelled"})
            raise
        except Exception as e:  # noqa: BLE001 - reported to the driver
            say({"tag": tag, "error": "".join(traceback.format_exception_only(e)).strip()})


async def main():
    clients = {}
    async with anyio.create_task_group() as tg:
        while True:
            line = await anyio.to_thread.run_sync(sys.stdin.readline)
            if not line:
                break
            cmd = json.loads(line)
            op, tag = cmd["op"], cmd.get("tag")
            if op == "quit":
                break
            try:
                if op == "connect":
                    c = Client(cmd["client"])
                    clients[c.name] = c
                    tg.start_soon(c.run)
                    await c.ready.wait()
                    if c.error:
                        raise RuntimeError(c.error)
                    say({"tag": tag, "ok": True, "protocol": c.session.protocol_version})
                elif op == "list":
                    res = await clients[cmd["client"]].session.list_tools()
                    say({"tag": tag, "tools": [wire(t) for t in res.tools]})
                elif op == "call":
                    c = clients[cmd["client"]]
                    c.calls.start_soon(c.call, tag, cmd["name"], cmd.get("arguments") or {})
                elif op == "drop":
                    c = clients.pop(cmd["client"])
                    c.scope.cancel()
                    await c.closed.wait()
                    say({"tag": tag, "ok": True})
                else:
                    raise ValueError("unknown op " + op)
            except Exception as e:  # noqa: BLE001 - reported to the driver
                say({"tag": tag, "error": "".join(traceback.format_exception_only(e)).strip()})
        tg.cancel_scope.cancel()


if __name__ == "__main__":
    anyio.run(main)
