#!/usr/bin/env python3
"""An OpenAI Agents SDK agent whose function tools run through toolround
rounds: first its own function tool, lookup_order, served by a tool worker
the adapter starts in this process, then toolround's tools. The SDK's
needs_approval is the round's gate: the run stops with an interruption, the
application approves it, and the round records the approval. The model is
scripted (the SDK ships no test model), so it runs without an LLM.

    pip install './clients/python[openai-agents,tools]'
    CONSOLE_URL=http://127.0.0.1:8780 CONSOLE_TOKEN=... python3 examples/python/openai_agents_agent.py

CONSOLE_TOKEN is an approver token (the adapter answers the gate). SESSION and
RUN name the run. The worker runs the tools of TOOL_QUEUE (my-tools) when its
TOOL_QUEUES names it (TOOL_QUEUES=my-tools:trusted); TEMPORAL_ADDRESS and
TOOLROUND_TASK_QUEUE are the worker's.
"""

import os
import time

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

import toolround
from toolround.adapters.openai_agents import round_tools

set_tracing_disabled(True)


@function_tool
def lookup_order(order_id: str) -> str:
    """Look an order up by its id."""
    return "order %s: shipped" % order_id


class ScriptedModel(Model):
    def __init__(self, turns):
        self.turns = list(turns)

    async def get_response(self, *args, **kwargs):
        return ModelResponse(output=self.turns.pop(0), usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError


model = ScriptedModel([
    [ResponseFunctionToolCall(type="function_call", call_id="o1", name="lookup_order", arguments='{"order_id":"A-1"}'),
     ResponseFunctionToolCall(type="function_call", call_id="c1", name="calculate", arguments='{"expression":"6*7"}'),
     ResponseFunctionToolCall(type="function_call", call_id="e1", name="edit_file",
                              arguments='{"path":"answer.txt","new_text":"42\\n"}')],
    [ResponseOutputMessage(id="m1", type="message", role="assistant", status="completed",
                           content=[ResponseOutputText(type="output_text", text="Wrote 42 to answer.txt.", annotations=[])])],
])
client = toolround.Client(os.environ.get("CONSOLE_URL", "http://127.0.0.1:8780"), os.environ["CONSOLE_TOKEN"])
# The schemas are the server's; with an own tool the adapter tells the round
# that the model has every schema the SDK gave it.
TOOLS = [t for t in client.tools("claude-code")["tools"] if t["function"]["name"] in ("calculate", "edit_file")]
tools = round_tools(client, os.environ.get("SESSION", "agents-sdk"), os.environ.get("RUN", "run-%d" % time.time()),
                    [lookup_order] + TOOLS, task_queue=os.environ.get("TOOL_QUEUE", "my-tools"), read_only=["lookup_order"])
agent = Agent(name="writer", instructions="Answer with tools.", model=model, tools=tools)
result = Runner.run_sync(agent, "What is 6*7? Write it down.")
while result.interruptions:
    state = result.to_state()
    for item in result.interruptions:
        print("approving", item.name if hasattr(item, "name") else item)
        state.approve(item)
    result = Runner.run_sync(agent, state)
for item in result.new_items:
    if item.type == "tool_call_output_item":
        print("tool output:", item.output)
print(result.final_output)
tools.close()
