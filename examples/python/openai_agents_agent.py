#!/usr/bin/env python3
"""An OpenAI Agents SDK agent whose function tools run through toolround
rounds. The SDK's needs_approval is the round's gate: the run stops with an
interruption, the application approves it, and the round records the
approval. The model is scripted (the SDK ships no test model), so it runs
without an LLM.

    pip install './clients/python[openai-agents]'
    CONSOLE_URL=http://127.0.0.1:8780 CONSOLE_TOKEN=... python3 examples/python/openai_agents_agent.py

CONSOLE_TOKEN is an approver token (the adapter answers the gate). SESSION and
RUN name the run.
"""

import os
import time

from agents import Agent, Runner, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

import toolround
from toolround.adapters.openai_agents import round_tools

set_tracing_disabled(True)


class ScriptedModel(Model):
    def __init__(self, turns):
        self.turns = list(turns)

    async def get_response(self, *args, **kwargs):
        return ModelResponse(output=self.turns.pop(0), usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError


model = ScriptedModel([
    # claude-code's calls return their schema until find_tools has loaded them (S2, S4).
    [ResponseFunctionToolCall(type="function_call", call_id="f1", name="find_tools",
                              arguments='{"query":"select:calculate,edit_file"}')],
    [ResponseFunctionToolCall(type="function_call", call_id="c1", name="calculate", arguments='{"expression":"6*7"}'),
     ResponseFunctionToolCall(type="function_call", call_id="e1", name="edit_file",
                              arguments='{"path":"answer.txt","new_text":"42\\n"}')],
    [ResponseOutputMessage(id="m1", type="message", role="assistant", status="completed",
                           content=[ResponseOutputText(type="output_text", text="Wrote 42 to answer.txt.", annotations=[])])],
])
client = toolround.Client(os.environ.get("CONSOLE_URL", "http://127.0.0.1:8780"), os.environ["CONSOLE_TOKEN"])
# The schemas are the server's: claude-code's tools array loads every built-in tool.
TOOLS = [t for t in client.tools("claude-code")["tools"] if t["function"]["name"] in ("find_tools", "calculate", "edit_file")]
tools = round_tools(client, os.environ.get("SESSION", "agents-sdk"), os.environ.get("RUN", "run-%d" % time.time()), TOOLS,
                    provider="claude-code")
agent = Agent(name="writer", instructions="Answer with tools.", model=model, tools=tools)
result = Runner.run_sync(agent, "What is 6*7? Write it down.")
while result.interruptions:
    state = result.to_state()
    for item in result.interruptions:
        print("approving", item.name if hasattr(item, "name") else item)
        state.approve(item)
    result = Runner.run_sync(agent, state)
print(result.final_output)
