"""The function tools as toolround.tools serves them (SPEC Y6), without a
server: the SDK's schema announced as it is, its hash, the problems, and one
call through the wire's envelope. tests/adapters_own_test.go runs them."""

import asyncio
import json
import os

import pytest

pytest.importorskip("agents") if os.environ.get("CI") != "true" else None
pytest.importorskip("temporalio") if os.environ.get("CI") != "true" else None

from agents import FunctionTool, RunContextWrapper, function_tool  # noqa: E402
from temporalio.exceptions import ApplicationError  # noqa: E402

from toolround.adapters.openai_agents import toolround_tools  # noqa: E402
from toolround.tools import SchemaTool, ToolError, _core, schema_hash  # noqa: E402


@function_tool
def weather(ctx: RunContextWrapper, city: str, days: int = 1) -> dict:
    """Today's weather in a city."""
    if city == "nowhere":
        raise ToolError("no such city", code="no_city")
    if city == "boom":
        raise RuntimeError("the weather service is down")
    return {"city": city, "days": days, "call_id": ctx.context.call_id, "op": ctx.context.operation_id}


def envelope(t, args, schema=None):
    return {"v": 1, "tool": t.name, "args_json": json.dumps(args), "operation_id": "op-7", "call_id": "c9",
            "workflow_id": "toolround/s/r/1", "schema_hash": schema or t.schema_hash, "attempt": 1}


def test_the_sdk_schema_is_announced_with_its_hash():
    [t] = toolround_tools([weather], read_only=["weather"], tool_options={"weather": {"cache_seconds": 30}})
    assert isinstance(t, SchemaTool) and t.problems == []
    a = t.announcement()
    assert a["name"] == "weather" and a["description"] == "Today's weather in a city."
    assert a["parameters"] == weather.params_json_schema
    assert a["schema_hash"] == schema_hash(weather.params_json_schema)
    assert a["effect"] == "read_only" and a["cache_seconds"] == 30
    [s] = toolround_tools([weather])
    assert s.effect == "side_effect", "a tool not named read-only is a side effect"


def test_a_call_runs_the_function_tool_with_the_envelope_as_its_context():
    [t] = toolround_tools([weather])
    out = asyncio.run(_core.call(t, envelope(t, {"city": "Nantes", "days": 2})))
    assert out == {"v": 1, "is_error": False, "content": [
        {"type": "json", "json": {"city": "Nantes", "days": 2, "call_id": "c9", "op": "op-7"}}]}
    err = asyncio.run(_core.call(t, envelope(t, {"city": "nowhere", "days": 1})))
    assert err["is_error"] and err["error_code"] == "no_city"
    changed = asyncio.run(_core.call(t, envelope(t, {"city": "Nantes", "days": 1}, schema="sha256:other")))
    assert changed["error_code"] == "schema_changed"
    bad = asyncio.run(_core.call(t, envelope(t, {"town": "Nantes"})))
    assert bad["error_code"] == "invalid_arguments", "the SDK's own check of the arguments"
    with pytest.raises(ApplicationError) as e:
        asyncio.run(_core.call(t, envelope(t, {"city": "boom", "days": 1})))
    assert e.value.type == "RuntimeError", "an exception is the round's, not the SDK's failure text"


def test_problems_of_a_schema_are_named():
    tuple_schema = {"type": "object", "properties": {"p": {"type": "array", "prefixItems": [{"type": "integer"}]}}}
    odd = FunctionTool(name="odd", description="", params_json_schema=tuple_schema,
                       on_invoke_tool=lambda ctx, raw: None, strict_json_schema=False)
    [t] = toolround_tools([odd])
    assert t.problems == ["tool odd: its schema has a keyword the validator does not enforce (#/properties/p: prefixItems)"]
    with pytest.raises(TypeError):
        toolround_tools([{"name": "calculate"}])
