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

The application's own function tools (SPEC Y6): pass them in ``tools`` with
a ``task_queue`` that the worker's ``TOOL_QUEUES`` names, and say which are
``read_only`` (the others are side effects). A tool worker in this process
(``toolround.tools``, on the Temporal Python SDK; ``pip install
'toolround[tools]'``) serves them on that queue, announced with the schemas
the SDK made (``params_json_schema``), and the rounds call them there, with
the round's approvals, dedupe, retries and operation ids::

    @function_tool
    def lookup_order(order_id: str) -> str: ...

    tools = round_tools(client, "s1", "r1", [lookup_order, refund_order],
                        task_queue="orders", read_only=["lookup_order"])
    agent = Agent(name="support", model=..., tools=tools)
    ...
    tools.close()  # stops the tool worker (or use ``with``)

``serve=False`` leaves the serving to a tool worker of yours that runs
``serve(tools, task_queue, ...)`` of this module.
"""

import asyncio
import copy
import json
from typing import Any, Callable, Dict, Iterable, List, Optional

from agents import FunctionTool
from agents.exceptions import ModelBehaviorError
from agents.tool_context import ToolContext

from ..client import Client, Decision, Run
from ._common import contents, openai_call
from ._worker import ToolWorker, wait_available

__all__ = ["round_tools", "RoundBatch", "RoundTools", "GATED", "ToolWorker", "serve", "toolround_tools"]

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


# --- the application's own function tools ------------------------------------

def _output(value: Any) -> Any:
    """What a function tool returned, as a tool worker's result takes it."""
    text = getattr(value, "text", None)
    if isinstance(text, str) and type(value).__name__ == "ToolOutputText":
        return text
    return value


def toolround_tools(tools: Iterable[FunctionTool], read_only: Iterable[str] = (),
                    tool_options: Optional[Dict[str, Dict[str, Any]]] = None) -> List[Any]:
    """The ``toolround.tools`` tools that serve function tools in a tool
    worker: the name, description and ``params_json_schema`` the SDK made;
    ``effect`` ``read_only`` for the names in ``read_only``, else
    ``side_effect``; ``tool_options[name]`` adds the ``@tool`` options
    (``cache_seconds``, ``concurrent``, ``subject``, ``timeout``,
    ``schedule_to_start``, ``heartbeat``; ``timeout`` is the tool's
    ``timeout_seconds`` when it has one). The function gets the call's
    ``toolround.tools.ToolContext`` as its run context (``ctx.context``):
    ``ctx.context.operation_id`` is a side effect's idempotency key. An
    exception it raises is the round's, not the SDK's failure text: a
    read-only call is retried, a side effect is ``unknown_outcome``; raise
    ``toolround.tools.ToolError`` for an error the model should read."""
    from ..tools import SchemaTool, ToolError

    ro = set(read_only)
    opts = tool_options or {}
    out = []
    for ft in tools:
        if not isinstance(ft, FunctionTool):
            raise TypeError("%r is not a FunctionTool" % (ft,))
        runner = copy.copy(ft)
        # Exceptions reach the tool worker, not the SDK's failure formatter.
        runner._use_default_failure_error_function = False
        runner._failure_error_function = None

        async def invoke(args: Dict[str, Any], *, ctx: Any, _ft: FunctionTool = runner) -> Any:
            raw = json.dumps(args)
            tctx = ToolContext(context=ctx, tool_name=_ft.name, tool_call_id=ctx.call_id, tool_arguments=raw)
            try:
                value = await _ft.on_invoke_tool(tctx, raw)
            except ModelBehaviorError as e:  # the SDK's own check of the arguments
                raise ToolError(str(e), code="invalid_arguments") from e
            return _output(value)

        o = dict(opts.get(ft.name, {}))
        if ft.timeout_seconds and "timeout" not in o:
            o["timeout"] = ft.timeout_seconds
        out.append(SchemaTool(ft.name, ft.params_json_schema, invoke, description=ft.description,
                              effect="read_only" if ft.name in ro else "side_effect", **o))
    return out


def serve(tools: Iterable[FunctionTool], task_queue: str, read_only: Iterable[str] = (),
          tool_options: Optional[Dict[str, Dict[str, Any]]] = None, **serve_kw: Any) -> None:
    """Serves function tools in a tool worker until SIGINT or SIGTERM
    (``toolround.tools.serve``; exits 2 when the catalog refuses them)."""
    from ..tools import serve as serve_tools

    serve_tools(toolround_tools(tools, read_only, tool_options), task_queue, **serve_kw)


