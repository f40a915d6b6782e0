import json
import os
import threading
import time

import pytest

import toolround
from conftest import ALL_TOOLS, call, round_input


def test_submit_and_read_a_round(agent, session):
    inp = round_input(session, 1, call("c1", "calculate", expression="6*7"))
    wid = agent.submit_round(inp)
    assert wid == toolround.round_workflow_id(session, "r1", 1)
    # Submitting the same round again attaches to it: the same id.
    assert agent.submit_round(inp) == wid
    deadline = time.time() + 60
    while True:
        res = agent.round(wid)
        if "results" in res:
            break
        assert res["status"] == "running"
        assert time.time() < deadline
        time.sleep(0.2)
    assert res["workflow_id"] == wid
    assert res["results"][0]["status"] == "ok"
    assert "42" in res["results"][0]["content"]
    assert res["messages"][0]["tool_call_id"] == "c1"


def test_errors_are_typed(agent, approver, session):
    with pytest.raises(toolround.APIError) as e:
        agent.submit_round({"session_id": session, "run_id": "r1", "round": 1, "asistant": {}})
    assert e.value.status == 400 and e.value.code == "invalid_input"
    assert "assistant" in e.value.message, "the closest known name"
    with pytest.raises(toolround.APIError) as e:
        agent.approve(toolround.round_workflow_id(session, "r1", 1), "c1", "x")
    assert (e.value.status, e.value.code) == (403, "forbidden")
    with pytest.raises(toolround.APIError) as e:
        approver.round(toolround.round_workflow_id(session, "none", 9))
    assert (e.value.status, e.value.code) == (404, "not_found")
    with pytest.raises(toolround.APIError) as e:
        approver.approve(toolround.round_workflow_id(session, "none", 9), "c1", "x")
    assert e.value.status == 404 and e.value.code in ("not_waiting", "not_found")
    bad = toolround.Client(agent.base_url, "not-a-token")
    with pytest.raises(toolround.APIError) as e:
        bad.inbox()
    assert (e.value.status, e.value.code) == (401, "unauthorized")
    auto = round_input(session, 2, call("c1", "calculate", expression="1"))
    auto["auto_approve"] = True
    with pytest.raises(toolround.APIError) as e:
        agent.submit_round(auto)
    assert (e.value.status, e.value.code) == (403, "forbidden")


def test_run_round_with_approval_handler(approver, session, workdir):
    seen = []

    def on_approval(p):
        seen.append(p)
        return toolround.Decision(True, reason="fine")

    inp = round_input(session, 1, call("e1", "edit_file", path="py.txt", new_text="from python\n"))
    res = approver.run_round(inp, on_approval=on_approval, timeout=120)
    assert [p["call_id"] for p in seen] == ["e1"]
    assert seen[0]["approval_id"]
    r = res["results"][0]
    assert r["status"] == "ok", r
    assert r["approval"]["decision"] == "approved"
    assert r["approval"]["by"] == "alice" and r["approval"]["via"] == "api"
    with open(os.path.join(workdir, "py.txt")) as f:
        assert f.read() == "from python\n"


def test_deny_and_edited_args(approver, session, workdir):
    inp = round_input(session, 1, call("e1", "edit_file", path="denied.txt", new_text="no"))
    res = approver.run_round(inp, on_approval=lambda p: toolround.Decision(False, reason="not today"), timeout=120)
    assert res["results"][0]["status"] == "skipped"
    assert not os.path.exists(os.path.join(workdir, "denied.txt"))

    edited = {"path": "edited.txt", "new_text": "edited\n"}
    inp = round_input(session, 2, call("e2", "edit_file", path="orig.txt", new_text="orig"))
    res = approver.run_round(inp, on_approval=lambda p: toolround.Decision(True, args=edited), timeout=120)
    assert res["results"][0]["status"] == "ok"
    assert res["results"][0]["approval"].get("edited") is True
    assert os.path.exists(os.path.join(workdir, "edited.txt"))
    assert not os.path.exists(os.path.join(workdir, "orig.txt"))


