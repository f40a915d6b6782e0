"""The console's HTTP API over the standard library (SPEC X2)."""

import http.client
import json
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Union

__all__ = ["Client", "APIError", "Decision", "ToolResult", "Run", "round_workflow_id", "agent_workflow_id"]

# The kinds of pending calls (SPEC interface additions): these wait for a
# decision (on_approval); the others (answer, tool_result, elicitation)
# wait for something else (on_wait).
DECISION_KINDS = ("", "confirm", "limit")


class APIError(Exception):
    """An answer of the API that is not a success.

    ``status`` is the HTTP status (0 when the console could not be reached),
    ``code`` the API's error code (``not_waiting``, ``stale_approval``,
    ``invalid_args``, ``invalid_input``, ``forbidden``, ...) and ``message``
    the console's sentence.
    """

    def __init__(self, status: int, code: str, message: str = "", body: Any = None):
        super().__init__("%s %s: %s" % (status, code, message) if message else "%s %s" % (status, code))
        self.status = status
        self.code = code
        self.message = message
        self.body = body


@dataclass
class Decision:
    """What ``on_approval`` returns for a waiting call: approve or deny it,
    with a reason, or approve it with edited arguments (``args``, a dict or
    the text of a JSON object)."""

    approve: bool
    reason: Optional[str] = None
    args: Optional[Union[Dict[str, Any], str]] = None
    remember: bool = False
    pattern: Optional[str] = None
    allow_turn: bool = False


@dataclass
class ToolResult:
    """What ``on_wait`` returns for a client tool's call (pending kind
    ``tool_result``): the tool's result as the model will read it, and
    whether the tool failed (the call's status is then ``error``)."""

    content: str
    is_error: bool = False


def round_workflow_id(session_id: str, run_id: str, round_no: int) -> str:
    """The workflow id of a round: ``toolround/<session>/<run>/<round>``."""
    return "toolround/%s/%s/%d" % (session_id, run_id, round_no)


def agent_workflow_id(session_id: str, run_id: str) -> str:
    """The workflow id of an agent run: ``agentrun/<session>/<run>``."""
    return "agentrun/%s/%s" % (session_id, run_id)


class _NetworkError(Exception):
    pass


