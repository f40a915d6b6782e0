"""toolround.tools: tools from typed functions, the wire of one call, the
check command, and tool workers served against the real Temporal dev server
(TEMPORAL_ADDRESS, else 127.0.0.1:7233) with test doubles of toolround's
catalog and of a round that calls a tool. Without temporalio installed, or
without a reachable server, these skip; under CI=true they fail instead."""

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from datetime import timedelta
from typing import Tuple, Annotated, Optional

import pytest

CI = os.environ.get("CI") == "true"
try:
    import temporalio  # noqa: F401
except ImportError:
    if CI:
        raise
    pytest.skip("temporalio is not installed (pip install 'toolround[tools]')", allow_module_level=True)

from pydantic import BaseModel, Field  # noqa: E402
from temporalio import workflow  # noqa: E402
from temporalio.client import Client  # noqa: E402
from temporalio.common import RetryPolicy  # noqa: E402
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError  # noqa: E402
from temporalio.worker import UnsandboxedWorkflowRunner, Worker  # noqa: E402
from temporalio.workflow import ActivityCancellationType  # noqa: E402

from toolround.tools import (  # noqa: E402
    RESULT_LIMIT, Image, Json, ServeRefused, Text, ToolContext, ToolError, problems_of, schema_hash, serve, serve_async,
    tool,
)
from toolround.tools import _core  # noqa: E402
from toolround.tools.__main__ import main  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "src")
FILES = os.path.join(HERE, "toolfiles")


def run(coro):
    return asyncio.run(coro)


def envelope(t, args=None, *, args_json=None, schema_hash_=None, operation_id="", attempt=1):
    return {"v": 1, "tool": t.name, "args_json": args_json if args_json is not None else json.dumps(args or {}),
            "operation_id": operation_id, "call_id": "c1", "workflow_id": "round/s1/r1/1",
            "schema_hash": t.schema_hash if schema_hash_ is None else schema_hash_, "attempt": attempt}


# --- tools from typed functions --------------------------------------------

class Place(BaseModel):
    city: str
    country: str = "FR"


@tool(effect="read_only", subject="q")
def search(q: str, limit: int = 10, place: Optional[Place] = None, *, ctx: ToolContext) -> list:
    """Search the notes."""
    return {"q": q, "limit": limit, "place": place, "call_id": ctx.call_id}


def test_schema_comes_from_the_type_hints_without_ctx():
    s = search.parameters
    assert s["type"] == "object"
    assert s["additionalProperties"] is False
    assert list(s["properties"]) == ["q", "limit", "place"]
    assert s["properties"]["q"] == {"type": "string"}
    assert s["properties"]["limit"] == {"type": "integer", "default": 10}
    assert s["required"] == ["q"]
    assert s["$defs"]["Place"]["properties"]["city"]["type"] == "string"
    assert "ctx" not in json.dumps(s)
    assert "title" not in s
    assert search.description == "Search the notes."
    assert search.name == "search" and search.problems == []


def test_announcement_has_every_field_of_the_wire():
    a = search.announcement()
    assert a == {"name": "search", "description": "Search the notes.", "parameters": search.parameters,
                 "effect": "read_only", "concurrent": False, "cache_seconds": 0, "subject": "q",
                 "timeout_seconds": 60, "schedule_to_start_seconds": 300, "heartbeat_seconds": 20,
                 "reconcile": False, "schema_hash": schema_hash(search.parameters)}


def test_name_override_and_description_and_field_descriptions():
    @tool(effect="side_effect", name="post_note", description="Post a note.")
    def post(text: Annotated[str, Field(description="the note", max_length=100)]) -> str:
        "ignored"
        return text
    assert post.name == "post_note" and post.description == "Post a note."
    assert post.parameters["properties"]["text"] == {"type": "string", "description": "the note", "maxLength": 100}
    assert post("x") == "x", "a tool is still the function"


