#!/usr/bin/env python3
"""A LangGraph agent whose tool calls run as toolround rounds: RoundToolNode
takes ToolNode's place, and each step's calls are one durable round. The model
is LangGraph's fake chat model, so it runs without an LLM.

    pip install './clients/python[langgraph]'
    CONSOLE_URL=http://127.0.0.1:8780 CONSOLE_TOKEN=... python3 examples/python/langgraph_agent.py

The edit_file call waits for approval: the graph interrupts with the pending
call, and this script resumes it with a decision, asked here (APPROVE=yes
approves without asking; the token must be an approver's). The checkpointer
keeps the interrupted graph: with a persistent one (SqliteSaver, ...) another
process may resume it. SESSION and RUN name the run.
"""

import os
import time

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import tools_condition
from langgraph.types import Command

import toolround
from toolround.adapters.langgraph import RoundToolNode

client = toolround.Client(os.environ.get("CONSOLE_URL", "http://127.0.0.1:8780"), os.environ["CONSOLE_TOKEN"])
model = GenericFakeChatModel(messages=iter([
    # claude-code's calls return their schema until find_tools has loaded them (S2, S4).
    AIMessage(content="", tool_calls=[{"id": "f1", "name": "find_tools", "args": {"query": "select:calculate,edit_file"}}]),
    AIMessage(content="", tool_calls=[
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
tools = RoundToolNode(client, os.environ.get("SESSION", "langgraph"), run, provider="claude-code")
g = StateGraph(MessagesState)
g.add_node("agent", lambda s: {"messages": [model.invoke(s["messages"])]})
g.add_node("tools", tools)
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
