"""A drop-in for LangGraph's ``ToolNode`` whose tool calls run as toolround
rounds (``pip install 'toolround[langgraph]'``).

Each time the graph reaches the node, the tool calls of the last AI message
run as one durable round of the run ``session_id``/``run_id``, with
toolround's approvals. A call that waits for a decision becomes LangGraph's
``interrupt()``, with the pending call as its value: the graph stops (its
checkpointer keeps where), and ``Command(resume=decision)`` decides the call
and goes on with the same round, in this process or in another one. The
results come back as ``ToolMessage``s, one per call, in call order, with
``status="error"`` for calls that did not run or failed::

    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.prebuilt import tools_condition
    from langgraph.types import Command

    graph.add_node("tools", RoundToolNode(toolround.Client(url, token), "s1", "r1"))
    graph.add_conditional_edges("agent", tools_condition)
    app = graph.compile(checkpointer=InMemorySaver())   # any checkpointer
    out = app.invoke({"messages": [...]}, config)
    while out.get("__interrupt__"):
        pending = out["__interrupt__"][0].value          # tool, arguments, reasons, ...
        out = app.invoke(Command(resume={"approve": True}), config)

The application's own tools (SPEC Y6): pass its LangChain tools (``@tool``
functions, ``StructuredTool``s, any ``BaseTool`` with an ``args_schema``) in
``tools``, as to ``ToolNode``, with a ``task_queue`` that the worker's
``TOOL_QUEUES`` names, and say which are ``read_only`` (the others are side
effects). A tool worker in this process (``toolround.tools``, on the Temporal
Python SDK; ``pip install 'toolround[langgraph,tools]'``) serves them on that
queue, announced with the schemas LangChain gives the model, and the model
turn's calls, the app's and toolround's mixed, run as one round, with the
round's approvals, dedupe, retries and operation ids::

    @tool
    def lookup_order(order_id: str) -> dict: ...

    node = RoundToolNode(client, "s1", "r1", tools=[lookup_order, refund_order],
                         task_queue="orders", read_only=["lookup_order"])
    model = chat_model.bind_tools([lookup_order, refund_order] + toolround_specs)
    ...
    node.close()  # stops the tool worker (or use ``with``)

``serve=False`` leaves the serving to a tool worker of yours that runs
``serve(tools, task_queue, ...)`` of this module.
"""

import json
import threading
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import BaseTool, ToolException
from langchain_core.tools import tool as as_tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.types import interrupt as graph_interrupt

from ..client import DECISION_KINDS, APIError, Client, Decision, Run, round_workflow_id
from ._common import contents, is_error, openai_call
from ._worker import ToolWorker, wait_available

__all__ = ["RoundToolNode", "decision_of", "serve", "toolround_tools"]

# The decisions a call has once a person was asked about it (T2): the
# calls a rule or AUTO_APPROVE decided were never asked.
ASKED = ("approved", "denied", "expired")


