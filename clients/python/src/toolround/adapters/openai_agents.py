"""The OpenAI Agents SDK's function tools executed through toolround rounds
(``pip install 'toolround[openai-agents]'``).

``round_tools`` makes a ``FunctionTool`` per toolround tool. The calls of one
model response reach the SDK's tools together; they are gathered and run as
one durable round of the run ``session_id``/``run_id`` (the run handle keeps
its state and round number), and each tool returns its call's tool message.

Approvals: a tool named in ``needs_approval`` (by default the tools that
change things) has the SDK's ``needs_approval`` set, so the SDK stops the run
with an interruption; once the application approves it there
(``state.approve(item)``) the call runs and the round's gate is answered with
that approval, recorded as given in the Agents SDK. A rejection in the SDK
never reaches the worker. With ``needs_approval=()`` the SDK asks nothing and
the round's gate asks people (the console, or ``on_approval``).
"""

import asyncio
from typing import Any, Callable, Dict, Iterable, List, Optional

from agents import FunctionTool
from agents.tool_context import ToolContext

from ..client import Client, Decision, Run
from ._common import contents, openai_call

__all__ = ["round_tools", "RoundBatch", "GATED"]

# The built-ins that change the workdir or reach out.
GATED = ("edit_file", "remove_file", "restore_file", "run_command", "background_command", "download_file", "http_request",
         "generate_image", "generate_audio", "test_tool")


class RoundBatch:
    """Gathers the calls that arrive together and runs them as one round."""

    def __init__(self, run: Run, on_approval=None, on_wait=None, window: float = 0.05):
        self.run = run
        self.on_approval = on_approval
        self.on_wait = on_wait
        self.window = window
        self._calls: List[Dict[str, Any]] = []
        self._waiters: Dict[str, asyncio.Future] = {}
        self._approved: set = set()
        self._flush: Optional[asyncio.Task] = None

    async def call(self, call_id: str, name: str, args: str, approved: bool) -> str:
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        self._calls.append(openai_call(call_id, name, args))
        self._waiters[call_id] = fut
        if approved:
            self._approved.add(call_id)
        if self._flush is None:
            self._flush = loop.create_task(self._run())
        return await fut

    async def _run(self) -> None:
        n = -1
        while n != len(self._calls):  # until no call joins for a window
            n = len(self._calls)
            await asyncio.sleep(self.window)
        calls, waiters, approved = self._calls, self._waiters, self._approved
        self._calls, self._waiters, self._approved, self._flush = [], {}, set(), None

        def decide(p: Dict[str, Any]) -> Optional[Decision]:
            if p.get("call_id") in approved:
                return Decision(True, reason="approved in the OpenAI Agents SDK")
            return self.on_approval(p) if self.on_approval else None

        try:
            res = await asyncio.to_thread(self.run.round, calls, on_approval=decide, on_wait=self.on_wait)
        except Exception as e:  # every waiting tool learns it
            for f in waiters.values():
                if not f.done():
                    f.set_exception(e)
            return
        by_id = contents(res)
        for cid, f in waiters.items():
            if not f.done():
                f.set_result(by_id.get(cid, {"content": "no result"})["content"])


def round_tools(client: Client, session_id: str, run_id: str, tools: Iterable[Dict[str, Any]],
                needs_approval: Iterable[str] = GATED, on_approval: Optional[Callable] = None,
                on_wait: Optional[Callable] = None, **run_kwargs: Any) -> List[FunctionTool]:
    """FunctionTools for ``tools`` (chat-completions tool specs, as ``starter
    tools --provider P`` prints them, or bare ``{name, description,
    parameters}``) whose calls run through rounds. ``run_kwargs`` go to
    ``Client.run`` (``provider``, ``state``, ...)."""
    batch = RoundBatch(client.run(session_id, run_id, **run_kwargs), on_approval, on_wait)
    gated = set(needs_approval)
    out = []
    for spec in tools:
        fn = spec.get("function", spec)
        name = fn["name"]

        async def invoke(ctx: ToolContext, args: str, _name: str = name) -> str:
            return await batch.call(ctx.tool_call_id, _name, args or "{}", _name in gated)

        out.append(FunctionTool(name=name, description=fn.get("description", ""),
                                params_json_schema=fn.get("parameters") or {"type": "object", "properties": {}},
                                on_invoke_tool=invoke, strict_json_schema=False, needs_approval=name in gated))
    return out
