"""The application's own LangChain tools through rounds (SPEC Y6): served by
a tool worker on the real Temporal server, called by the real worker's
rounds, driven by LangChain's GenericFakeChatModel in a LangGraph graph.
tests/adapters_own_test.go runs them with TOOLROUND_TOOL_QUEUE, a trusted
queue of the worker's TOOL_QUEUES; the tests of toolround_tools at the end
need no server."""

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Annotated

import pytest

pytest.importorskip("langgraph") if os.environ.get("CI") != "true" else None
pytest.importorskip("temporalio") if os.environ.get("CI") != "true" else None

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402
from langchain_core.tools import InjectedToolCallId, tool  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.graph import START, MessagesState, StateGraph  # noqa: E402
from langgraph.prebuilt import InjectedState, tools_condition  # noqa: E402
from langgraph.types import Command  # noqa: E402
from temporalio.exceptions import ApplicationError  # noqa: E402

import toolround  # noqa: E402
from toolround.adapters.langgraph import RoundToolNode, toolround_tools  # noqa: E402
from toolround.tools import SchemaTool, _core, schema_hash  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "toolfiles"))

import lg_orders  # noqa: E402


@pytest.fixture
def queue():
    q = os.environ.get("TOOLROUND_TOOL_QUEUE")
    if not q:
        if os.environ.get("CI") == "true":
            pytest.fail("TOOLROUND_TOOL_QUEUE is not set: run through `go test -run TestLangGraphOwnToolsY6 ./tests/`")
        pytest.skip("TOOLROUND_TOOL_QUEUE is not set (tests/adapters_own_test.go sets it)")
    return q


@pytest.fixture
def marks(tmp_path, monkeypatch):
    monkeypatch.setattr(lg_orders, "MARKS", str(tmp_path))
    return tmp_path


def lines(marks, name):
    p = marks / name
    return p.read_text().split() if p.exists() else []


def calls(*tcs):
    return AIMessage(content="", tool_calls=[{"id": i, "name": n, "args": a} for i, n, a in tcs])


def graph(model, node, checkpointer=None):
    g = StateGraph(MessagesState)
    g.add_node("agent", lambda s: {"messages": [model.invoke(s["messages"])]})
    g.add_node("tools", node)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    return g.compile(checkpointer=checkpointer)


def tool_messages(out):
    return [m for m in out["messages"] if isinstance(m, ToolMessage)]


def test_own_tools_and_built_ins_run_in_one_round_per_turn(approver, session, queue, marks):
    model = GenericFakeChatModel(messages=iter([
        calls(("l1", "lg_lookup_order", {"order_id": "A-1"}), ("r1", "lg_refund_order", {"order_id": "A-1", "amount": 5}),
              ("c1", "calculate", {"expression": "6*7"})),
        calls(("r2", "lg_refund_order", {"order_id": "A-1", "amount": 5}), ("l2", "lg_lookup_order", {"order_id": "none-9"})),
        AIMessage(content="refunded"),
    ]))
    asked = []

    def approve(p):
        asked.append(p["call_id"])
        return toolround.Decision(True, reason="fine")

    calculate = [t for t in approver.tools("claude-code")["tools"] if t["function"]["name"] == "calculate"]
    with RoundToolNode(approver, session, "own", tools=lg_orders.TOOLS + calculate, task_queue=queue,
                       read_only=lg_orders.READ_ONLY, tool_options=lg_orders.OPTIONS, on_approval=approve) as node:
        assert node.worker is not None, "a tool worker in this process serves them"
        assert node.run_handle.provider == "claude-code"
        out = graph(model, node).invoke({"messages": [HumanMessage("refund A-1")]})
    assert out["messages"][-1].content == "refunded"
    r1 = approver.round(toolround.round_workflow_id(session, "own", 1))
    got = {r["call_id"]: r for r in r1["results"]}
    assert [r["call_id"] for r in r1["results"]] == ["l1", "r1", "c1"], "the turn's three calls, own and built-in, are one round"
    assert got["l1"]["status"] == "ok" and '"shipped"' in got["l1"]["content"]
    assert got["l1"]["approval"]["decision"] == "not_needed", "read-only on a trusted queue"
    assert got["r1"]["status"] == "ok" and got["r1"]["approval"]["decision"] == "approved"
    op = got["r1"]["operation_id"]
    assert op and got["r1"]["content"] == "refunded 5 on A-1, key " + op, "the function got its operation id"
    assert got["c1"]["status"] == "ok" and "42" in got["c1"]["content"]
    assert asked == ["r1"], "the side effect asked the round's gate"
    tms = tool_messages(out)
    assert [(m.tool_call_id, m.name, m.status) for m in tms] == [
        ("l1", "lg_lookup_order", "success"), ("r1", "lg_refund_order", "success"), ("c1", "calculate", "success"),
        ("r2", "lg_refund_order", "success"), ("l2", "lg_lookup_order", "error")]
    assert "shipped" in tms[0].content and op in tms[1].content and "42" in tms[2].content
    # The same refund again in the next turn is deduped: it never runs twice;
    # a ToolException is an error the model reads.
    r2 = {r["call_id"]: r for r in approver.round(toolround.round_workflow_id(session, "own", 2))["results"]}
    assert r2["r2"]["status"] == "deduped"
    assert r2["l2"]["status"] == "error" and "no order none-9" in tms[4].content
    assert lines(marks, "refund") == [op]
    assert lines(marks, "lookup") == ["A-1", "none-9"]
    assert node.run_handle.number == 2