def test_parameter_names_that_pydantic_reserves_are_fine():
    @tool(effect="read_only")
    def convert(json: str, model_config: int = 1, schema: bool = False) -> str:
        "Names BaseModel has attributes for."
        return json
    assert convert.problems == []
    assert list(convert.parameters["properties"]) == ["json", "model_config", "schema"]
    out = run(_core.call(convert, envelope(convert, {"json": "x", "model_config": 2})))
    assert out["content"] == [{"type": "text", "text": "x"}]


def test_problems_bad_name_missing_hint_keyword_and_duplicates():
    @tool(effect="read_only", name="Bad-Name")
    def a(q: str) -> str:
        return q

    @tool(effect="read_only")
    def b(q, *rest: str) -> str:
        return q

    @tool(effect="read_only")
    def c(n: Tuple[int, str]) -> int:
        return n[0]

    @tool(effect="maybe", reconcile=lambda q: True, subject="n")
    def d(n: int) -> int:
        return n

    @tool(effect="read_only", name="c")
    def c2(n: int) -> int:
        return n

    @tool(effect="read_only", name="x" * 65)
    def e(n: int) -> int:
        return n

    lines = problems_of([a, b, c, d, c2, e])
    text = "\n".join(lines)
    assert "tool Bad-Name: the name 'Bad-Name' does not match [a-z][a-z0-9_]{0,63}" in text
    assert "tool b: parameter q has no type hint" in text
    assert "tool b: parameter *rest: *args and **kwargs have no schema" in text
    assert "tool c: its schema has a keyword the validator does not enforce (#/properties/n: prefixItems)" in text
    assert "tool d: effect is 'maybe'" in text
    assert "tool d: reconcile is for side-effecting tools" in text
    assert "tool d: subject 'n' is not a string parameter" in text
    assert "tool c: the name is used twice" in text
    assert "tool %s: the name" % ("x" * 65) in text
    assert len(lines) == 9, text


def test_tool_needs_an_effect():
    with pytest.raises(TypeError, match="effect"):
        tool(lambda q: q)
    with pytest.raises(TypeError, match="effect"):
        tool()


def test_ctx_must_be_keyword_only():
    @tool(effect="read_only")
    def f(q: str, ctx: ToolContext) -> str:
        return q
    assert f.problems == ["tool f: parameter ctx: the context is keyword-only (after a *)"]


def test_schema_hash_is_sha256_of_the_canonical_json():
    s = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    # The test vector of docs/your-own-tools.md.
    assert schema_hash(s) == "sha256:f6a7df916a5c0aba8b22d0dde009dcffc865c224d2a63a728c2792e2662b5a1e"
    assert _core.canonical_json(s) == b'{"properties":{"q":{"type":"string"}},"required":["q"],"type":"object"}'
    assert schema_hash(dict(reversed(list(s.items())))) == schema_hash(s), "key order does not matter"
    assert _core.canonical_json({"d": "café <&>"}) == '{"d":"café <&>"}'.encode("utf-8"), "UTF-8, nothing escaped"
    assert search.schema_hash == schema_hash(search.parameters)


# --- one call: the envelope in, the result out ------------------------------

def test_call_maps_the_envelope_to_arguments_and_ctx():
    out = run(_core.call(search, envelope(search, {"q": "tea", "place": {"city": "Lyon"}})))
    assert out == {"v": 1, "is_error": False, "content": [{"type": "json", "json": {
        "q": "tea", "limit": 10, "place": {"city": "Lyon", "country": "FR"}, "call_id": "c1"}}]}


def test_ctx_carries_the_operation_id_and_the_rest_of_the_envelope():
    seen = {}

    @tool(effect="side_effect")
    async def pay(amount: int, *, ctx: ToolContext) -> None:
        seen.update(vars(ctx))

    out = run(_core.call(pay, envelope(pay, {"amount": 3}, operation_id="op-1", attempt=2)))
    assert out == {"v": 1, "content": [], "is_error": False}
    assert seen["operation_id"] == "op-1" and seen["attempt"] == 2 and seen["tool"] == "pay"
    assert seen["call_id"] == "c1" and seen["workflow_id"] == "round/s1/r1/1"