def test_inbox_and_stale_approval(approver, agent, session):
    inp = round_input(session, 1, call("e1", "edit_file", path="wait.txt", new_text="x"),
                      call("e2", "edit_file", path="wait2.txt", new_text="y"))
    wid = agent.submit_round(inp)
    deadline = time.time() + 60
    entries = []
    while not entries:
        entries = agent.inbox(session=session)
        assert time.time() < deadline, "the round never waited"
        time.sleep(0.2)
    assert entries[0]["workflow_id"] == wid
    p = next(c for c in entries[0]["pending"] if c["call_id"] == "e1")
    with pytest.raises(toolround.APIError) as e:
        approver.approve(wid, p["call_id"], "not-its-approval-id")
    assert (e.value.status, e.value.code) == (409, "stale_approval")
    with pytest.raises(toolround.APIError) as e:
        approver.approve(wid, p["call_id"], p["approval_id"], args={"path": 1})
    assert (e.value.status, e.value.code) == (400, "invalid_args")
    with pytest.raises(toolround.APIError) as e:  # T12: a scope is a remembered rule's
        approver.approve(wid, p["call_id"], p["approval_id"], scope="write")
    assert (e.value.status, e.value.code) == (400, "invalid_decision")
    first = approver.deny(wid, p["call_id"], p["approval_id"], reason="test")
    assert first["decision"] == "denied" and "status" not in first
    # The round still waits for e2, so a retry of the same decision is told
    # it already landed; another decision for the call is refused.
    again = approver.deny(wid, p["call_id"], p["approval_id"])
    assert (again["decision"], again["status"]) == ("denied", "already_decided")
    with pytest.raises(toolround.APIError) as e:
        approver.approve(wid, p["call_id"], p["approval_id"])
    assert (e.value.status, e.value.code) == (404, "not_waiting")
    approver.cancel(wid) if approver.round(wid).get("status") == "running" else None


def test_events_resume_and_replay(approver, agent, session):
    # Replay from the start: the events of a finished round.
    res = agent.wait_round(round_input(session, 1, call("c1", "calculate", expression="2+2")))
    assert res["results"][0]["status"] == "ok"
    stop = threading.Event()
    got = []
    for ev in agent.events(session, from_start=True, stop=stop):
        got.append(ev)
        if ev["type"] == "round_finished" or len(got) > 50:
            stop.set()
    types = [e["type"] for e in got]
    assert "tool_result" in types, types
    first_ids = [e["id"] for e in got]

    # Resume after a given event: only the later ones.
    stop2 = threading.Event()
    later = []
    for ev in agent.events(session, after=first_ids[0], stop=stop2):
        later.append(ev)
        if ev["id"] == first_ids[-1]:
            stop2.set()
    assert [e["id"] for e in later] == first_ids[1:]


def _read_until(it, stop, last_id):
    got = []
    for ev in it:
        got.append(ev["id"])
        if ev["id"] == last_id or len(got) > 500:
            stop.set()
    return got


def test_events_reconnect_after_a_dropped_connection(agent, session, monkeypatch):
    # The connection drops after the first event of each of the first three
    # connections: the iterator reconnects with Last-Event-ID and goes on
    # with no event lost or repeated.
    for n in (1, 2):
        res = agent.wait_round(round_input(session, n, call("c%d" % n, "calculate", expression="%d*3" % n)))
    last_id = res["events"][-1]["id"]
    stop = threading.Event()
    ref = _read_until(agent.events(session, from_start=True, stop=stop), stop, last_id)
    assert ref[-1] == last_id and len(ref) > 4

    import toolround.client as tc

    real_sse, real_open = tc._sse, tc.urllib.request.urlopen
    connections = []

    def flaky(resp, stop):
        for item in real_sse(resp, stop):
            yield item
            if item[1] is not None and len(connections) <= 3:
                raise ConnectionResetError("dropped")

    def spy(req, *a, **k):
        connections.append(req.get_header("Last-event-id"))
        return real_open(req, *a, **k)

    monkeypatch.setattr(tc, "_sse", flaky)
    monkeypatch.setattr(tc.urllib.request, "urlopen", spy)
    stop = threading.Event()
    got = _read_until(agent.events(session, from_start=True, stop=stop, reconnect=0.05), stop, last_id)
    assert got == ref
    assert connections[:4] == [None, ref[0], ref[1], ref[2]]