class RoundToolNode(RunnableLambda):
    """Runs the last AI message's tool calls as one round. ``messages_key``
    is the state's messages field, as for ``ToolNode``; the node also takes
    a bare list of messages. ``run_kwargs`` go to ``Client.run``
    (``provider``, ``state``, ``client_tools``, ...).

    A call that waits for a decision (an approval or a run limit) goes to
    ``on_approval(pending)`` first when it is given; when that returns
    ``None``, or without it, the node calls ``interrupt(pending)``, and the
    value of ``Command(resume=...)`` decides the call (see
    ``decision_of``). The graph needs a checkpointer for that, as for any
    interrupt. ``interrupt=False`` is the blocking way instead: the node
    waits, in this process, until a person decides on the console. Calls
    that wait for something else (``ask_user``, elicitation, a client tool)
    go to ``on_wait``, as in ``Client.run_round``.

    One node is one run: its round numbers and state are kept by
    ``run_handle``, and a new process finds them on the server, so a graph
    resumed elsewhere attaches to the same round (its workflow id) and
    nothing runs twice.

    ``tools`` are the application's own LangChain tools (a plain function is
    made one with ``@tool``), served on ``task_queue`` by a tool worker this
    starts in this process (``serve``; ``tool_worker`` are
    ``toolround.tools.serve_async``'s options: ``address``,
    ``toolround_task_queue``, ...), and toolround tool specs (as ``starter
    tools --provider P`` prints them), which are not served: their names tell
    the run state which schemas the model has. The constructor returns once
    the toolround worker lists the own tools (``ready_timeout``), and
    ``worker`` is that tool worker (None without own tools or with
    ``serve=False``); ``close()`` stops it. ``read_only`` and
    ``tool_options`` are ``toolround_tools``'. With own tools the rounds'
    provider is ``claude-code`` unless ``provider`` says otherwise (the model
    has every schema from ``bind_tools``), and the run state starts with every
    tool of ``tools`` fetched."""

    def __init__(self, client: Client, session_id: str, run_id: str,
                 on_approval: Optional[Callable[[Dict[str, Any]], Optional[Decision]]] = None,
                 on_wait: Optional[Callable[[Dict[str, Any]], Any]] = None,
                 messages_key: str = "messages", name: str = "tools", interrupt: bool = True,
                 poll: float = 2.0, tools: Iterable[Any] = (), task_queue: Optional[str] = None,
                 read_only: Iterable[str] = (), tool_options: Optional[Dict[str, Dict[str, Any]]] = None,
                 serve: bool = True, ready_timeout: float = 60.0, tool_worker: Optional[Dict[str, Any]] = None,
                 **run_kwargs: Any):
        specs = [t if isinstance(t, (BaseTool, dict)) else as_tool(t) for t in tools]
        own = [t for t in specs if isinstance(t, BaseTool)]
        self.tools: List[BaseTool] = own
        self.worker: Optional[ToolWorker] = None
        served: List[Any] = []
        if own:
            if not task_queue:
                raise ValueError("RoundToolNode: own tools need a task_queue (one that the worker's TOOL_QUEUES names)")
            served = toolround_tools(own, read_only, tool_options)
            run_kwargs.setdefault("provider", "claude-code")
        if specs:
            state = dict(run_kwargs.get("state") or {})
            names = [t.name if isinstance(t, BaseTool) else t.get("function", t)["name"] for t in specs]
            state["fetched"] = sorted(set(state.get("fetched") or []) | set(names))
            run_kwargs["state"] = state
        self.client = client
        self.run_handle: Run = client.run(session_id, run_id, **run_kwargs)
        self.on_approval = on_approval
        self.on_wait = on_wait
        self.messages_key = messages_key
        self.interrupt = interrupt
        self.poll = poll
        self._placed = False
        super().__init__(self._invoke, name=name)
        if own and serve:
            self.worker = ToolWorker(served, task_queue, **(tool_worker or {}))
            try:
                self.worker.wait_ready(ready_timeout)
                wait_available(client, self.run_handle.provider, task_queue, [t.name for t in own], ready_timeout)
            except BaseException:
                self.worker.close()
                raise

    def close(self) -> None:
        """Stops the tool worker of the own tools, if this node started one
        (calls in flight get 10 seconds)."""
        if self.worker is not None:
            self.worker.close()

    def __enter__(self) -> "RoundToolNode":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _invoke(self, state: Any) -> Any:
        if isinstance(state, list):
            messages, wrap = state, False
        else:
            messages, wrap = state[self.messages_key], True
        ai = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
        if ai is None or not ai.tool_calls:
            raise ValueError("RoundToolNode: the last AI message has no tool calls")
        out = self.tool_messages(ai)
        return {self.messages_key: out} if wrap else out

    def tool_messages(self, ai: AIMessage) -> List[ToolMessage]:
        """Runs ``ai``'s tool calls as the next round (or attaches to the
        round that runs them already) and returns their ``ToolMessage``s."""
        calls = [openai_call(tc["id"], tc["name"], tc.get("args")) for tc in ai.tool_calls]
        assistant = {"role": "assistant", "content": ai.content if isinstance(ai.content, str) else "", "tool_calls": calls}
        n, exists = self._place([c["id"] for c in calls])
        h = self.run_handle
        wid = round_workflow_id(h.session_id, h.run_id, n)
        if not exists:
            self.client.submit_round(h.input(assistant, round=n))
        res = self._settle(wid, {c["id"]: c for c in calls})
        h._finished(n, res)
        by_id = contents(res)
        out = []
        for tc in ai.tool_calls:
            got = by_id.get(tc["id"], {"content": "no result", "result": {"status": "error"}})
            out.append(ToolMessage(content=got["content"], tool_call_id=tc["id"], name=tc["name"],
                                   status="error" if is_error(got["result"]) else "success",
                                   artifact=got["result"]))
        return out

    def _place(self, ids: List[str]) -> Tuple[int, bool]:
        """The round number of the calls ``ids`` and whether that round
        exists. The first time in a process the run's rounds are read from
        the server: the last one is these calls' round when its calls are
        these (a graph resumed after a restart), else the next one is."""
        h = self.run_handle
        if self._placed:
            return h.number + 1, False
        while True:
            wid = round_workflow_id(h.session_id, h.run_id, h.number + 1)
            try:
                view = self.client.round(wid)
            except APIError as e:
                if e.status == 404:
                    break
                raise
            if _call_ids(view) == ids:
                self._placed = True
                return h.number + 1, True
            if view.get("status") == "running":
                view = self.client.follow_round(wid, h.session_id, poll=self.poll)
            elif view.get("status") == "failed":
                raise APIError(200, "round_failed", "round %s failed: %s" % (wid, view.get("error", "")), view)
            h._finished(h.number + 1, view)
        self._placed = True
        return h.number + 1, False

    def _settle(self, wid: str, calls: Dict[str, Dict[str, Any]]) -> Dict[str, Any]:
        """Follows the round ``wid`` to its result; each call a person is
        asked about goes to ``on_approval``, then to ``interrupt()``.

        A resumed node runs again from its start, and LangGraph hands the
        resume values to its ``interrupt()`` calls by their order. So the
        node interrupts once for every call a person was asked about in
        this round, in call order, whether it still waits or was decided
        since (a decision for a call no longer waiting is not sent): the
        order is the same in every run of the node."""
        woke, stop = threading.Event(), threading.Event()
        session = wid.split("/")[1]

        def watch() -> None:
            try:
                for ev in self.client.events(session, stop=stop):
                    if ev.get("workflow_id") == wid:
                        woke.set()
            except Exception:  # the stream only hurries the loop; polling goes on without it
                pass

        threading.Thread(target=watch, daemon=True).start()
        asked, waited = set(), set()
        try:
            while True:
                woke.clear()
                view = self.client.round(wid)
                status = view.get("status")
                if status == "failed":
                    raise APIError(200, "round_failed", view.get("error") or "the round failed", view)
                if status != "running":
                    return view
                acted = False
                for p in _asked(wid, view, calls):
                    if p["call_id"] in asked:
                        continue
                    asked.add(p["call_id"])
                    d = self.on_approval(p) if self.on_approval is not None else None
                    if d is None and self.interrupt:
                        d = graph_interrupt(p)
                    if d is not None and not p.get("decision"):
                        self._decide(wid, p, decision_of(d))
                        acted = True
                for p in view.get("pending") or []:
                    key = (p.get("call_id"), p.get("kind"), p.get("wait_id"))
                    if (p.get("kind") or "") in DECISION_KINDS or key in waited:
                        continue
                    waited.add(key)
                    self.client._handle(wid, p, None, self.on_wait)
                if not acted:
                    woke.wait(self.poll)
        finally:
            stop.set()

    def _decide(self, wid: str, p: Dict[str, Any], d: Decision) -> None:
        try:
            if d.approve:
                self.client.approve(wid, p["call_id"], p.get("approval_id"), reason=d.reason, args=d.args,
                                    remember=d.remember, pattern=d.pattern, allow_turn=d.allow_turn,
                                    wait_id=p.get("wait_id"))
            else:
                self.client.deny(wid, p["call_id"], p.get("approval_id"), reason=d.reason, wait_id=p.get("wait_id"))
        except APIError as e:
            # Decided on the console meanwhile, or its deadline passed: the
            # round's result tells the rest.
            if e.code != "not_waiting":
                raise


