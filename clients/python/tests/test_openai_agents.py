import os

import pytest

pytest.importorskip("agents") if os.environ.get("CI") != "true" else None

from agents import Agent, Runner, set_tracing_disabled  # noqa: E402
from agents.items import ModelResponse  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from agents.usage import Usage  # noqa: E402
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText  # noqa: E402

import toolround  # noqa: E402
from conftest import ALL_TOOLS  # noqa: E402
from toolround.adapters.openai_agents import round_tools  # noqa: E402

set_tracing_disabled(True)

TOOLS = [
    {"name": "calculate", "description": "Evaluate an arithmetic expression.",
     "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]}},
    {"name": "edit_file", "description": "Create or edit a file.",
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "new_text": {"type": "string"},
                                                      "old_text": {"type": "string"}}, "required": ["path", "new_text"]}},
]


class ScriptedModel(Model):
    """A Model that answers from a script: the Agents SDK ships no test model."""

    def __init__(self, turns):
        self.turns = list(turns)
        self.inputs = []

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs, tracing,
                           **kwargs):
        self.inputs.append(input)
        return ModelResponse(output=self.turns.pop(0), usage=Usage(), response_id=None)

    def stream_response(self, *a, **k):
        raise NotImplementedError


def fcall(call_id, name, args):
    return ResponseFunctionToolCall(type="function_call", call_id=call_id, name=name, arguments=args, id="fc_" + call_id)


def text(t):
    return ResponseOutputMessage(id="m1", type="message", role="assistant", status="completed",
                                 content=[ResponseOutputText(type="output_text", text=t, annotations=[])])


def outputs(model):
    return [i for i in model.inputs[-1] if isinstance(i, dict) and i.get("type") == "function_call_output"]


def test_function_tools_run_through_one_round_per_turn(approver, session, workdir):
    model = ScriptedModel([
        [fcall("c1", "calculate", '{"expression":"6*7"}'), fcall("c2", "calculate", '{"expression":"2+2"}')],
        [text("done")],
    ])
    tools = round_tools(approver, session, "oa", TOOLS, provider="claude-code", state={"fetched": ALL_TOOLS})
    agent = Agent(name="a", instructions="x", model=model, tools=tools)
    res = Runner.run_sync(agent, "compute")
    assert res.final_output == "done"
    outs = {o["call_id"]: o["output"] for o in outputs(model)}
    assert "42" in outs["c1"] and "4" in outs["c2"]
    r1 = approver.round(toolround.round_workflow_id(session, "oa", 1))
    assert sorted(r["call_id"] for r in r1["results"]) == ["c1", "c2"], "both calls in one round"


def test_needs_approval_maps_to_the_gate(approver, session, workdir):
    model = ScriptedModel([
        [fcall("e1", "edit_file", '{"path":"oa.txt","new_text":"agents\\n"}')],
        [text("written")],
    ])
    tools = round_tools(approver, session, "oagate", TOOLS, provider="claude-code", state={"fetched": ALL_TOOLS})
    agent = Agent(name="a", instructions="x", model=model, tools=tools)
    res = Runner.run_sync(agent, "write")
    assert res.interruptions, "the SDK asks first"
    assert not os.path.exists(os.path.join(workdir, "oa.txt"))
    state = res.to_state()
    for item in res.interruptions:
        state.approve(item)
    res = Runner.run_sync(agent, state)
    assert res.final_output == "written"
    with open(os.path.join(workdir, "oa.txt")) as f:
        assert f.read() == "agents\n"
    r = approver.round(toolround.round_workflow_id(session, "oagate", 1))["results"][0]
    assert r["status"] == "ok" and r["approval"]["decision"] == "approved"
    assert "Agents SDK" in r["approval"].get("reason", "")


def test_rejected_in_the_sdk_never_runs(approver, session, workdir):
    model = ScriptedModel([
        [fcall("e1", "edit_file", '{"path":"rej.txt","new_text":"x"}')],
        [text("fine")],
    ])
    tools = round_tools(approver, session, "oarej", TOOLS, provider="claude-code", state={"fetched": ALL_TOOLS})
    agent = Agent(name="a", instructions="x", model=model, tools=tools)
    res = Runner.run_sync(agent, "write")
    state = res.to_state()
    for item in res.interruptions:
        state.reject(item)
    res = Runner.run_sync(agent, state)
    assert res.final_output == "fine"
    assert not os.path.exists(os.path.join(workdir, "rej.txt"))
    with pytest.raises(toolround.APIError) as e:
        approver.round(toolround.round_workflow_id(session, "oarej", 1))
    assert e.value.status == 404