def test_an_own_side_effect_interrupts_and_the_resume_runs_it(approver, session, queue, marks):
    model = GenericFakeChatModel(messages=iter([
        calls(("k1", "lg_cancel_order", {"order_id": "B-1"}), ("l1", "lg_lookup_order", {"order_id": "B-1"})),
        AIMessage(content="cancelled"),
    ]))
    with RoundToolNode(approver, session, "own-interrupt", tools=lg_orders.TOOLS, task_queue=queue,
                       read_only=lg_orders.READ_ONLY, tool_options=lg_orders.OPTIONS, poll=0.5) as node:
        app = graph(model, node, InMemorySaver())
        config = {"configurable": {"thread_id": session}}
        out = app.invoke({"messages": [HumanMessage("cancel B-1")]}, config)
        pending = [i.value for i in out.get("__interrupt__", [])]
        wid = toolround.round_workflow_id(session, "own-interrupt", 1)
        assert [(p["call_id"], p["tool"], p["workflow_id"]) for p in pending] == [("k1", "lg_cancel_order", wid)]
        assert json.loads(pending[0]["arguments"]) == {"order_id": "B-1"}
        assert lines(marks, "cancel") == [], "the side effect waits for the decision"
        out = app.invoke(Command(resume={"approve": True, "reason": "resumed"}), config)
    assert "__interrupt__" not in out or not out["__interrupt__"]
    assert out["messages"][-1].content == "cancelled"
    tms = tool_messages(out)
    assert [(m.tool_call_id, m.status) for m in tms] == [("k1", "success"), ("l1", "success")]
    assert tms[0].artifact["content"] == "cancelled B-1" and "cancelled B-1" in tms[0].content
    r = {x["call_id"]: x for x in approver.round(wid)["results"]}
    assert r["k1"]["approval"]["decision"] == "approved" and r["k1"]["approval"].get("reason") == "resumed"
    assert lines(marks, "cancel") == ["B-1"], "it ran once"
    assert lines(marks, "lookup") == ["B-1"]
    with pytest.raises(toolround.APIError) as e:
        approver.round(toolround.round_workflow_id(session, "own-interrupt", 2))
    assert e.value.status == 404, "the resumed graph ran no second round"