# --- the application's own tools ----------------------------------------------

def _injected(t: BaseTool) -> Dict[str, bool]:
    """The tool's injected arguments (which the model does not give), each
    with whether it is the call's id (``InjectedToolCallId``)."""
    # langchain_core's own helpers for ToolNode's injection.
    from langchain_core.tools.base import InjectedToolCallId, _is_injected_arg_type, get_all_basemodel_annotations

    return {name: _is_injected_arg_type(a, InjectedToolCallId)
            for name, a in get_all_basemodel_annotations(t.get_input_schema()).items() if _is_injected_arg_type(a)}


def toolround_tools(tools: Iterable[Any], read_only: Iterable[str] = (),
                    tool_options: Optional[Dict[str, Dict[str, Any]]] = None) -> List[Any]:
    """The ``toolround.tools`` tools that serve LangChain tools in a tool
    worker: the name, description and parameters LangChain gives the model
    (``convert_to_openai_tool``); ``effect`` ``read_only`` for the names in
    ``read_only``, else ``side_effect``; ``tool_options[name]`` adds the
    ``@tool`` options (``cache_seconds``, ``concurrent``, ``subject``,
    ``timeout``, ``schedule_to_start``, ``heartbeat``). A plain function is
    made a tool with LangChain's ``@tool``.

    The tool runs with ``ainvoke``, whose config's ``configurable["toolround"]``
    is the call's ``toolround.tools.ToolContext`` (a tool that declares
    ``config: RunnableConfig`` reads it: ``operation_id`` is a side effect's
    idempotency key); an ``InjectedToolCallId`` argument gets the call's id.
    Arguments LangChain does not validate are ``invalid_arguments``, a
    ``ToolException`` is an error the model reads (``tool_error``), and any
    other exception is the round's: a read-only call is retried, a side
    effect is ``unknown_outcome``. A tool that takes the graph's state or
    store (other injected arguments) cannot run in a tool worker and is
    refused."""
    from pydantic import ValidationError

    from ..tools import SchemaTool, ToolError

    ro = set(read_only)
    opts = tool_options or {}
    out = []
    for lt in tools:
        if not isinstance(lt, BaseTool):
            if not callable(lt) or isinstance(lt, dict):
                raise TypeError("%r is not a LangChain tool or a function" % (lt,))
            lt = as_tool(lt)
        injected = _injected(lt)
        outside = sorted(name for name, is_call_id in injected.items() if not is_call_id)
        if outside:
            raise ValueError("tool %s takes injected arguments a tool worker cannot give (%s): only "
                             "InjectedToolCallId is given" % (lt.name, ", ".join(outside)))
        fn = convert_to_openai_tool(lt)["function"]
        whole_call = any(injected.values())

        async def invoke(args: Dict[str, Any], *, ctx: Any, _t: BaseTool = lt, _whole: bool = whole_call) -> Any:
            config = {"configurable": {"toolround": ctx}, "run_name": _t.name}
            try:
                if _whole:
                    msg = await _t.ainvoke({"type": "tool_call", "id": ctx.call_id, "name": _t.name, "args": args}, config)
                    return msg.content if isinstance(msg, ToolMessage) else msg
                return await _t.ainvoke(args, config)
            except ValidationError as e:  # LangChain's own check of the arguments
                raise ToolError("%s: invalid arguments: %s" % (_t.name, e), code="invalid_arguments") from e
            except ToolException as e:  # LangChain's error for the model to read
                raise ToolError(str(e)) from e

        out.append(SchemaTool(lt.name, fn.get("parameters") or {"type": "object", "properties": {}}, invoke,
                              description=fn.get("description", ""),
                              effect="read_only" if lt.name in ro else "side_effect", **opts.get(lt.name, {})))
    return out


