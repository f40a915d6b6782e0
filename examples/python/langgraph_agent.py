#!/usr/bin/env python3
"""A LangGraph agent whose tool calls run as toolround rounds: RoundToolNode
takes ToolNode's place, and each step's calls are one durable round. First
its own tool, order_status (LangChain's @tool), served by a tool worker the
node starts in this process, then toolround's tools, in the same round. The
model is LangChain's fake chat model, so it runs without an LLM.

    pip install './clients/python[langgraph,tools]'
    CONSOLE_URL=http://127.0.0.1:8780 CONSOLE_TOKEN=... python3 examples/python/langgraph_agent.py

The edit_file call waits for approval: the graph interrupts with the pending
call, and this script resumes it with a decision, asked here (APPROVE=yes
approves without asking; the token must be an approver's). The checkpointer
keeps the interrupted graph: with a persistent one (SqliteSaver, ...) another
process may resume it. SESSION and RUN name the run. The worker runs the
tools of TOOL_QUEUE (my-tools) when its TOOL_QUEUES names it
(TOOL_QUEUES=my-tools:trusted); TEMPORAL_ADDRESS and TOOLROUND_TASK_QUEUE are
the worker's.
"""

import os
import time

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import tools_condition
from langgraph.types import Command

import toolround
from toolround.adapters.langgraph import RoundToolNode


@tool
def order_status(order_id: str) -> str:
    """Look an order up by its id."""
    return "order %s: shipped" % order_id


client = toolround.Client(os.environ.get("CONSOLE_URL", "http://127.0.0.1:8780"), os.environ["CONSOLE_TOKEN"])
# The schemas of toolround's tools are the server's; with them in tools= the
# node tells the round that the model has them (a real model gets them all
# with chat_model.bind_tools(TOOLS)).
TOOLS = [order_status] + [t for t in client.tools("claude-code")["tools"] if t["function"]["name"] in ("calculate", "edit_file")]
model = GenericFakeChatModel(messages=iter([
    AIMessage(content="", tool_calls=[
        {"id": "o1", "name": "order_status", "args": {"order_id": "A-1"}},
        {"id": "c1", "name": "calculate", "args": {"expression": "6*7"}},
        {"id": "e1", "name": "edit_file", "args": {"path": "answer.txt", "new_text": "42\n"}},
    ]),
    AIMessage(content="I wrote the answer to answer.txt."),
]))


def decide(pending):
    print("waits for approval:", pending["tool"], pending["arguments"])
    approve = os.environ.get("APPROVE") == "yes" or input("approve? [y/N] ").strip().lower().startswith("y")
    return {"approve": approve}


run = os.environ.get("RUN", "run-%d" % time.time())
node = RoundToolNode(client, os.environ.get("SESSION", "langgraph"), run, tools=TOOLS,
                     task_queue=os.environ.get("TOOL_QUEUE", "my-tools"), read_only=["order_status"])
g = StateGraph(MessagesState)
g.add_node("agent", lambda s: {"messages": [model.invoke(s["messages"])]})
g.add_node("tools", node)
g.add_edge(START, "agent")
g.add_conditional_edges("agent", tools_condition)
g.add_edge("tools", "agent")
app = g.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": run}}
out = app.invoke({"messages": [HumanMessage("What is 6*7? Write it down.")]}, config)
while out.get("__interrupt__"):  # a call waits for a decision
    out = app.invoke(Command(resume=decide(out["__interrupt__"][0].value)), config)
for m in out["messages"]:
    print("%s: %s" % (m.type, m.content))
node.close()  # stops the tool worker