def _process(url, approver, session, db, queue, marks, *args):
    """Runs one process of langgraph_restart.py, with the own tools, to its
    exit and returns what it printed."""
    env = dict(os.environ, TOOLROUND_URL=url, TOOLROUND_APPROVER_TOKEN=approver.token, SESSION=session, RUN="restart",
               DB=db, OWN_TOOL_QUEUE=queue, MARKS=str(marks), PYTHONPATH=os.path.join(HERE, "..", "src"))
    out = subprocess.run([sys.executable, os.path.join(HERE, "langgraph_restart.py")] + list(args), env=env,
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stdout + out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_own_side_effects_interrupt_and_new_processes_resume_the_same_round(url, approver, session, queue, marks, tmp_path):
    """The process that interrupts and the ones that resume each serve the
    own tools with a tool worker of their own; the round is the same one,
    and each call runs once."""
    pytest.importorskip("langgraph.checkpoint.sqlite") if os.environ.get("CI") != "true" else None
    db = str(tmp_path / "checkpoints.sqlite")
    wid = toolround.round_workflow_id(session, "restart", 1)

    first = _process(url, approver, session, db, queue, marks, "start")
    assert [(i["call_id"], i["tool"], i["workflow_id"]) for i in first["interrupts"]] == [("k1", "lg_cancel_order", wid)]
    assert first["tools"] == []
    assert sorted(p["call_id"] for p in approver.round(wid)["pending"]) == ["k1", "k2"]
    assert lines(marks, "cancel") == []

    second = _process(url, approver, session, db, queue, marks, "resume", "approve")
    assert [(i["call_id"], i["workflow_id"]) for i in second["interrupts"]] == [("k2", wid)]

    third = _process(url, approver, session, db, queue, marks, "resume", "deny")
    assert third["interrupts"] == [] and third["last"] == "all done" and third["round"] == 1
    assert [(t["id"], t["status"]) for t in third["tools"]] == [("l1", "success"), ("k1", "success"), ("k2", "error")]
    assert "shipped" in third["tools"][0]["content"] and "cancelled R-1" in third["tools"][1]["content"]
    assert third["tools"][2]["result"]["status"] == "skipped"
    assert lines(marks, "cancel") == ["R-1"], "the approved side effect ran once, the denied one never"
    assert lines(marks, "lookup") == ["R-1"]
    with pytest.raises(toolround.APIError) as e:
        approver.round(toolround.round_workflow_id(session, "restart", 2))
    assert e.value.status == 404, "the resumed graph ran no second round"


def _tool_worker(queue, marks):
    env = dict(os.environ, TOOL_QUEUE=queue, MARKS=str(marks))
    return subprocess.Popen([sys.executable, os.path.join(HERE, "toolfiles", "lg_tool_worker.py")], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _wait(what, cond, timeout=60):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out waiting for " + what
        time.sleep(0.05)


def _available(client, queue):
    def ok():
        q = [q for q in client.tools("claude-code", worker=True).get("queues") or [] if q["queue"] == queue]
        return bool(q) and q[0]["available"]
    return ok


def test_a_killed_tool_worker_side_effect_unknown_outcome_read_only_retried(approver, session, queue, marks):
    """The tool worker, a process of its own, gets SIGKILL in the middle of
    a side effect's call: the call is unknown_outcome and never runs again;
    then in the middle of a read-only call: the call runs again once a new
    one serves the queue."""
    procs = [_tool_worker(queue, marks)]

    def kill():
        os.kill(procs[-1].pid, signal.SIGKILL)
        assert procs[-1].wait(10) == -signal.SIGKILL
        procs.append(_tool_worker(queue, marks))

    try:
        _wait("the tool worker", _available(approver, queue))
        model = GenericFakeChatModel(messages=iter([
            calls(("h1", "lg_refund_order", {"order_id": "hold-B-2", "amount": 3})),
            calls(("s1", "lg_lookup_order", {"order_id": "slow-C-3"})),
            AIMessage(content="found"),
        ]))
        node = RoundToolNode(approver, session, "own-kill", tools=lg_orders.TOOLS, task_queue=queue,
                             read_only=lg_orders.READ_ONLY, tool_options=lg_orders.OPTIONS, serve=False,
                             on_approval=lambda p: toolround.Decision(True))
        assert node.worker is None
        done = {}
        app = graph(model, node)
        th = threading.Thread(target=lambda: done.update(out=app.invoke({"messages": [HumanMessage("refund, then find")]})))
        th.start()
        _wait("the refund's attempt", lambda: len(lines(marks, "refund")) == 1)
        kill()
        _wait("the first attempt of the lookup", lambda: lines(marks, "lookup") == ["slow-C-3"])
        kill()
        th.join(120)
        assert not th.is_alive(), "the graph ended"
    finally:
        for p in procs:
            p.kill()
            p.wait()
    out = done["out"]
    assert out["messages"][-1].content == "found"
    h = approver.round(toolround.round_workflow_id(session, "own-kill", 1))["results"][0]
    assert h["status"] == "unknown_outcome", h
    assert lines(marks, "refund") == [h["operation_id"]], "the side effect ran once"
    r = approver.round(toolround.round_workflow_id(session, "own-kill", 2))["results"][0]
    assert r["status"] == "ok" and '"shipped"' in r["content"], r
    assert r["attempts"] == 2
    assert lines(marks, "lookup") == ["slow-C-3", "slow-C-3"]
    tms = tool_messages(out)
    assert [(m.tool_call_id, m.status) for m in tms] == [("h1", "error"), ("s1", "success")]
    assert tms[0].artifact["status"] == "unknown_outcome" and "shipped" in tms[1].content, "the model reads both"


def test_a_queue_the_worker_does_not_run_is_refused_at_the_start(approver, session, queue, marks):
    from toolround.tools import ServeRefused

    with pytest.raises(ServeRefused) as e:
        RoundToolNode(approver, session, "own-refused", tools=lg_orders.TOOLS, task_queue="not-listed-" + queue,
                      read_only=lg_orders.READ_ONLY, tool_options=lg_orders.OPTIONS)
    assert "not-listed-" + queue in str(e.value) and "TOOL_QUEUES" in str(e.value)


# --- toolround_tools, without a server ----------------------------------------

@tool
def weather(city: str, call_id: Annotated[str, InjectedToolCallId], days: int = 1) -> dict:
    """Today's weather in a city."""
    if city == "boom":
        raise RuntimeError("the weather service is down")
    return {"city": city, "days": days, "call_id": call_id}


def envelope(t, args):
    return {"v": 1, "tool": t.name, "args_json": json.dumps(args), "operation_id": "op-7", "call_id": "c9",
            "workflow_id": "toolround/s/r/1", "schema_hash": t.schema_hash, "attempt": 1}


def test_the_schema_langchain_gives_the_model_is_announced_with_its_hash():
    [t] = toolround_tools([weather], read_only=["weather"], tool_options={"weather": {"cache_seconds": 30}})
    assert isinstance(t, SchemaTool) and t.problems == []
    a = t.announcement()
    assert a["name"] == "weather" and a["description"] == "Today's weather in a city."
    assert a["effect"] == "read_only" and a["cache_seconds"] == 30
    assert a["parameters"]["required"] == ["city"] and "call_id" not in a["parameters"]["properties"], \
        "the injected call id is not the model's"
    assert a["schema_hash"] == schema_hash(a["parameters"])


def test_a_call_runs_the_tool_with_its_call_id_and_maps_its_errors(marks):
    [t] = toolround_tools([weather], read_only=["weather"])
    ok = asyncio.run(_core.call(t, envelope(t, {"city": "Oslo"})))
    # Invoked with the whole tool call, as ToolNode does: LangChain makes
    # the value the ToolMessage's text.
    assert ok["is_error"] is False and ok["content"][0]["type"] == "text", ok
    assert json.loads(ok["content"][0]["text"]) == {"city": "Oslo", "days": 1, "call_id": "c9"}
    bad = asyncio.run(_core.call(t, envelope(t, {"city": 3})))
    assert bad["is_error"] and bad["error_code"] == "invalid_arguments", bad
    with pytest.raises(ApplicationError) as e:
        asyncio.run(_core.call(t, envelope(t, {"city": "boom"})))
    assert e.value.type == "RuntimeError" and "down" in e.value.message, "the round's: retried or unknown_outcome"
    [lookup] = toolround_tools([lg_orders.lg_lookup_order])
    missing = asyncio.run(_core.call(lookup, envelope(lookup, {"order_id": "none-1"})))
    assert missing == {"v": 1, "is_error": True, "error_code": "tool_error",
                       "content": [{"type": "text", "text": "no order none-1"}]}, "a ToolException is the model's to read"
    assert lines(marks, "lookup") == ["none-1"]


def test_a_tool_of_the_graph_state_is_refused_and_a_function_is_made_a_tool():
    @tool
    def summary(topic: str, state: Annotated[dict, InjectedState]) -> str:
        """Summarise the conversation."""
        return topic

    with pytest.raises(ValueError, match="tool summary takes injected arguments a tool worker cannot give \\(state\\)"):
        toolround_tools([summary])

    def double(x: int) -> int:
        """Twice x."""
        return 2 * x

    [t] = toolround_tools([double])
    assert t.name == "double" and t.effect == "side_effect" and t.parameters["properties"] == {"x": {"type": "integer"}}
    assert asyncio.run(_core.call(t, envelope(t, {"x": 4})))["content"] == [{"type": "json", "json": 8}]