def test_retries_only_idempotent_calls(monkeypatch):
    import toolround.client as tc

    c = toolround.Client("http://127.0.0.1:9", "t", retries=2, backoff=0.001)
    tries = []

    def fail(self, method, path, body, query, timeout):
        tries.append((method, path))
        raise tc._NetworkError(ConnectionRefusedError("refused"))

    monkeypatch.setattr(tc.Client, "_once", fail)
    for op in (lambda: c.round("toolround/s/r/1"), lambda: c.inbox(), lambda: c.submit_round({}),
               lambda: c.start_agent("s", "r", "t"), lambda: c.agent("agentrun/s/r"), lambda: c.tools("openai")):
        tries.clear()
        with pytest.raises(toolround.APIError) as e:
            op()
        assert (e.value.status, e.value.code) == (0, "network")
        assert len(tries) == 3
    for op in (lambda: c.approve("w", "c", "a"), lambda: c.deny("w", "c", "a"), lambda: c.answer("w", "c", ["x"]),
               lambda: c.cancel("w"), lambda: c.send_message("agentrun/s/r", "hi"), lambda: c.extend("w", "c", 5),
               lambda: c.submit_tool_result("w", "c", "x")):
        tries.clear()
        with pytest.raises(toolround.APIError):
            op()
        assert len(tries) == 1, tries


def test_run_handle_keeps_state_and_round(approver, session, workdir):
    run = approver.run(session, "handle", provider="claude-code", state={"fetched": ALL_TOOLS})
    assert run.number == 0 and run.next_workflow_id.endswith("/handle/1")
    res = run.round([call("c1", "calculate", expression="1+1")])
    assert run.number == 1 and res["results"][0]["status"] == "ok"
    assert res["workflow_id"] == toolround.round_workflow_id(session, "handle", 1)
    res = run.round([call("r1", "read_files", paths=["missing.txt"])])
    assert run.number == 2
    assert run.state == res["state"]
    # The same read again: deduped from round 2, which only the kept state knows.
    res = run.round([call("r2", "read_files", paths=["missing.txt"])])
    assert run.number == 3
    assert res["results"][0]["status"] in ("deduped", "error"), res["results"][0]
    # A handle reopened after a crash finds the last finished round.
    again = approver.run(session, "handle", resume=True)
    assert again.number == 3
    assert again.state == run.state
    assert again.next_workflow_id == toolround.round_workflow_id(session, "handle", 4)
    fresh = approver.run(session, "never-ran", resume=True)
    assert fresh.number == 0


def test_openapi_document(agent):
    doc = toolround.Client(agent.base_url, "").openapi()
    assert doc["openapi"].startswith("3.1")
    assert "/api/v1/rounds" in doc["paths"]


def test_limit_waits_reach_on_approval_with_their_wait_id(approver, agent, session):
    # B1, X2: a call past a run limit waits as kind "limit"; on_approval
    # gets it, and the decision carries the wait's wait_id.
    seen = []

    def on_approval(p):
        seen.append(p)
        return toolround.Decision(True, reason="one more")

    inp = round_input(session, 1, call("c1", "calculate", expression="1+1"), call("c2", "calculate", expression="2+2"))
    inp["limits"] = {"max_calls": 1}
    res = approver.run_round(inp, on_approval=on_approval, timeout=120)
    assert [(p["call_id"], p["kind"]) for p in seen] == [("c2", "limit")]
    assert len(seen[0]["wait_id"]) == 64
    assert seen[0]["limits"] == [{"limit": "max_calls", "count": 0, "max": 1}]
    assert [r["status"] for r in res["results"]] == ["ok", "ok"]
    assert res["results"][1]["approval"]["limits"] == ["max_calls"]

    # A decision for another wait of the call is refused.
    inp = round_input(session, 2, call("c3", "calculate", expression="3+3"), state=res["state"])
    wid = agent.submit_round(inp)
    deadline = time.time() + 60
    entries = []
    while not entries:
        entries = agent.inbox(session=session)
        assert time.time() < deadline, "the round never waited"
        time.sleep(0.2)
    p = entries[0]["pending"][0]
    assert p["kind"] == "limit"
    with pytest.raises(toolround.APIError) as e:
        approver.approve(wid, p["call_id"], p["approval_id"], wait_id="0" * 64)
    assert (e.value.status, e.value.code) == (409, "stale_wait")
    d = approver.deny(wid, p["call_id"], p["approval_id"], reason="enough", wait_id=p["wait_id"])
    assert d["decision"] == "denied"