class Client:
    """A client of the console at ``base_url`` with a bearer ``token``.

    Network errors (no connection, a connection dropped before the answer)
    are retried ``retries`` times, with a growing pause from ``backoff``
    seconds, for the requests that are safe to repeat: every GET, and
    submissions keyed by their workflow id (``submit_round``,
    ``start_agent``), which attach to the same workflow when they land
    twice. Decisions, answers, tool results, messages and cancellations are
    sent once: a network error raises ``APIError`` with status 0 and code
    ``network``. An answer of the console is never retried.
    """

    def __init__(self, base_url: str, token: str, timeout: float = 60.0, retries: int = 3, backoff: float = 0.25):
        if not base_url:
            raise ValueError("base_url is required (the console's address, e.g. http://127.0.0.1:8780)")
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff

    # -- requests --------------------------------------------------------

    def _url(self, path: str, query: Optional[Dict[str, str]] = None) -> str:
        url = self.base_url + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        return url

    def _once(self, method: str, path: str, body: Any, query: Optional[Dict[str, str]], timeout: Optional[float]) -> Any:
        data = None
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(self._url(path, query), data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout or self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as e:
            raise _api_error(e.code, e.read()) from None
        except (urllib.error.URLError, http.client.HTTPException, ConnectionError, socket.timeout, OSError) as e:
            raise _NetworkError(e) from e
        if not raw.strip():
            return None
        try:
            return json.loads(raw)
        except ValueError:
            raise APIError(200, "bad_response", "the console's answer is not JSON: %.200r" % raw) from None

    def _request(self, method: str, path: str, body: Any = None, query: Optional[Dict[str, str]] = None,
                 idempotent: bool = False, timeout: Optional[float] = None) -> Any:
        attempts = 1 + (self.retries if idempotent else 0)
        for attempt in range(attempts):
            try:
                return self._once(method, path, body, query, timeout)
            except _NetworkError as e:
                if attempt + 1 >= attempts:
                    raise APIError(0, "network", "%s %s: %s" % (method, path, e.__cause__ or e)) from None
                time.sleep(self.backoff * (2 ** attempt))
        raise AssertionError("unreachable")

    # -- rounds ----------------------------------------------------------

    def openapi(self) -> Dict[str, Any]:
        """The API's OpenAPI 3.1 document."""
        return self._request("GET", "/api/v1/openapi.json", idempotent=True)

    def tools(self, provider: str, format: Optional[str] = None, worker: bool = False) -> Dict[str, Any]:
        """The provider's tools array (F3), as ``starter tools --provider P
        --format F`` prints it for the built-in tools: ``{"provider",
        "format", "tools", "deferred", "turn_context"}``, ``tools`` in the
        format ``openai`` (the default), ``anthropic`` or ``responses``.
        With ``worker=True`` a running worker gives its own list: its MCP
        servers' tools and your own tools (Y2) too, and ``queues``, the state
        of each tool queue it runs."""
        query = {"provider": provider}
        if format is not None:
            query["format"] = format
        if worker:
            query["worker"] = "true"
        return self._request("GET", "/api/v1/tools", query=query, idempotent=True)

    def submit_round(self, input: Dict[str, Any]) -> str:
        """Submits a round (a round input) and returns its workflow id. A
        round submitted twice attaches to the same workflow, so this is
        retried on network errors."""
        out = self._request("POST", "/api/v1/rounds", body=input, idempotent=True)
        return out["workflow_id"]

    def round(self, workflow_id: str) -> Dict[str, Any]:
        """The round's result when it has finished, else
        ``{"workflow_id", "status": "running", "pending": [...], "progress"}``."""
        return self._request("GET", "/api/v1/rounds/" + _path(workflow_id), idempotent=True)

    def wait_round(self, input: Dict[str, Any], timeout: Optional[float] = None) -> Dict[str, Any]:
        """Submits a round and waits for its result (``?wait=1``)."""
        return self._request("POST", "/api/v1/rounds", body=input, query={"wait": "1"}, idempotent=True,
                             timeout=timeout or max(self.timeout, 600))

    def run_round(self, input: Dict[str, Any], on_approval: Optional[Callable[[Dict[str, Any]], Optional[Decision]]] = None,
                  on_wait: Optional[Callable[[Dict[str, Any]], Any]] = None, timeout: Optional[float] = None,
                  poll: float = 2.0) -> Dict[str, Any]:
        """Submits a round, follows its events and returns its result.

        Each call that waits for a decision (an approval or a limit) is
        given once to ``on_approval(pending)``, which returns a
        ``Decision`` or ``None`` (leave it waiting, for a person on the
        console). Each call that waits for something else (``ask_user``,
        elicitation, a client tool) is given once to ``on_wait(pending)``;
        for ``ask_user`` a list of strings it returns is sent as the
        answers; for an MCP server's request (kind ``elicitation``) a dict
        is accepted as the form's content, and ``"decline"`` or
        ``"cancel"`` refuses it; for a client tool (kind ``tool_result``)
        a ``ToolResult`` or a string (the content of a success) is sent as
        the tool's result, with the pending entry's ``wait_id``. ``None``
        leaves the call waiting. ``timeout`` (seconds, default none) bounds
        the whole wait.
        """
        wid = self.submit_round(input)
        return self.follow_round(wid, input.get("session_id", ""), on_approval, on_wait, timeout, poll)

    def follow_round(self, workflow_id: str, session_id: str = "", on_approval=None, on_wait=None,
                     timeout: Optional[float] = None, poll: float = 2.0) -> Dict[str, Any]:
        """Follows a submitted round to its result, as ``run_round`` does."""
        session_id = session_id or workflow_id.split("/")[1]
        woke = threading.Event()
        stop = threading.Event()

        def watch() -> None:
            try:
                for ev in self.events(session_id, stop=stop):
                    if ev.get("workflow_id") == workflow_id:
                        woke.set()
            except Exception:  # the stream only hurries the loop; polling goes on without it
                pass

        t = threading.Thread(target=watch, daemon=True)
        t.start()
        handled = set()
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while True:
                woke.clear()
                view = self.round(workflow_id)
                if view.get("status") not in ("running", "failed"):
                    return view
                if view.get("status") == "failed":
                    raise APIError(200, "round_failed", view.get("error") or "the round failed", view)
                for p in view.get("pending") or []:
                    key = (p.get("call_id"), p.get("approval_id"), p.get("kind"), p.get("wait_id"))
                    if key in handled:
                        continue
                    handled.add(key)
                    self._handle(workflow_id, p, on_approval, on_wait)
                if deadline is not None and time.monotonic() > deadline:
                    raise APIError(0, "timeout", "round %s still runs after %ss" % (workflow_id, timeout), view)
                woke.wait(poll)
        finally:
            stop.set()

    def _handle(self, workflow_id: str, p: Dict[str, Any], on_approval, on_wait) -> None:
        kind = p.get("kind") or ""
        if kind in DECISION_KINDS:
            if on_approval is None:
                return
            d = on_approval(p)
            if d is None:
                return
            if isinstance(d, bool):
                d = Decision(d)
            try:
                if d.approve:
                    self.approve(workflow_id, p["call_id"], p.get("approval_id"), reason=d.reason, args=d.args,
                                 remember=d.remember, pattern=d.pattern, allow_turn=d.allow_turn,
                                 wait_id=p.get("wait_id"))
                else:
                    self.deny(workflow_id, p["call_id"], p.get("approval_id"), reason=d.reason, wait_id=p.get("wait_id"))
            except APIError as e:
                # The call stopped waiting meanwhile (decided elsewhere, or
                # its deadline passed): the round's result tells the rest.
                if e.code != "not_waiting":
                    raise
            return
        if on_wait is None:
            return
        out = on_wait(p)
        if kind == "answer" and out is not None:
            answers = [out] if isinstance(out, str) else list(out)
            try:
                self.answer(workflow_id, p["call_id"], answers)
            except APIError as e:
                if e.code != "not_waiting":
                    raise
        if kind == "elicitation" and out is not None:
            # "decline" or "cancel", or the form's values to accept.
            try:
                if out in ("decline", "cancel"):
                    self.answer_elicitation(workflow_id, p["call_id"], out, wait_id=p.get("wait_id"))
                elif isinstance(out, dict):
                    self.answer_elicitation(workflow_id, p["call_id"], "accept", content=out, wait_id=p.get("wait_id"))
            except APIError as e:
                if e.code != "not_waiting":
                    raise
        if kind == "tool_result" and out is not None:
            if isinstance(out, str):
                out = ToolResult(out)
            if not isinstance(out, ToolResult):
                raise TypeError("on_wait returned %s for the client tool call %s (%s): return a toolround.ToolResult, "
                                "a string or None" % (type(out).__name__, p.get("call_id"), p.get("tool")))
            try:
                self.submit_tool_result(workflow_id, p["call_id"], out.content, is_error=out.is_error,
                                        wait_id=p.get("wait_id"))
            except APIError as e:
                if e.code != "not_waiting":
                    raise

    # -- people ------------------------------------------------------------

    def inbox(self, session: Optional[str] = None) -> List[Dict[str, Any]]:
        """The rounds that wait for a person: ``[{"workflow_id",
        "session_id", "pending": [...]}]``, of one session or all."""
        return self._request("GET", "/api/v1/inbox", query={"session": session} if session else None, idempotent=True)

    def approve(self, workflow_id: str, call_id: str, approval_id: Optional[str], reason: Optional[str] = None,
                args: Optional[Union[Dict[str, Any], str]] = None, remember: bool = False, pattern: Optional[str] = None,
                allow_turn: bool = False, up_to: Optional[int] = None, wait_id: Optional[str] = None,
                scope: Optional[str] = None) -> Dict[str, Any]:
        """Approves a waiting call (needs an approver token); ``args``
        approves it with edited arguments. ``up_to``, with ``remember``,
        bounds the remembered rule to that many calls of the run (B2).
        ``scope``, with ``remember``, is what a command the rule approves
        may change (T12): ``"read-only"`` (the workspace is read-only to
        it) or ``"write"``; default read-only for a read-only form of the
        call, else write.
        ``wait_id`` (the pending entry's) makes a decision for another wait
        of the call fail with 409 ``stale_wait`` (B1)."""
        body: Dict[str, Any] = {"workflow_id": workflow_id, "call_id": call_id, "approve": True}
        if approval_id:
            body["approval_id"] = approval_id
        if wait_id:
            body["wait_id"] = wait_id
        if reason:
            body["reason"] = reason
        if args is not None:
            body["args"] = args
        if remember:
            body["remember"] = True
        if pattern:
            body["pattern"] = pattern
        if allow_turn:
            body["allow_turn"] = True
        if up_to is not None:
            body["up_to"] = up_to
        if scope:
            body["scope"] = scope
        return self._request("POST", "/api/v1/approvals", body=body)

    def deny(self, workflow_id: str, call_id: str, approval_id: Optional[str], reason: Optional[str] = None,
             wait_id: Optional[str] = None) -> Dict[str, Any]:
        """Denies a waiting call (needs an approver token); ``wait_id`` as
        for approve."""
        body: Dict[str, Any] = {"workflow_id": workflow_id, "call_id": call_id, "approve": False}
        if approval_id:
            body["approval_id"] = approval_id
        if wait_id:
            body["wait_id"] = wait_id
        if reason:
            body["reason"] = reason
        return self._request("POST", "/api/v1/approvals", body=body)

    def answer(self, workflow_id: str, call_id: str, answers: List[str]) -> Dict[str, Any]:
        """Answers an ``ask_user`` call."""
        return self._request("POST", "/api/v1/answers", body={"workflow_id": workflow_id, "call_id": call_id, "answers": list(answers)})

    def answer_elicitation(self, workflow_id: str, call_id: str, action: str,
                           content: Optional[Dict[str, Any]] = None, wait_id: Optional[str] = None) -> Dict[str, Any]:
        """Answers a call whose MCP server asks for input (pending kind
        ``elicitation``): ``"accept"`` with the requested form's ``content``
        (checked against its schema: 400 ``invalid_answer``), ``"decline"``
        or ``"cancel"``. ``wait_id`` (the pending entry's) refuses an answer
        for another wait with 409 ``stale_wait``."""
        body: Dict[str, Any] = {"workflow_id": workflow_id, "call_id": call_id, "action": action}
        if content is not None:
            body["content"] = content
        if wait_id:
            body["wait_id"] = wait_id
        return self._request("POST", "/api/v1/answers", body=body)

    def submit_tool_result(self, workflow_id: str, call_id: str, content: str, is_error: bool = False,
                           wait_id: Optional[str] = None) -> Dict[str, Any]:
        """Sends a client tool's result (pending kind ``tool_result``, Y5):
        ``content`` as the model will read it, ``is_error`` when the tool
        failed. An ``agent`` token in the session's scope may send it.
        ``wait_id`` (the pending entry's) refuses a result for another wait
        with 409 ``stale_wait``; a call that does not wait for a result is
        404 ``not_waiting``."""
        body: Dict[str, Any] = {"workflow_id": workflow_id, "call_id": call_id, "content": content}
        if is_error:
            body["is_error"] = True
        if wait_id:
            body["wait_id"] = wait_id
        return self._request("POST", "/api/v1/tool-results", body=body)

    def extend(self, workflow_id: str, call_id: str, seconds: int) -> Dict[str, Any]:
        """Pushes a waiting call's deadline by ``seconds``."""
        return self._request("POST", "/api/v1/extend", body={"workflow_id": workflow_id, "call_id": call_id, "seconds": int(seconds)})

    def cancel(self, workflow_id: str) -> Dict[str, Any]:
        """Cancels a round or an agent run."""
        return self._request("POST", "/api/v1/cancel", body={"workflow_id": workflow_id})

    # -- events --------------------------------------------------------------

    def events(self, session: str, from_start: bool = False, after: Optional[str] = None,
               stop: Optional[threading.Event] = None, reconnect: float = 2.0) -> Iterator[Dict[str, Any]]:
        """The session's events as they happen (an iterator of dicts).

        ``from_start`` replays the events the stream keeps first; ``after``
        resumes after the event with that id. A dropped connection is
        reconnected with ``Last-Event-ID`` set to the last event seen, so no
        event is lost or repeated. ``stop`` (a ``threading.Event``) ends the
        iteration at the next event or keep-alive.
        """
        last = after
        while stop is None or not stop.is_set():
            headers = {"Accept": "text/event-stream"}
            if self.token:
                headers["Authorization"] = "Bearer " + self.token
            query = None
            if last:
                headers["Last-Event-ID"] = last
            elif from_start:
                query = {"after": "0"}
            req = urllib.request.Request(self._url("/api/v1/sessions/" + urllib.parse.quote(session, safe="") + "/events", query),
                                         headers=headers)
            try:
                resp = urllib.request.urlopen(req, timeout=max(self.timeout, 45))
            except urllib.error.HTTPError as e:
                raise _api_error(e.code, e.read()) from None
            except (urllib.error.URLError, http.client.HTTPException, OSError):
                time.sleep(reconnect)
                continue
            try:
                for ev_id, data in _sse(resp, stop):
                    if data is None:
                        continue
                    try:
                        ev = json.loads(data)
                    except ValueError:
                        continue
                    if ev_id:
                        last = ev_id
                    yield ev
                    if stop is not None and stop.is_set():
                        return
            except (http.client.HTTPException, OSError, ValueError):
                pass
            finally:
                resp.close()
            if stop is not None and stop.is_set():
                return
            time.sleep(reconnect)

    # -- agents --------------------------------------------------------------

    def start_agent(self, session_id: str, run_id: str, task: str, provider: Optional[str] = None, auto_approve: bool = False,
                    max_rounds: Optional[int] = None, confirm_timeout_seconds: Optional[int] = None) -> str:
        """Starts an agent run (or attaches to it) and returns its workflow
        id, ``agentrun/<session>/<run>``; retried on network errors."""
        body: Dict[str, Any] = {"session_id": session_id, "run_id": run_id, "task": task}
        if provider:
            body["provider"] = provider
        if auto_approve:
            body["auto_approve"] = True
        if max_rounds is not None:
            body["max_rounds"] = max_rounds
        if confirm_timeout_seconds is not None:
            body["confirm_timeout_seconds"] = confirm_timeout_seconds
        return self._request("POST", "/api/v1/agents", body=body, idempotent=True)["workflow_id"]

    def agent(self, workflow_id: str) -> Dict[str, Any]:
        """The agent run's status and conversation so far."""
        return self._request("GET", "/api/v1/agents/" + _path(workflow_id), idempotent=True)

    def send_message(self, workflow_id: str, text: str) -> Dict[str, Any]:
        """Sends a user message to a running agent run."""
        return self._request("POST", "/api/v1/agents/" + _path(workflow_id) + "/messages", body={"text": text})

    # -- the run handle ------------------------------------------------------

    def run(self, session_id: str, run_id: str, provider: str = "openai", resume: bool = False, state: Any = None,
            **defaults: Any) -> "Run":
        """A handle on the run ``session_id``/``run_id`` (U9): it keeps the
        run state and the round number. ``resume`` reopens a run after a
        client crash at its last finished round (``Run.resume``); ``state``
        is the run state of its first round (None: the provider's tools).
        ``defaults`` are round input fields every round gets
        (``client_tools``, ``confirm_timeout_seconds``, ...)."""
        r = Run(self, session_id, run_id, provider, **defaults)
        r.state = state
        if resume:
            r.resume()
        return r


class Run:
    """One agent run's rounds (U9): ``round(assistant)`` submits the model's
    calls as the next round with the state of the previous one, follows it
    and returns its result. ``state`` and ``number`` (the last finished
    round, 0 before the first) are kept here."""

    def __init__(self, client: Client, session_id: str, run_id: str, provider: str = "openai", **defaults: Any):
        self.client = client
        self.session_id = session_id
        self.run_id = run_id
        self.provider = provider
        self.defaults = defaults
        self.number = 0
        self.state: Any = None
        self.last: Optional[Dict[str, Any]] = None

    @property
    def next_workflow_id(self) -> str:
        return round_workflow_id(self.session_id, self.run_id, self.number + 1)

    def input(self, assistant: Dict[str, Any], **fields: Any) -> Dict[str, Any]:
        """The next round's input for an assistant message."""
        inp: Dict[str, Any] = {"session_id": self.session_id, "run_id": self.run_id, "round": self.number + 1,
                               "provider": self.provider, "assistant": assistant, "state": self.state}
        inp.update(self.defaults)
        inp.update(fields)
        return inp

    def round(self, assistant: Union[Dict[str, Any], List[Dict[str, Any]]], on_approval=None, on_wait=None,
              timeout: Optional[float] = None, **fields: Any) -> Dict[str, Any]:
        """Runs the model's calls as the next round. ``assistant`` is the
        assistant message (with ``tool_calls``) or the list of calls."""
        if isinstance(assistant, list):
            assistant = {"role": "assistant", "content": "", "tool_calls": assistant}
        inp = self.input(assistant, **fields)
        res = self.client.run_round(inp, on_approval=on_approval, on_wait=on_wait, timeout=timeout)
        self._finished(inp["round"], res)
        return res

    def _finished(self, n: int, res: Dict[str, Any]) -> None:
        self.number = n
        self.state = res.get("state")
        self.last = res

    def resume(self) -> int:
        """Finds the run's last finished round and takes its state; returns
        its number (0 for a run with no round). A round that still runs is
        followed to its end first. Raises ``APIError`` (code
        ``round_failed``) when the last round failed: the run cannot go on
        from a state it does not have."""
        n = 0
        while True:
            try:
                view = self.client.round(round_workflow_id(self.session_id, self.run_id, n + 1))
            except APIError as e:
                if e.status == 404:
                    break
                raise
            n += 1
            if view.get("status") == "running":
                view = self.client.follow_round(view["workflow_id"], self.session_id)
            elif view.get("status") == "failed":
                raise APIError(200, "round_failed", "round %d of %s/%s failed: %s" % (
                    n, self.session_id, self.run_id, view.get("error", "")), view)
            self._finished(n, view)
        return self.number


def _path(workflow_id: str) -> str:
    # Workflow ids sit in the path with their slashes (toolround/s/r/1).
    return "/".join(urllib.parse.quote(p, safe="") for p in workflow_id.split("/"))


def _api_error(status: int, raw: bytes) -> APIError:
    body: Any = None
    code, message = "http_%d" % status, ""
    try:
        body = json.loads(raw)
        if isinstance(body, dict):
            code = body.get("error") or code
            message = body.get("message") or ""
    except ValueError:
        message = raw.decode("utf-8", "replace")[:500]
    return APIError(status, code, message, body)


def _sse(resp, stop: Optional[threading.Event]) -> Iterator[tuple]:
    """(id, data) per SSE item; (None, None) for each keep-alive comment, so
    that the caller can look at ``stop``."""
    ev_id, data = None, []
    while True:
        line = resp.readline()
        if not line:
            return
        line = line.decode("utf-8").rstrip("\r\n")
        if line == "":
            if data:
                yield ev_id, "\n".join(data)
            ev_id, data = None, []
            continue
        if line.startswith(":"):
            yield None, None
            continue
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "id":
            ev_id = value
        elif field == "data":
            data.append(value)
        if stop is not None and stop.is_set():
            return