@pytest.mark.parametrize("value,content", [
    ("hi", [{"type": "text", "text": "hi"}]),
    (None, []),
    ({"a": [1, 2.5, True, None]}, [{"type": "json", "json": {"a": [1, 2.5, True, None]}}]),
    ([1, 2], [{"type": "json", "json": [1, 2]}]),
    (7, [{"type": "json", "json": 7}]),
    (False, [{"type": "json", "json": False}]),
    (Place(city="Oslo"), [{"type": "json", "json": {"city": "Oslo", "country": "FR"}}]),
    ({"p": Place(city="Oslo")}, [{"type": "json", "json": {"p": {"city": "Oslo", "country": "FR"}}}]),
    (Text("t"), [{"type": "text", "text": "t"}]),
    ([Text("t"), Json({"k": 1}), Image(b"\x89PNG", "image/png")],
     [{"type": "text", "text": "t"}, {"type": "json", "json": {"k": 1}},
      {"type": "image", "data": "iVBORw==", "mime_type": "image/png"}]),
])
def test_return_values_map_to_content(value, content):
    @tool(effect="read_only")
    def f() -> object:
        return value
    assert run(_core.call(f, envelope(f))) == {"v": 1, "content": content, "is_error": False}


def _called_tool():
    calls = []

    @tool(effect="read_only")
    def f(q: str, n: int = 1) -> str:
        calls.append(q)
        return q
    return f, calls


def test_schema_changed_refuses_before_calling():
    f, calls = _called_tool()
    out = run(_core.call(f, envelope(f, {"q": "x"}, schema_hash_="sha256:old")))
    assert out["is_error"] is True and out["error_code"] == "schema_changed"
    assert "schema of f has changed" in out["content"][0]["text"]
    assert calls == []


@pytest.mark.parametrize("args_json,message", [
    ('{"n": 2}', "q: Field required"),
    ('{"q": "x", "n": "many"}', "n: Input should be a valid integer"),
    ('{"q": "x", "extra": 1}', "extra: Extra inputs are not permitted"),
    ('{"q": ', "the arguments are not JSON"),
    ('["x"]', "the arguments are not a JSON object"),
])
def test_invalid_arguments_are_an_error_result_without_a_call(args_json, message):
    f, calls = _called_tool()
    out = run(_core.call(f, envelope(f, args_json=args_json)))
    assert out["is_error"] is True and out["error_code"] == "invalid_arguments"
    assert message in out["content"][0]["text"]
    assert calls == []


def test_tool_error_is_an_error_result_with_its_code():
    @tool(effect="read_only")
    def f(code: str) -> str:
        raise ToolError("no such city", code=code or None)
    out = run(_core.call(f, envelope(f, {"code": ""})))
    assert out == {"v": 1, "is_error": True, "error_code": "tool_error",
                   "content": [{"type": "text", "text": "no such city"}]}
    assert run(_core.call(f, envelope(f, {"code": "not_found"})))["error_code"] == "not_found"


def test_an_exception_is_an_activity_failure_of_its_class_name():
    class QuotaExceeded(Exception):
        pass

    @tool(effect="read_only")
    async def f() -> str:
        raise QuotaExceeded("try later")
    with pytest.raises(ApplicationError) as e:
        run(_core.call(f, envelope(f)))
    assert e.value.type == "QuotaExceeded" and e.value.message == "try later"
    assert not e.value.non_retryable


@pytest.mark.parametrize("value,named", [
    (b"raw", "bytes"),
    ({1, 2}, "set"),
    ({"when": object()}, "object"),
    (float("nan"), "not JSON"),
])
def test_a_result_that_is_not_json_is_bad_result(value, named):
    @tool(effect="read_only")
    def f() -> object:
        return value
    out = run(_core.call(f, envelope(f)))
    assert out["is_error"] is True and out["error_code"] == "bad_result"
    assert named in out["content"][0]["text"]


