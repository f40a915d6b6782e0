"""The application's own function tools through rounds (SPEC Y6): served by
a tool worker on the real Temporal server, called by the real worker's
rounds, driven by a scripted Agents SDK Model. tests/adapters_own_test.go
runs them with TOOLROUND_TOOL_QUEUE, a trusted queue of the worker's
TOOL_QUEUES."""

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip("agents") if os.environ.get("CI") != "true" else None

from agents import Agent, Runner, set_tracing_disabled  # noqa: E402

import toolround  # noqa: E402
from test_openai_agents import ScriptedModel, fcall, outputs, text  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "toolfiles"))

import agents_orders  # noqa: E402
from toolround.adapters.openai_agents import round_tools  # noqa: E402

set_tracing_disabled(True)


@pytest.fixture
def queue():
    q = os.environ.get("TOOLROUND_TOOL_QUEUE")
    if not q:
        if os.environ.get("CI") == "true":
            pytest.fail("TOOLROUND_TOOL_QUEUE is not set: run through `go test -run TestOpenAIAgentsOwnToolsY6 ./tests/`")
        pytest.skip("TOOLROUND_TOOL_QUEUE is not set (tests/adapters_own_test.go sets it)")
    return q


@pytest.fixture
def marks(tmp_path, monkeypatch):
    monkeypatch.setattr(agents_orders, "MARKS", str(tmp_path))
    return tmp_path


def lines(marks, name):
    p = marks / name
    return p.read_text().split() if p.exists() else []


def test_own_function_tools_run_in_one_round_per_turn(approver, session, queue, marks):
    model = ScriptedModel([
        [fcall("l1", "lookup_order", '{"order_id":"A-1"}'), fcall("r1", "refund_order", '{"order_id":"A-1","amount":5}')],
        [fcall("r2", "refund_order", '{"order_id":"A-1","amount":5}')],
        [text("refunded")],
    ])
    asked = []

    def approve(p):
        asked.append(p["call_id"])
        return toolround.Decision(True, reason="fine")

    with round_tools(approver, session, "own", agents_orders.TOOLS, task_queue=queue,
                     read_only=agents_orders.READ_ONLY, tool_options=agents_orders.OPTIONS,
                     on_approval=approve) as tools:
        assert tools.worker is not None, "a tool worker in this process serves them"
        res = Runner.run_sync(Agent(name="a", instructions="x", model=model, tools=tools), "refund A-1")
    assert res.final_output == "refunded"
    r1 = approver.round(toolround.round_workflow_id(session, "own", 1))
    got = {r["call_id"]: r for r in r1["results"]}
    assert sorted(got) == ["l1", "r1"], "the turn's two calls are one round"
    assert got["l1"]["status"] == "ok" and '"shipped"' in got["l1"]["content"]
    assert got["l1"]["approval"]["decision"] == "not_needed", "read-only on a trusted queue"
    assert got["r1"]["status"] == "ok" and got["r1"]["approval"]["decision"] == "approved"
    op = got["r1"]["operation_id"]
    assert op and got["r1"]["content"] == "refunded 5 on A-1, key " + op, "the function got its operation id"
    assert asked == ["r1"], "the side effect asked the round's gate"
    # The same refund again in the next turn is deduped: it never runs twice.
    r2 = approver.round(toolround.round_workflow_id(session, "own", 2))["results"][0]
    assert r2["status"] == "deduped"
    assert lines(marks, "refund") == [op]
    assert lines(marks, "lookup") == ["A-1"]
    outs = {o["call_id"]: o["output"] for o in model.inputs[1] if isinstance(o, dict) and o.get("type") == "function_call_output"}
    assert "shipped" in outs["l1"] and op in outs["r1"], "the model read the round's results"


