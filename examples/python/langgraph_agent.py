#!/usr/bin/env python3
"""A LangGraph agent whose tool calls run as toolround rounds: RoundToolNode
takes ToolNode's place, and each step's calls are one durable round. The model
is LangGraph's fake chat model, so it runs without an LLM.

    pip install './clients/python[langgraph]'
    CONSOLE_URL=http://127.0.0.1:8780 CONSOLE_TOKEN=... python3 examples/python/langgraph_agent.py

The edit_file call waits for approval: on the console's page, or here with
APPROVE=yes (an approver token). SESSION and RUN name the run.
"""

import os
import time

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import tools_condition

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


def on_approval(pending):
    print("waits for approval:", pending["tool"], pending["arguments"])
    return toolround.Decision(True) if os.environ.get("APPROVE") == "yes" else None  # None: the console decides


tools = RoundToolNode(client, os.environ.get("SESSION", "langgraph"), os.environ.get("RUN", "run-%d" % time.time()),
                      on_approval=on_approval, provider="claude-code")
g = StateGraph(MessagesState)
g.add_node("agent", lambda s: {"messages": [model.invoke(s["messages"])]})
g.add_node("tools", tools)
g.add_edge(START, "agent")
g.add_conditional_edges("agent", tools_condition)
g.add_edge("tools", "agent")
for m in g.compile().invoke({"messages": [HumanMessage("What is 6*7? Write it down.")]})["messages"]:
    print("%s: %s" % (m.type, m.content))