def test_mcp_elicitation_answered_by_on_wait(approver, session):
    """A call whose MCP server asks for input reaches on_wait with the
    server's request; content that fails the schema is refused with 400
    invalid_answer, and the dict on_wait returns is the accepted form."""
    from conftest import _need
    bookings = _need("TOOLROUND_BOOKINGS")
    seen = []

    def on_wait(p):
        seen.append(p)
        if p["kind"] != "elicitation":
            return None
        with pytest.raises(toolround.APIError) as e:
            approver.answer_elicitation(wid, p["call_id"], "accept",
                                        content={"seats": 0}, wait_id=p["wait_id"])
        assert (e.value.status, e.value.code) == (400, "invalid_answer")
        assert "date is required" in e.value.message
        return {"date": "2027-03-01", "seats": 4}

    inp = round_input(session, 1, call("b1", "mcp_desk_book", what="a table"), state={"fetched": ["mcp_desk_book"]})
    inp["auto_approve"] = True
    wid = toolround.round_workflow_id(inp["session_id"], inp["run_id"], 1)
    res = approver.run_round(inp, on_wait=on_wait, timeout=120)
    assert [p["kind"] for p in seen] == ["elicitation"]
    assert seen[0]["elicitation"]["server"] == "desk"
    assert "date" in seen[0]["elicitation"]["requested_schema"]["properties"]
    r = res["results"][0]
    assert r["status"] == "ok", r
    assert r["content"] == "booked a table on 2027-03-01 for 4"
    with open(bookings) as f:
        assert f.read() == "a table 2027-03-01 4\n"


def _scripted(monkeypatch, pending):
    """A console that answers the round with ``pending`` once, then with a
    finished result, and records every request but the reads of the round."""
    import toolround.client as tc

    sent = []
    reads = []

    def once(self, method, path, body, query, timeout):
        if method == "POST" and path == "/api/v1/rounds":
            return {"workflow_id": "toolround/s/r/1"}
        if method == "GET" and path.startswith("/api/v1/rounds/"):
            reads.append(path)
            if len(reads) == 1:
                return {"workflow_id": "toolround/s/r/1", "status": "running", "pending": pending}
            return {"workflow_id": "toolround/s/r/1", "results": [], "state": None}
        sent.append((method, path, body, query))
        if body and body.get("call_id") == "gone":
            raise toolround.APIError(404, "not_waiting", "no call gone waits")
        return {"accepted": True}

    monkeypatch.setattr(tc.Client, "_once", once)
    # No event stream: the loop polls.
    monkeypatch.setattr(tc.Client, "events", lambda self, *a, **k: iter(()))
    return toolround.Client("http://127.0.0.1:9", "t", retries=0), sent