def test_a_result_above_1_mib_is_result_too_large():
    @tool(effect="read_only")
    def f(n: int) -> str:
        return "x" * n
    ok = run(_core.call(f, envelope(f, {"n": RESULT_LIMIT - 200})))
    assert ok["is_error"] is False and _core.wire_size(ok) <= RESULT_LIMIT
    out = run(_core.call(f, envelope(f, {"n": RESULT_LIMIT})))
    assert out["is_error"] is True and out["error_code"] == "result_too_large"
    assert "more than the limit of 1048576 bytes" in out["content"][0]["text"]
    # Non-ASCII text counts as the json/plain converter writes it: "é" is 6 bytes, \u00e9.
    g = tool(effect="read_only", name="g")(lambda: "é" * (RESULT_LIMIT // 5))
    assert run(_core.call(g, envelope(g)))["error_code"] == "result_too_large"


def test_reconcile_maps_true_false_and_none():
    answers = {"a": True, "b": False, "c": None}

    def settled(key: str, *, ctx: ToolContext):
        assert ctx.operation_id == "op-9"
        return answers[key]

    @tool(effect="side_effect", reconcile=settled)
    def put(key: str) -> str:
        return key
    assert put.announcement()["reconcile"] is True
    for key, want in answers.items():
        out = run(_core.reconcile(put, envelope(put, {"key": key}, operation_id="op-9")))
        assert out == {"v": 1, "took_effect": want, "content": []}


def test_heartbeats_come_every_interval_while_a_sync_function_runs():
    beats = []

    @tool(effect="read_only", heartbeat=0.3)
    def slow() -> str:
        time.sleep(0.5)
        return "done"
    out = run(_core.call(slow, envelope(slow), heartbeat=lambda: beats.append(time.monotonic())))
    assert out["content"] == [{"type": "text", "text": "done"}]
    assert len(beats) >= 4, beats  # at 0, 0.1, 0.2, 0.3, 0.4 seconds


def test_serve_refuses_a_tool_with_problems_before_connecting(capsys):
    @tool(effect="read_only")
    def f(q) -> str:
        return q
    with pytest.raises(SystemExit) as e:
        serve([f], "q", address="127.0.0.1:1")
    assert e.value.code == 2
    assert capsys.readouterr().err == "toolround.tools: tool f: parameter q has no type hint\n"


def test_base_package_does_not_import_temporalio():
    out = subprocess.run([sys.executable, "-c", "import sys, toolround; print('temporalio' in sys.modules)"],
                         capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=SRC), check=True)
    assert out.stdout.strip() == "False"


# --- python -m toolround.tools check ----------------------------------------

def test_check_prints_the_tools_it_would_announce(capsys):
    assert main(["check", os.path.join(FILES, "good.py")]) == 0
    out = json.loads(capsys.readouterr().out)
    names = [(t["name"], t["effect"]) for t in out["tools"]]
    assert names == [("search", "read_only"), ("send", "side_effect")]
    s = out["tools"][0]
    assert s["parameters"]["properties"]["q"] == {"type": "string"}
    assert s["schema_hash"] == schema_hash(s["parameters"])
    assert s["subject"] == "q" and s["cache_seconds"] == 30
    assert out["tools"][1]["heartbeat_seconds"] == 6


def test_check_exits_2_with_one_line_per_problem(capsys):
    assert main(["check", os.path.join(FILES, "bad.py")]) == 2
    got = capsys.readouterr()
    assert got.out == ""
    lines = got.err.strip().splitlines()
    assert len(lines) == 4, lines
    assert all(line.startswith("toolround.tools: tool ") for line in lines)
    assert "Search" in lines[0] and "does not match" in lines[0]
    assert "parameter q has no type hint" in lines[1]
    assert "prefixItems" in lines[2]
    assert "thirds: the name is used twice" in lines[3]


def test_readme_tool_worker_is_checked(tmp_path, capsys):
    with open(os.path.join(HERE, "..", "README.md")) as f:
        readme = f.read()
    section = readme[readme.index("## Your own tools"):]
    snippet = section[section.index("```python\n") + len("```python\n"):]
    snippet = snippet[:snippet.index("```")]
    path = tmp_path / "weather.py"
    path.write_text(snippet)
    assert main(["check", str(path)]) == 0
    [t] = json.loads(capsys.readouterr().out)["tools"]
    assert t["name"] == "weather" and t["parameters"]["required"] == ["city"]
    assert t["description"] == "Today's weather in a city."


def test_check_command_line_errors():
    def cli(*args):
        return subprocess.run([sys.executable, "-m", "toolround.tools", *args], capture_output=True, text=True,
                              env=dict(os.environ, PYTHONPATH=SRC))
    out = cli("check", os.path.join(FILES, "nothing-here.py"))
    assert out.returncode == 2 and "nothing-here.py: no such file" in out.stderr
    out = cli("serve", os.path.join(FILES, "good.py"))
    assert out.returncode == 2 and "--task-queue" in out.stderr
    out = cli()
    assert out.returncode == 2 and "serve,check" in out.stderr
    out = cli("check", os.path.join(FILES, "good.py"))
    assert out.returncode == 0 and json.loads(out.stdout)["tools"][0]["name"] == "search"


# --- tool workers on the real Temporal dev server ----------------------------

ADDRESS = os.environ.get("TEMPORAL_ADDRESS") or "127.0.0.1:7233"
BUILTINS = {"calculate", "read_files", "edit_file", "run_command"}


@workflow.defn(name="UserToolCatalog")
class CatalogDouble:
    """A test double of toolround's catalog: records each announce, refuses
    the built-ins' names, and its validator rejects a queue named "rejected-*"
    as the real one rejects a malformed announce."""

    def __init__(self):
        self.announced = []

    @workflow.run
    async def run(self) -> None:
        await workflow.wait_condition(lambda: False)

    @workflow.update(name="announce")
    def announce(self, a: dict) -> dict:
        self.announced.append(a)
        names = [t["name"] for t in a["tools"]]
        return {"accepted": [n for n in names if n not in BUILTINS],
                "refused": [{"name": n, "reason": "a built-in tool has that name"} for n in names if n in BUILTINS]}

    @announce.validator
    def check(self, a: dict) -> None:
        if a.get("v") != 1 or a.get("queue", "").startswith("rejected-"):
            raise ValueError("malformed announce: queue %r" % a.get("queue"))

    @workflow.query(name="announced")
    def get_announced(self) -> list:
        return self.announced


@workflow.defn(name="CallUserTool")
class CallerDouble:
    """A test double of a round's pass 2: one activity toolround.tool.<name>
    on the tool worker's queue, one attempt; the signal "cancel" cancels it."""

    def __init__(self):
        self.cancel = False

    @workflow.signal(name="cancel")
    def cancel_signal(self) -> None:
        self.cancel = True

    @workflow.run
    async def run(self, req: dict) -> dict:
        h = workflow.start_activity(
            "%s.%s" % (req.get("kind", "toolround.tool"), req["tool"]), req["envelope"], task_queue=req["queue"],
            result_type=dict, start_to_close_timeout=timedelta(seconds=60),
            heartbeat_timeout=timedelta(seconds=req.get("heartbeat_timeout", 20)),
            retry_policy=RetryPolicy(maximum_attempts=1),
            cancellation_type=ActivityCancellationType.WAIT_CANCELLATION_COMPLETED)
        await workflow.wait_condition(lambda: self.cancel or h.done())
        if not h.done():
            h.cancel()
        try:
            return {"result": await h}
        except ActivityError as e:
            c = e.cause
            if isinstance(c, CancelledError):
                return {"cancelled": True}
            return {"failure": {"type": getattr(c, "type", None), "message": getattr(c, "message", str(c)),
                                "class": type(c).__name__}}


async def _connect():
    try:
        return await asyncio.wait_for(Client.connect(ADDRESS), 5)
    except Exception as e:
        msg = "the Temporal server at %s is not reachable (%s: %s)" % (ADDRESS, type(e).__name__, e)
        if CI:
            pytest.fail(msg)
        pytest.skip(msg)


class Live:
    """One test's Temporal client, its fake toolround queue with the two
    doubles on it, and a unique tool queue."""

    def __init__(self, client):
        self.client = client
        tag = uuid.uuid4().hex[:10]
        self.toolround_queue = "test-toolround-" + tag
        self.queue = "test-tools-" + tag
        self.started = []

    async def serve(self, tools, **kw):
        kw.setdefault("toolround_task_queue", self.toolround_queue)
        task = asyncio.ensure_future(serve_async(tools, kw.pop("queue", self.queue), client=self.client,
                                                 handle_signals=False, **kw))
        return task

    async def announced(self, queue=None):
        h = self.client.get_workflow_handle("usertools/" + (queue or self.queue))
        return await h.query("announced")

    async def call(self, t, args=None, *, wait=True, **req):
        wid = "test-call-" + uuid.uuid4().hex[:10]
        req = dict({"tool": t.name, "queue": self.queue, "envelope": envelope(t, args)}, **req)
        h = await self.client.start_workflow("CallUserTool", req, id=wid, task_queue=self.toolround_queue,
                                             result_type=dict, execution_timeout=timedelta(seconds=90))
        self.started.append(h)
        return (await h.result()) if wait else h


def live(body):
    """Run body(live) with the doubles' worker running; then stop everything."""
    async def go():
        client = await _connect()
        lv = Live(client)
        async with Worker(client, task_queue=lv.toolround_queue, workflows=[CatalogDouble, CallerDouble],
                          workflow_runner=UnsandboxedWorkflowRunner()):
            try:
                await body(lv)
            finally:
                for q in (lv.queue, "rejected-" + lv.queue):
                    try:
                        await client.get_workflow_handle("usertools/" + q).terminate("test over")
                    except Exception:
                        pass
                for h in lv.started:
                    try:
                        await h.terminate("test over")
                    except Exception:
                        pass
    run(go())


async def _stop(task):
    task.cancel()
    try:
        await asyncio.wait_for(task, 15)
    except asyncio.CancelledError:
        pass


def test_serve_announces_and_runs_a_call():
    @tool(effect="read_only", subject="city")
    def weather(city: str, *, ctx: ToolContext) -> dict:
        """The weather in a city."""
        return {"city": city, "sky": "clear", "attempt": ctx.attempt}

    async def body(lv):
        served = await lv.serve([weather])
        out = await lv.call(weather, {"city": "Nantes"})
        assert out == {"result": {"v": 1, "is_error": False, "attempt": 1,
                                  "content": [{"type": "json", "json": {"city": "Nantes", "sky": "clear", "attempt": 1}}]}}
        [a] = await lv.announced()
        assert a["v"] == 1 and a["queue"] == lv.queue and a["worker"]
        assert a["tools"] == [weather.announcement()]
        assert a["tools"][0]["schema_hash"] == schema_hash(weather.parameters)
        out = await lv.call(weather, {"city": "Nantes"}, envelope=envelope(weather, {"city": "x"}, schema_hash_="sha256:0"))
        assert out["result"]["error_code"] == "schema_changed"
        await _stop(served)
    live(body)


def test_an_exception_fails_the_activity_with_its_class_name():
    class Flaky(Exception):
        pass

    @tool(effect="side_effect")
    async def charge(amount: int, *, ctx: ToolContext) -> str:
        raise Flaky("gateway down for %s" % ctx.operation_id)

    async def body(lv):
        served = await lv.serve([charge])
        out = await lv.call(charge, envelope=envelope(charge, {"amount": 5}, operation_id="op-7"))
        assert out == {"failure": {"type": "Flaky", "message": "gateway down for op-7", "class": "ApplicationError"}}
        await _stop(served)
    live(body)


def test_reconcile_activity_is_served():
    @tool(effect="side_effect", reconcile=lambda key: key == "done")
    def put(key: str) -> str:
        return key

    async def body(lv):
        served = await lv.serve([put])
        out = await lv.call(put, {"key": "done"}, kind="toolround.reconcile")
        assert out == {"result": {"v": 1, "took_effect": True, "content": []}}
        await _stop(served)
    live(body)


@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
def test_heartbeats_keep_a_call_longer_than_the_heartbeat_timeout_alive(sync):
    if sync:
        @tool(effect="read_only", heartbeat=2)
        def slow() -> str:
            time.sleep(5)
            return "slept 5s"
    else:
        @tool(effect="read_only", heartbeat=2)
        async def slow() -> str:
            await asyncio.sleep(5)
            return "slept 5s"

    async def body(lv):
        served = await lv.serve([slow])
        out = await lv.call(slow, heartbeat_timeout=2)
        assert out == {"result": {"v": 1, "is_error": False, "attempt": 1, "content": [{"type": "text", "text": "slept 5s"}]}}
        await _stop(served)
    live(body)


def test_cancel_reaches_an_async_function_as_cancelled_error_within_an_interval():
    started, seen = asyncio.Event(), {}
    heartbeat = 3  # an interval of 1 s

    @tool(effect="read_only", heartbeat=heartbeat)
    async def wait_forever(*, ctx: ToolContext) -> str:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            seen["at"] = time.monotonic()
            seen["ctx_set"] = ctx.is_cancelled()
            raise
        return "never"

    async def body(lv):
        served = await lv.serve([wait_forever])
        h = await lv.call(wait_forever, wait=False, heartbeat_timeout=heartbeat)
        await asyncio.wait_for(started.wait(), 30)
        asked = time.monotonic()
        await h.signal("cancel")
        assert await h.result() == {"cancelled": True}
        # One interval, plus the signal's workflow task and the server's round trips.
        assert seen["at"] - asked < heartbeat / 3 + 1.5, seen["at"] - asked
        assert seen["ctx_set"] is True
        await _stop(served)
    live(body)


def test_cancel_sets_ctx_cancelled_for_a_sync_function():
    started, seen = threading.Event(), {}

    @tool(effect="read_only", heartbeat=3)
    def wait_forever(*, ctx: ToolContext) -> str:
        started.set()
        seen["cancelled"] = ctx.cancelled.wait(60)
        seen["at"] = time.monotonic()
        return "stopped"

    async def body(lv):
        served = await lv.serve([wait_forever])
        h = await lv.call(wait_forever, wait=False, heartbeat_timeout=3)
        await asyncio.get_running_loop().run_in_executor(None, started.wait, 30)
        asked = time.monotonic()
        await h.signal("cancel")
        assert await h.result() == {"cancelled": True}
        assert seen.get("cancelled") is True
        assert seen["at"] - asked < 1 + 1.5
        await _stop(served)
    live(body)


def test_a_refused_tool_is_one_line_and_serving_stops(capsys):
    @tool(effect="read_only")
    def calculate(expression: str) -> str:
        "A built-in's name."
        return expression

    async def body(lv):
        with pytest.raises(ServeRefused) as e:
            await (await lv.serve([calculate]))
        assert e.value.lines == ["tool calculate refused: a built-in tool has that name"]
        assert capsys.readouterr().err == "toolround.tools: tool calculate refused: a built-in tool has that name\n"
    live(body)


def test_a_rejected_announce_is_one_line_and_serving_stops(capsys):
    @tool(effect="read_only")
    def echo(text: str) -> str:
        return text

    async def body(lv):
        with pytest.raises(ServeRefused) as e:
            await (await lv.serve([echo], queue="rejected-" + lv.queue))
        [line] = e.value.lines
        assert line.startswith("the catalog usertools/rejected-%s refused the announce: malformed announce" % lv.queue)
        assert capsys.readouterr().err.count("\n") == 1
    live(body)


def test_no_answer_to_the_announce_is_one_line_and_serving_stops(capsys):
    @tool(effect="read_only")
    def echo(text: str) -> str:
        return text

    async def body(lv):
        nobody = "test-nobody-" + uuid.uuid4().hex[:10]
        with pytest.raises(ServeRefused) as e:
            await (await lv.serve([echo], toolround_task_queue=nobody, announce_timeout=1))
        assert e.value.lines == ["no answer to the announce within 1s: is a toolround worker polling task queue %r "
                                 "of namespace 'default'?" % nobody]
        assert capsys.readouterr().err.count("\n") == 1
    live(body)


def _cli(lv, file, queue):
    return asyncio.create_subprocess_exec(
        sys.executable, "-m", "toolround.tools", "serve", os.path.join(FILES, file), "--task-queue", queue,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=dict(os.environ, PYTHONPATH=SRC, TEMPORAL_ADDRESS=ADDRESS, TOOLROUND_TASK_QUEUE=lv.toolround_queue))


def test_cli_serve_exits_2_when_a_tool_is_refused():
    async def body(lv):
        p = await _cli(lv, "collide.py", lv.queue)
        out, err = await asyncio.wait_for(p.communicate(), 60)
        assert p.returncode == 2, err
        assert err.decode() == "toolround.tools: tool calculate refused: a built-in tool has that name\n"
    live(body)


def test_cli_serve_serves_the_file_until_sigterm():
    from toolround.tools.__main__ import load
    [echo] = load(os.path.join(FILES, "served.py"))

    async def body(lv):
        p = await _cli(lv, "served.py", lv.queue)
        try:
            out = await asyncio.wait_for(lv.call(echo, {"text": "hello"}), 60)
            assert out == {"result": {"v": 1, "is_error": False, "attempt": 1, "content": [{"type": "text", "text": "hello"}]}}
            p.terminate()
            await asyncio.wait_for(p.wait(), 30)
            assert p.returncode == 0, (await p.stderr.read()).decode()
        finally:
            if p.returncode is None:
                p.kill()
                await p.wait()
    live(body)


def test_secrets_sealed_for_the_queue():
    """The queue key is the Go worker's (the vector of tools/secrets'
    TestQueueKeyVectorY3); what seal makes opens, placeholders take the values
    the call sent and keep the others (Y3)."""
    import base64
    from toolround.tools import _secrets
    os.environ.pop("TOOLROUND_TOOL_KEY", None)
    os.environ["TOOLROUND_SECRET_KEY"] = base64.b64encode(bytes([1]) * 32).decode()
    try:
        key = _secrets.queue_key("orders")
    finally:
        del os.environ["TOOLROUND_SECRET_KEY"]
    assert key.hex() == "ee83db82028700846772d02583cd28b4cffcbd96f5d8844ea2dcb8190d7ae674"
    sealed = _secrets.seal(key, "v-0123456789")
    assert sealed.startswith("sealed:v1:") and "v-0123456789" not in sealed
    assert _secrets.open_sealed(key, sealed) == "v-0123456789"
    with pytest.raises(_secrets.SecretsUnavailable):
        _secrets.open_sealed(bytes(32), sealed)
    env = {"v": 1, "args_json": json.dumps({"a": ["x {{ secret:api }}", {"b": "{{secret:other}}"}]}),
           "secrets": {"api": sealed}}
    os.environ["TOOLROUND_TOOL_KEY"] = base64.b64encode(key).decode()
    try:
        _, opened = _secrets.open_call(env, "orders")
    finally:
        del os.environ["TOOLROUND_TOOL_KEY"]
    assert json.loads(opened["args_json"]) == {"a": ["x v-0123456789", {"b": "{{secret:other}}"}]}
    assert "secrets" not in opened
