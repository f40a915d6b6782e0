import os

import pytest

pytest.importorskip("langgraph") if os.environ.get("CI") != "true" else None

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402
from langgraph.graph import START, MessagesState, StateGraph  # noqa: E402
from langgraph.prebuilt import tools_condition  # noqa: E402

import toolround  # noqa: E402
from conftest import ALL_TOOLS  # noqa: E402
from toolround.adapters.langgraph import RoundToolNode  # noqa: E402


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
