"""One process of test_langgraph.py's restart test: it builds the graph
with a SQLite checkpointer and either starts the thread (``start``) or
resumes it with a decision (``resume approve|deny``), prints what the graph
returned as one JSON line, and exits. Its environment: TOOLROUND_URL,
TOOLROUND_APPROVER_TOKEN, SESSION, RUN, DB (the checkpointer's file); with
OWN_TOOL_QUEUE, the calls are of the app's own tools of toolfiles/lg_orders.py
(marks in MARKS), served by a tool worker the node starts in each process
(test_langgraph_own.py)."""

import json
import os
import sqlite3
import sys

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import tools_condition
from langgraph.types import Command

import toolround
from toolround.adapters.langgraph import RoundToolNode

OWN = os.environ.get("OWN_TOOL_QUEUE")
if OWN:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "toolfiles"))
    import lg_orders

    CALLS = AIMessage(content="", tool_calls=[
        {"id": "l1", "name": "lg_lookup_order", "args": {"order_id": "R-1"}},
        {"id": "k1", "name": "lg_cancel_order", "args": {"order_id": "R-1"}},
        {"id": "k2", "name": "lg_cancel_order", "args": {"order_id": "R-2"}},
    ])
else:
    CALLS = AIMessage(content="", tool_calls=[
        {"id": "c1", "name": "calculate", "args": {"expression": "6*7"}},
        {"id": "e1", "name": "edit_file", "args": {"path": "lg-restart-a.txt", "new_text": "a\n"}},
        {"id": "e2", "name": "edit_file", "args": {"path": "lg-restart-b.txt", "new_text": "b\n"}},
    ])


def main(phase, decision=None):
    # A model that answers with the calls in the first process and with its
    # last words after a resume: a graph that started over instead of
    # resuming would run the calls' turn again with the wrong message.
    model = GenericFakeChatModel(messages=iter([CALLS] if phase == "start" else [AIMessage(content="all done")]))
    client = toolround.Client(os.environ["TOOLROUND_URL"], os.environ["TOOLROUND_APPROVER_TOKEN"], timeout=30)
    own = dict(tools=lg_orders.TOOLS, task_queue=OWN, read_only=lg_orders.READ_ONLY,
               tool_options=lg_orders.OPTIONS) if OWN else {}
    node = RoundToolNode(client, os.environ["SESSION"], os.environ["RUN"], provider="claude-code",
                         state={"fetched": ["calculate", "edit_file", "read_files"]}, poll=0.5, **own)
    g = StateGraph(MessagesState)
    g.add_node("agent", lambda s: {"messages": [model.invoke(s["messages"])]})
    g.add_node("tools", node)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    conn = sqlite3.connect(os.environ["DB"], check_same_thread=False)
    app = g.compile(checkpointer=SqliteSaver(conn))
    config = {"configurable": {"thread_id": "restart"}}
    if phase == "start":
        out = app.invoke({"messages": [HumanMessage("compute and write")]}, config)
    else:
        out = app.invoke(Command(resume={"approve": decision == "approve", "reason": "from process %d" % os.getpid()}), config)
    conn.close()
    node.close()  # stops this process's tool worker, if any
    print(json.dumps({
        "interrupts": [i.value for i in out.get("__interrupt__", [])],
        "tools": [{"id": m.tool_call_id, "status": m.status, "content": m.content, "result": m.artifact}
                  for m in out["messages"] if isinstance(m, ToolMessage)],
        "last": out["messages"][-1].content,
        "round": node.run_handle.number,
    }))


if __name__ == "__main__":
    main(*sys.argv[1:])
    # Leave without the interpreter's finalization, as `python -m
    # toolround.tools` does: the Temporal client's threads of the tool worker
    # this process ran may still call into Python then and abort it with
    # SIGABRT (temporalio/sdk-python#300; seen here once as "PyGILState_Release
    # ... runtime state: finalizing") after its answer was printed.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
