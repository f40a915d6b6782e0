import json
import os
import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip("langgraph") if os.environ.get("CI") != "true" else None

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402
from langgraph.graph import START, MessagesState, StateGraph  # noqa: E402
from langgraph.prebuilt import tools_condition  # noqa: E402

import toolround  # noqa: E402
from conftest import ALL_TOOLS  # noqa: E402
from toolround.adapters.langgraph import RoundToolNode, decision_of  # noqa: E402


def graph(model, node):
    g = StateGraph(MessagesState)
    g.add_node("agent", lambda s: {"messages": [model.invoke(s["messages"])]})
    g.add_node("tools", node)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    return g.compile()


def test_tool_node_runs_each_step_as_one_round(approver, session, workdir):
    model = GenericFakeChatModel(messages=iter([
        AIMessage(content="", tool_calls=[
            {"id": "c1", "name": "calculate", "args": {"expression": "6*7"}},
            {"id": "e1", "name": "edit_file", "args": {"path": "lg.txt", "new_text": "langgraph\n"}},
            {"id": "x1", "name": "no_such_tool", "args": {}},
        ]),
        AIMessage(content="", tool_calls=[{"id": "r1", "name": "read_files", "args": {"paths": ["lg.txt"]}}]),
        AIMessage(content="all done"),
    ]))
    asked = []

    def on_approval(p):
        asked.append(p["call_id"])
        return toolround.Decision(True)

    node = RoundToolNode(approver, session, "lg", on_approval=on_approval, provider="claude-code",
                         state={"fetched": ALL_TOOLS})
    out = graph(model, node).invoke({"messages": [HumanMessage("compute and write")]})
    msgs = out["messages"]
    tools = [m for m in msgs if isinstance(m, ToolMessage)]
    assert [m.tool_call_id for m in tools] == ["c1", "e1", "x1", "r1"]
    assert "42" in tools[0].content and tools[0].status == "success"
    assert tools[1].status == "success" and asked == ["e1"], "the approval went through the gate"
    assert tools[2].status == "error" and tools[2].artifact["status"] == "unknown"
    assert "langgraph" in tools[3].content
    assert msgs[-1].content == "all done"
    # Two steps: two rounds of the run, numbered by the handle.
    assert node.run_handle.number == 2
    r1 = approver.round(toolround.round_workflow_id(session, "lg", 1))
    assert [r["call_id"] for r in r1["results"]] == ["c1", "e1", "x1"]
    with open(os.path.join(workdir, "lg.txt")) as f:
        assert f.read() == "langgraph\n"


def test_tool_node_denied_call_is_an_error_message(approver, session, workdir):
    model = GenericFakeChatModel(messages=iter([
        AIMessage(content="", tool_calls=[{"id": "e1", "name": "edit_file", "args": {"path": "no.txt", "new_text": "x"}}]),
        AIMessage(content="ok"),
    ]))
    node = RoundToolNode(approver, session, "lgdeny", on_approval=lambda p: toolround.Decision(False, reason="no"),
                         provider="claude-code", state={"fetched": ALL_TOOLS})
    out = graph(model, node).invoke({"messages": [HumanMessage("write")]})
    tm = [m for m in out["messages"] if isinstance(m, ToolMessage)][0]
    assert tm.status == "error" and tm.artifact["status"] == "skipped"
    assert not os.path.exists(os.path.join(workdir, "no.txt"))