def serve(tools: Iterable[Any], task_queue: str, read_only: Iterable[str] = (),
          tool_options: Optional[Dict[str, Dict[str, Any]]] = None, **serve_kw: Any) -> None:
    """Serves LangChain tools in a tool worker until SIGINT or SIGTERM
    (``toolround.tools.serve``; exits 2 when the catalog refuses them): for
    a tool worker of its own, beside graphs whose ``RoundToolNode`` has
    ``serve=False``."""
    from ..tools import serve as serve_tools

    serve_tools(toolround_tools(tools, read_only, tool_options), task_queue, **serve_kw)


def decision_of(value: Any) -> Decision:
    """The decision that ``Command(resume=value)`` gives a waiting call:
    ``True``/``False``, ``"approve"``/``"deny"``, a ``toolround.Decision``,
    or a dict of its fields (``{"approve": True, "reason": ..., "args":
    {...}}``), which is what a checkpointer keeps best."""
    if isinstance(value, Decision):
        return value
    if isinstance(value, bool):
        return Decision(value)
    if value in ("approve", "deny"):
        return Decision(value == "approve")
    if isinstance(value, dict) and isinstance(value.get("approve"), bool):
        known = ("approve", "reason", "args", "remember", "pattern", "allow_turn")
        extra = sorted(k for k in value if k not in known)
        if extra:
            raise ValueError("RoundToolNode: the resume value has unknown fields %s (known: %s)" % (extra, ", ".join(known)))
        return Decision(**value)
    raise ValueError("RoundToolNode: resume with True/False, \"approve\"/\"deny\", a toolround.Decision or "
                     "{\"approve\": bool, ...}, not %r" % (value,))


def _call_ids(view: Dict[str, Any]) -> List[str]:
    """The call ids of a round, finished or running, in call order."""
    if view.get("results"):
        return [r["call_id"] for r in view["results"]]
    return [c["call_id"] for c in (view.get("progress") or {}).get("calls") or []]


def _asked(wid: str, view: Dict[str, Any], calls: Dict[str, Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The calls of a running round a person is or was asked about, in call
    order: the pending entry of one that waits for a decision, else what is
    known of one decided since (with its ``decision``)."""
    pending = {p["call_id"]: dict(p, workflow_id=wid) for p in view.get("pending") or []
               if (p.get("kind") or "") in DECISION_KINDS}
    progress = (view.get("progress") or {}).get("calls")
    if not progress:
        return list(pending.values())
    out = []
    for c in progress:
        cid = c.get("call_id")
        if cid in pending:
            out.append(pending[cid])
        elif c.get("decision") in ASKED:
            fn = (calls.get(cid) or {}).get("function") or {}
            out.append({"workflow_id": wid, "call_id": cid, "tool": c.get("tool"), "kind": "confirm",
                        "arguments": fn.get("arguments", json.dumps({})), "decision": c["decision"], "by": c.get("by", "")})
    return out
