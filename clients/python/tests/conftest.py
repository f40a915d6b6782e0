"""The tests run against a real console and worker: TOOLROUND_URL,
TOOLROUND_APPROVER_TOKEN, TOOLROUND_AGENT_TOKEN, TOOLROUND_SESSION (a session
id prefix of its own) and TOOLROUND_WORKDIR (the worker's TOOLS_WORKDIR).
tests/python_test.go starts both and runs pytest with them; without them the
tests skip, or fail under CI=true."""

import itertools
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

import toolround  # noqa: E402

_counter = itertools.count(1)


def _need(name):
    v = os.environ.get(name)
    if not v:
        if os.environ.get("CI") == "true":
            pytest.fail("%s is not set: run these tests through `go test -run TestPythonClient ./tests/`" % name)
        pytest.skip("%s is not set (tests/python_test.go sets it)" % name)
    return v


@pytest.fixture
def url():
    return _need("TOOLROUND_URL")


@pytest.fixture
def approver(url):
    return toolround.Client(url, _need("TOOLROUND_APPROVER_TOKEN"), timeout=30)


@pytest.fixture
def agent(url):
    return toolround.Client(url, _need("TOOLROUND_AGENT_TOKEN"), timeout=30)


@pytest.fixture
def workdir():
    return _need("TOOLROUND_WORKDIR")


@pytest.fixture
def session(request):
    base = _need("TOOLROUND_SESSION")
    name = "".join(ch if ch.isalnum() else "-" for ch in request.node.name)[:40].strip("-")
    return "%s-%s-%d" % (base, name, next(_counter))


ALL_TOOLS = ["calculate", "edit_file", "read_files", "run_command"]


def call(call_id, name, **args):
    import json

    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def round_input(session, n, *calls, run="r1", state=None):
    return {"session_id": session, "run_id": run, "round": n, "provider": "claude-code",
            "assistant": {"role": "assistant", "content": "", "tool_calls": list(calls)},
            "state": state if state is not None else {"fetched": ALL_TOOLS}}