def test_on_wait_sends_a_client_tools_result_with_its_wait_id(monkeypatch):
    # Y5, X2: a ToolResult or a string on_wait returns for a tool_result
    # wait is sent to /api/v1/tool-results with the pending entry's wait_id;
    # None leaves the call waiting; a call that stopped waiting meanwhile
    # (not_waiting) does not stop the round; ask_user keeps its answers.
    pending = [
        {"call_id": "k1", "tool": "ide_open", "kind": "tool_result", "wait_id": "w1"},
        {"call_id": "k2", "tool": "ide_open", "kind": "tool_result", "wait_id": "w2"},
        {"call_id": "k3", "tool": "ide_open", "kind": "tool_result", "wait_id": "w3"},
        {"call_id": "gone", "tool": "ide_open", "kind": "tool_result", "wait_id": "w4"},
        {"call_id": "q1", "tool": "ask_user", "kind": "answer", "questions": ["which?"]},
    ]
    c, sent = _scripted(monkeypatch, pending)
    out = {"k1": toolround.ToolResult("opened a.go"), "k2": toolround.ToolResult("no such file", is_error=True),
           "k3": None, "gone": "late", "q1": ["this one"]}
    res = c.run_round({"session_id": "s", "run_id": "r", "round": 1}, on_wait=lambda p: out[p["call_id"]], poll=0.01)
    assert res["results"] == []
    assert sent == [
        ("POST", "/api/v1/tool-results", {"workflow_id": "toolround/s/r/1", "call_id": "k1", "content": "opened a.go",
                                          "wait_id": "w1"}, None),
        ("POST", "/api/v1/tool-results", {"workflow_id": "toolround/s/r/1", "call_id": "k2", "content": "no such file",
                                          "is_error": True, "wait_id": "w2"}, None),
        ("POST", "/api/v1/tool-results", {"workflow_id": "toolround/s/r/1", "call_id": "gone", "content": "late",
                                          "wait_id": "w4"}, None),
        ("POST", "/api/v1/answers", {"workflow_id": "toolround/s/r/1", "call_id": "q1", "answers": ["this one"]}, None),
    ]


def test_on_wait_refuses_what_is_no_tool_result(monkeypatch):
    pending = [{"call_id": "k1", "tool": "ide_open", "kind": "tool_result", "wait_id": "w1"}]
    c, sent = _scripted(monkeypatch, pending)
    with pytest.raises(TypeError) as e:
        c.run_round({"session_id": "s", "run_id": "r", "round": 1}, on_wait=lambda p: {"content": "x"}, poll=0.01)
    assert "toolround.ToolResult" in str(e.value) and "k1" in str(e.value)
    assert sent == []


def test_tools_asks_for_the_provider_and_format(monkeypatch):
    import toolround.client as tc

    seen = []

    def once(self, method, path, body, query, timeout):
        seen.append((method, path, query))
        return {"provider": query["provider"], "format": query.get("format", "openai"), "tools": [], "deferred": []}

    monkeypatch.setattr(tc.Client, "_once", once)
    c = toolround.Client("http://127.0.0.1:9", "t")
    assert c.tools("claude-code")["format"] == "openai"
    assert c.tools("openai", format="responses")["format"] == "responses"
    assert seen == [("GET", "/api/v1/tools", {"provider": "claude-code"}),
                    ("GET", "/api/v1/tools", {"provider": "openai", "format": "responses"})]


def test_client_tool_answered_by_on_wait(agent, approver, session):
    """Y5: a client tool's call reaches on_wait as kind tool_result with a
    wait_id; the ToolResult on_wait returns becomes the call's result, sent
    with an agent token; a result for another wait is 409 stale_wait, and
    one for a call that no longer waits 404 not_waiting."""
    seen = []
    wid = toolround.round_workflow_id(session, "r1", 1)

    def on_wait(p):
        seen.append(p)
        if p["call_id"] == "k1":
            with pytest.raises(toolround.APIError) as e:
                agent.submit_tool_result(wid, "k1", "too early", wait_id="0" * 64)
            assert (e.value.status, e.value.code) == (409, "stale_wait")
            return toolround.ToolResult("opened a.go at line 3")
        return toolround.ToolResult("b.go is not open", is_error=True)

    inp = round_input(session, 1, call("k1", "ide_open", file="a.go"), call("k2", "ide_open", file="b.go"),
                      call("c1", "calculate", expression="6*7"))
    inp["client_tools"] = [{"type": "function", "function": {
        "name": "ide_open", "description": "Opens a file in the editor",
        "parameters": {"type": "object", "properties": {"file": {"type": "string"}}, "required": ["file"]}}}]
    res = agent.run_round(inp, on_wait=on_wait, timeout=120)
    assert sorted((p["call_id"], p["kind"]) for p in seen) == [("k1", "tool_result"), ("k2", "tool_result")]
    assert all(len(p["wait_id"]) == 64 for p in seen), seen
    r = {x["call_id"]: x for x in res["results"]}
    assert (r["k1"]["status"], r["k1"]["content"]) == ("ok", "opened a.go at line 3")
    assert r["k2"]["status"] == "error"
    assert "b.go is not open" in r["k2"]["content"], r["k2"]
    assert r["c1"]["status"] == "ok"
    with pytest.raises(toolround.APIError) as e:
        approver.submit_tool_result(wid, "k1", "again")
    assert (e.value.status, e.value.code) == (404, "not_waiting")


