#!/usr/bin/env python3
"""An agent loop that uses only toolround's HTTP API (the console), with the
Python standard library and a scripted model instead of an LLM.

Each turn the "model" reads the conversation and answers with tool calls; the
agent submits them as one round, waits for the round (a person may have to
approve a call in the console), feeds the tool messages back into the
conversation and carries the run state to the next round. It stops when the
model answers without tool calls.

    CONSOLE_URL=http://127.0.0.1:8780 CONSOLE_TOKEN=... python3 agent.py

With --agent TASK the model loop runs in toolround's workers instead, as a
durable agent run (POST /api/v1/agents; the workers need LLM_BASE_URL): the
script starts the run, polls GET /api/v1/agents/{workflow_id} until it ends,
says which calls wait for a person, and prints the model's final answer.

    CONSOLE_TOKEN=... python3 agent.py --agent "What is 6*7?"

Environment: CONSOLE_URL (default http://127.0.0.1:8780), CONSOLE_TOKEN (an
agent or approver token of the console), SESSION (default "http-agent"),
RUN (default a new one per start).
"""

import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

URL = os.environ.get("CONSOLE_URL", "http://127.0.0.1:8780").rstrip("/")
TOKEN = os.environ.get("CONSOLE_TOKEN", "")
SESSION = os.environ.get("SESSION", "http-agent")
RUN = os.environ.get("RUN", "run-%d" % int(time.time()))


class APIError(Exception):
    pass


def api(method, path, body=None):
    """One request to the console; its JSON answer, or APIError."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(URL + path, data=data, method=method)
    req.add_header("Authorization", "Bearer " + TOKEN)
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return json.load(resp)
    except urllib.error.HTTPError as e:
        try:
            err = json.load(e)
        except ValueError:
            err = {"error": str(e)}
        raise APIError("%s %s: HTTP %d %s: %s" % (method, path, e.code, err.get("error"), err.get("message", "")))


def call(call_id, name, args):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def run_tool(call_id, name, args):
    return call(call_id, "run_tool", {"name": name, "args": args})


def last_tool_content(conversation, call_id):
    for m in reversed(conversation):
        if m.get("role") == "tool" and m.get("tool_call_id") == call_id:
            return m["content"]
    return ""


def scripted_model(conversation):
    """Stands in for an LLM: decides the next assistant message from the
    conversation so far, as a model would."""
    turns = sum(1 for m in conversation if m["role"] == "assistant")
    if turns == 0:
        # Only the core tools are loaded for this provider: load two more.
        return {"role": "assistant", "content": "", "tool_calls": [
            call("load_calc", "find_tools", {"query": "select:calculate"}),
            call("load_edit", "find_tools", {"query": "select:edit_file"}),
        ]}
    if turns == 1:
        return {"role": "assistant", "content": "", "tool_calls": [
            run_tool("calc", "calculate", {"expression": "6*7"}),
        ]}
    if turns == 2:
        result = last_tool_content(conversation, "calc")
        answer = result.strip().split()[-1] if result.strip() else "?"
        return {"role": "assistant", "content": "", "tool_calls": [
            run_tool("write", "edit_file", {"path": "answer.txt", "new_text": "The answer is %s.\n" % answer}),
        ]}
    written = last_tool_content(conversation, "write")
    return {"role": "assistant", "content": "Done: " + written.splitlines()[0] if written else "Done."}


def wait_for_round(workflow_id):
    """Polls the round until it has finished; says what it waits for."""
    told = set()
    while True:
        r = api("GET", "/api/v1/rounds/" + workflow_id)
        if "results" in r:
            return r
        if r.get("status") != "running":
            raise APIError("round %s %s: %s" % (workflow_id, r.get("status"), r.get("error", "")))
        for p in r.get("pending", []):
            if p["call_id"] not in told:
                told.add(p["call_id"])
                print("waiting for a person: %s %s (approve it at %s/)" % (p["tool"], p.get("subject", ""), URL), file=sys.stderr)
        time.sleep(0.5)


def run_agent(task):
    """--agent: a durable agent run, started and followed over the API."""
    started = api("POST", "/api/v1/agents", {"session_id": SESSION, "run_id": RUN, "task": task})
    workflow_id = started["workflow_id"]
    print("agent run: %s" % workflow_id, file=sys.stderr)
    told = set()
    while True:
        status = api("GET", "/api/v1/agents/" + workflow_id)
        if status["status"] != "running":
            break
        # The run's rounds wait in the inbox like any round.
        for entry in api("GET", "/api/v1/inbox?session=" + urllib.parse.quote(SESSION)):
            for p in entry["pending"]:
                key = (entry["workflow_id"], p["call_id"])
                if key not in told:
                    told.add(key)
                    print("waiting for a person: %s %s (approve it at %s/)" % (p["tool"], p.get("subject", ""), URL), file=sys.stderr)
        time.sleep(0.5)
    if status["status"] != "completed":
        print("agent.py: agent run %s ended with status %s after %d rounds %s" % (
            workflow_id, status["status"], status.get("round", 0), status.get("error", "")), file=sys.stderr)
        return 1
    print(status.get("final", ""))
    return 0


def main():
    if not TOKEN:
        print("agent.py: set CONSOLE_TOKEN to a token of the console", file=sys.stderr)
        return 2
    if len(sys.argv) > 1:
        if sys.argv[1] != "--agent" or len(sys.argv) < 3:
            print("usage: agent.py [--agent TASK...]", file=sys.stderr)
            return 2
        return run_agent(" ".join(sys.argv[2:]))
    conversation = [{"role": "user", "content": "What is 6*7? Write the answer to answer.txt."}]
    state = None
    for n in range(1, 20):
        message = scripted_model(conversation)
        conversation.append(message)
        if not message.get("tool_calls"):
            print(message["content"])
            return 0
        round_input = {"session_id": SESSION, "run_id": RUN, "round": n, "provider": "openai",
                       "assistant": message, "client_tools": [], "state": state}
        started = api("POST", "/api/v1/rounds", round_input)
        print("round %d: %s" % (n, started["workflow_id"]), file=sys.stderr)
        result = wait_for_round(started["workflow_id"])
        for r in result["results"]:
            print("  %s %s: %s" % (r["call_id"], r["tool"], r["status"]), file=sys.stderr)
        conversation.extend(result["messages"])
        state = result["state"]
    print("agent.py: the model did not finish within 19 rounds", file=sys.stderr)
    return 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except APIError as e:
        print("agent.py: %s" % e, file=sys.stderr)
        sys.exit(1)