def test_own_tool_approved_in_the_sdk_answers_the_gate(approver, session, queue, marks):
    model = ScriptedModel([[fcall("k1", "cancel_order", '{"order_id":"B-2"}')], [text("cancelled")]])
    with round_tools(approver, session, "own-gate", agents_orders.TOOLS, task_queue=queue,
                     read_only=agents_orders.READ_ONLY, tool_options=agents_orders.OPTIONS) as tools:
        agent = Agent(name="a", instructions="x", model=model, tools=tools)
        res = Runner.run_sync(agent, "cancel")
        assert res.interruptions, "the SDK asks first (the tool's needs_approval)"
        assert lines(marks, "cancel") == []
        state = res.to_state()
        for item in res.interruptions:
            state.approve(item)
        res = Runner.run_sync(agent, state)
    assert res.final_output == "cancelled"
    r = approver.round(toolround.round_workflow_id(session, "own-gate", 1))["results"][0]
    assert r["status"] == "ok" and r["approval"]["decision"] == "approved"
    assert "Agents SDK" in r["approval"].get("reason", "")
    assert lines(marks, "cancel") == ["B-2"]


def _tool_worker(queue, marks):
    env = dict(os.environ, TOOL_QUEUE=queue, MARKS=str(marks))
    return subprocess.Popen([sys.executable, os.path.join(HERE, "toolfiles", "agents_tool_worker.py")], env=env,
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
    tw = _tool_worker(queue, marks)
    procs = [tw]

    def kill():
        os.kill(procs[-1].pid, signal.SIGKILL)
        assert procs[-1].wait(10) == -signal.SIGKILL
        procs.append(_tool_worker(queue, marks))

    try:
        _wait("the tool worker", _available(approver, queue))
        model = ScriptedModel([
            [fcall("h1", "refund_order", '{"order_id":"hold-B-2","amount":3}')],
            [fcall("s1", "lookup_order", '{"order_id":"slow-C-3"}')],
            [text("found")],
        ])
        tools = round_tools(approver, session, "own-kill", agents_orders.TOOLS, task_queue=queue,
                            read_only=agents_orders.READ_ONLY, tool_options=agents_orders.OPTIONS, serve=False,
                            on_approval=lambda p: toolround.Decision(True))
        assert tools.worker is None
        done = {}
        agent = Agent(name="a", instructions="x", model=model, tools=tools)
        th = threading.Thread(target=lambda: done.update(res=Runner.run_sync(agent, "refund, then find")))
        th.start()
        _wait("the refund's attempt", lambda: len(lines(marks, "refund")) == 1)
        kill()
        _wait("the first attempt of the lookup", lambda: lines(marks, "lookup") == ["slow-C-3"])
        kill()
        th.join(120)
        assert not th.is_alive(), "the run ended"
    finally:
        for p in procs:
            p.kill()
            p.wait()
    assert done["res"].final_output == "found"
    h = approver.round(toolround.round_workflow_id(session, "own-kill", 1))["results"][0]
    assert h["status"] == "unknown_outcome", h
    assert lines(marks, "refund") == [h["operation_id"]], "the side effect ran once"
    r = approver.round(toolround.round_workflow_id(session, "own-kill", 2))["results"][0]
    assert r["status"] == "ok" and '"shipped"' in r["content"], r
    assert r["attempts"] == 2
    assert lines(marks, "lookup") == ["slow-C-3", "slow-C-3"]
    outs = {o["call_id"]: o["output"] for o in outputs(model)}
    assert "unknown" in outs["h1"] and "shipped" in outs["s1"], "the model read both"


def test_a_queue_the_worker_does_not_run_is_refused_at_the_start(approver, session, queue, marks):
    from toolround.tools import ServeRefused

    with pytest.raises(ServeRefused) as e:
        round_tools(approver, session, "own-refused", agents_orders.TOOLS, task_queue="not-listed-" + queue,
                    read_only=agents_orders.READ_ONLY, tool_options=agents_orders.OPTIONS)
    assert "not-listed-" + queue in str(e.value) and "TOOL_QUEUES" in str(e.value)