def _process(url, approver, session, db, *args):
    """Runs one process of langgraph_restart.py to its exit and returns what
    it printed."""
    here = os.path.dirname(__file__)
    env = dict(os.environ, TOOLROUND_URL=url, TOOLROUND_APPROVER_TOKEN=approver.token, SESSION=session, RUN="restart",
               DB=db, PYTHONPATH=os.path.join(here, "..", "src"))
    out = subprocess.run([sys.executable, os.path.join(here, "langgraph_restart.py")] + list(args), env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_waiting_call_interrupts_and_a_new_process_resumes_the_same_round(url, approver, session, workdir, tmp_path):
    pytest.importorskip("langgraph.checkpoint.sqlite") if os.environ.get("CI") != "true" else None
    db = str(tmp_path / "checkpoints.sqlite")
    wid = toolround.round_workflow_id(session, "restart", 1)
    a, b = os.path.join(workdir, "lg-restart-a.txt"), os.path.join(workdir, "lg-restart-b.txt")

    # The first process: the round waits for e1 and e2; the graph interrupts
    # with e1's pending entry and the process exits.
    first = _process(url, approver, session, db, "start")
    assert [(i["call_id"], i["tool"], i["workflow_id"]) for i in first["interrupts"]] == [("e1", "edit_file", wid)]
    assert first["interrupts"][0]["approval_id"] and first["tools"] == []
    view = approver.round(wid)
    assert view["status"] == "running"
    assert sorted(p["call_id"] for p in view["pending"]) == ["e1", "e2"]
    assert not os.path.exists(a)

    # A second process resumes with an approval of e1: the same round goes
    # on and interrupts for e2, the next call that waits.
    second = _process(url, approver, session, db, "resume", "approve")
    assert [(i["call_id"], i["workflow_id"]) for i in second["interrupts"]] == [("e2", wid)]
    assert [p["call_id"] for p in approver.round(wid)["pending"]] == ["e2"]

    # A third process denies e2: the round finishes, once, and the graph
    # goes on to the model's last turn.
    third = _process(url, approver, session, db, "resume", "deny")
    assert third["interrupts"] == []
    assert [(t["id"], t["status"]) for t in third["tools"]] == [("c1", "success"), ("e1", "success"), ("e2", "error")]
    assert "42" in third["tools"][0]["content"]
    assert third["tools"][2]["result"]["status"] == "skipped"
    assert third["last"] == "all done" and third["round"] == 1
    with open(a) as f:
        assert f.read() == "a\n"
    assert not os.path.exists(b)
    res = approver.round(wid)
    assert [r["call_id"] for r in res["results"]] == ["c1", "e1", "e2"]
    assert res["results"][1]["status"] == "ok"
    with pytest.raises(toolround.APIError) as e:
        approver.round(toolround.round_workflow_id(session, "restart", 2))
    assert e.value.status == 404, "the resumed graph ran no second round"


def test_interrupt_false_waits_for_the_console(approver, session, workdir):
    model = GenericFakeChatModel(messages=iter([
        AIMessage(content="", tool_calls=[{"id": "e1", "name": "edit_file", "args": {"path": "lg-block.txt", "new_text": "x\n"}}]),
        AIMessage(content="ok"),
    ]))
    wid = toolround.round_workflow_id(session, "lgblock", 1)

    def person():
        for _ in range(300):
            for entry in approver.inbox(session):
                for p in entry["pending"]:
                    if entry["workflow_id"] == wid:
                        approver.approve(wid, p["call_id"], p.get("approval_id"), wait_id=p.get("wait_id"))
                        return
            time.sleep(0.1)

    t = threading.Thread(target=person)
    t.start()
    node = RoundToolNode(approver, session, "lgblock", interrupt=False, provider="claude-code", poll=0.5,
                         state={"fetched": ALL_TOOLS})
    out = graph(model, node).invoke({"messages": [HumanMessage("write")]})
    t.join()
    tm = [m for m in out["messages"] if isinstance(m, ToolMessage)][0]
    assert tm.status == "success" and "__interrupt__" not in out
    with open(os.path.join(workdir, "lg-block.txt")) as f:
        assert f.read() == "x\n"


def test_resume_values():
    assert decision_of(True) == toolround.Decision(True)
    assert decision_of("deny") == toolround.Decision(False)
    assert decision_of({"approve": True, "args": {"path": "x"}}).args == {"path": "x"}
    with pytest.raises(ValueError, match="aprove"):
        decision_of({"aprove": True})
    with pytest.raises(ValueError, match="unknown fields"):
        decision_of({"approve": True, "reasn": "x"})