def test_tools_in_each_format(agent):
    ts = agent.tools("claude-code")
    assert (ts["provider"], ts["format"]) == ("claude-code", "openai")
    assert ts["tools"][0]["type"] == "function" and "function" in ts["tools"][0]
    an = agent.tools("claude-code", format="anthropic")
    assert "input_schema" in an["tools"][0]
    assert an["deferred"] == ts["deferred"]
    rs = agent.tools("openai", format="responses")
    assert rs["tools"][0]["strict"] is False
    wt = agent.tools("claude-code", format="anthropic", worker=True)  # the worker's own list (Y2)
    assert {t["name"] for t in an["tools"]} <= {t["name"] for t in wt["tools"]}
    with pytest.raises(toolround.APIError) as e:
        agent.tools("openai", format="xml")
    assert (e.value.status, e.value.code) == (400, "bad_request")


def test_run_handle_in_each_format_and_beside_the_lower_level_calls(approver, session, workdir):
    # docs/clients.md: format= for each format through the handle (F1).
    run = approver.run(session, "formats", provider="claude-code", state={"fetched": ALL_TOOLS})
    res = run.round([call("c1", "calculate", expression="1+1")])  # openai, the default
    assert res["results"][0]["status"] == "ok", res["results"][0]
    res = run.round({"role": "assistant", "content": [
        {"type": "text", "text": "Adding."},
        {"type": "tool_use", "id": "toolu_1", "name": "calculate", "input": {"expression": "2+2"}}]}, format="anthropic")
    assert res["format"] == "anthropic"
    assert (res["results"][0]["call_id"], res["results"][0]["status"]) == ("toolu_1", "ok")
    assert res["messages"][0]["content"][0]["type"] == "tool_result"
    res = run.round(None, format="responses", output=[
        {"type": "function_call", "call_id": "call_r1", "name": "calculate", "arguments": '{"expression": "3+3"}'}])
    assert res["format"] == "responses"
    assert (res["results"][0]["call_id"], res["results"][0]["status"]) == ("call_r1", "ok")
    assert res["messages"][0]["type"] == "function_call_output"
    assert run.number == 3

    # A round of the run through the lower-level calls: run.input gives its
    # input, and the handle learns of it only from resume().
    inp = run.input({"role": "assistant", "content": "", "tool_calls": [call("e1", "edit_file", path="low.txt", new_text="x\n")]})
    wid = approver.submit_round(inp)
    assert wid == run.next_workflow_id
    deadline = time.time() + 60
    while True:
        view = approver.round(wid)
        waiting = [p for p in view.get("pending", []) if p.get("approval_id")]
        if waiting:
            break
        assert time.time() < deadline, "the round never waited: %s" % view
        time.sleep(0.1)
    approver.approve(wid, "e1", waiting[0]["approval_id"])
    res = approver.wait_round(inp)
    assert res["results"][0]["status"] == "ok", res["results"][0]
    assert run.number == 3, "the handle did not run round 4"
    assert run.resume() == 4
    assert run.state == res["state"]
    res = run.round([call("c5", "calculate", expression="5+5")])
    assert res["workflow_id"] == toolround.round_workflow_id(session, "formats", 5)
    with open(os.path.join(workdir, "low.txt")) as f:
        assert f.read() == "x\n"