class RoundTools(list):
    """The SDK tools whose calls run through rounds (a list: pass it as an
    Agent's ``tools``), with the run handle ``run`` and the in-process tool
    worker ``worker`` (None without own tools or with ``serve=False``);
    ``close()`` stops the worker."""

    run: Run
    worker: Optional[ToolWorker] = None

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()

    def __enter__(self) -> "RoundTools":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _approval(ft: FunctionTool, gated: bool, asked: set) -> Any:
    """The wrapper's needs_approval: the tool's own, remembering which calls
    the SDK asked about (they run only once approved there)."""
    policy = ft.needs_approval
    if gated or policy is True:
        return True
    if not callable(policy):
        return False

    async def needs(run_ctx: Any, params: Dict[str, Any], call_id: str) -> bool:
        got = policy(run_ctx, params, call_id)
        if asyncio.iscoroutine(got) or isinstance(got, asyncio.Future):
            got = await got
        if got:
            asked.add(call_id)
        return bool(got)
    return needs


def round_tools(client: Client, session_id: str, run_id: str, tools: Iterable[Any],
                needs_approval: Iterable[str] = GATED, on_approval: Optional[Callable] = None,
                on_wait: Optional[Callable] = None, task_queue: Optional[str] = None,
                read_only: Iterable[str] = (), tool_options: Optional[Dict[str, Dict[str, Any]]] = None,
                serve: bool = True, ready_timeout: float = 60.0, tool_worker: Optional[Dict[str, Any]] = None,
                **run_kwargs: Any) -> RoundTools:
    """FunctionTools whose calls run through rounds, for ``tools``: toolround
    tools (chat-completions tool specs, as ``starter tools --provider P``
    prints them, or bare ``{name, description, parameters}``) and the
    application's own ``FunctionTool``s, served on ``task_queue`` by a tool
    worker this starts in this process (``serve``; ``tool_worker`` are
    ``toolround.tools.serve_async``'s options: ``address``,
    ``toolround_task_queue``, ...) once the toolround worker lists them.
    ``read_only`` and ``tool_options`` are ``toolround_tools``'. With own
    tools the rounds' provider is ``claude-code`` unless ``provider`` says
    otherwise (the SDK gives the model every schema itself), and the run
    state starts with every tool's schema as fetched. ``run_kwargs`` go to
    ``Client.run`` (``provider``, ``state``, ...)."""
    tools = list(tools)
    own = [t for t in tools if isinstance(t, FunctionTool)]
    served: List[Any] = []
    if own:
        if not task_queue:
            raise ValueError("round_tools: own function tools need a task_queue (one that TOOL_QUEUES names)")
        served = toolround_tools(own, read_only, tool_options)
        run_kwargs.setdefault("provider", "claude-code")
        state = dict(run_kwargs.get("state") or {})
        names = [t.name if isinstance(t, FunctionTool) else t.get("function", t)["name"] for t in tools]
        state["fetched"] = sorted(set(state.get("fetched") or []) | set(names))
        run_kwargs["state"] = state
    batch = RoundBatch(client.run(session_id, run_id, **run_kwargs), on_approval, on_wait)
    out = RoundTools()
    out.run = batch.run
    if own and serve:
        out.worker = ToolWorker(served, task_queue, **(tool_worker or {}))
        try:
            out.worker.wait_ready(ready_timeout)
            wait_available(client, batch.run.provider, task_queue, [t.name for t in own], ready_timeout)
        except BaseException:
            out.worker.close()
            raise
    gated = set(needs_approval)
    asked: set = set()
    for spec in tools:
        if isinstance(spec, FunctionTool):
            name = spec.name
            policy = _approval(spec, name in gated, asked)

            async def invoke_own(ctx: ToolContext, args: str, _name: str = name, _always: bool = policy is True) -> str:
                sdk_approved = _always or ctx.tool_call_id in asked
                return await batch.call(ctx.tool_call_id, _name, args or "{}", sdk_approved)

            out.append(FunctionTool(name=name, description=spec.description, params_json_schema=spec.params_json_schema,
                                    on_invoke_tool=invoke_own, strict_json_schema=spec.strict_json_schema,
                                    is_enabled=spec.is_enabled, needs_approval=policy))
            continue
        fn = spec.get("function", spec)
        name = fn["name"]

        async def invoke(ctx: ToolContext, args: str, _name: str = name) -> str:
            return await batch.call(ctx.tool_call_id, _name, args or "{}", _name in gated)

        out.append(FunctionTool(name=name, description=fn.get("description", ""),
                                params_json_schema=fn.get("parameters") or {"type": "object", "properties": {}},
                                on_invoke_tool=invoke, strict_json_schema=False, needs_approval=name in gated))
    return out
