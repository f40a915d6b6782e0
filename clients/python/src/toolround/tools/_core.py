"""Declaring tools and running one call of a tool: the schema from the
function's type hints, the schema hash, the envelope in and the result out.
Nothing here talks to Temporal but the failure raised for an exception."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import math
import inspect
import json
import re
import threading
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

import pydantic
from pydantic import ConfigDict, Field
from temporalio.exceptions import ApplicationError

NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
EFFECTS = ("read_only", "side_effect")
RESULT_LIMIT = 1 << 20  # bytes of a result's JSON, as the payload converter writes it
MESSAGE_LIMIT = 64 << 10  # characters of an exception's message in a failure

# The JSON Schema keywords toolround's validator enforces (or, for the
# annotations, reads); a schema with any other keyword is refused.
KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "patternProperties",
    "minProperties", "maxProperties", "propertyNames", "dependencies", "items", "contains",
    "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    "minLength", "maxLength", "pattern", "minItems", "maxItems", "uniqueItems", "anyOf", "oneOf",
    "allOf", "not", "if", "then", "else", "$ref", "$defs", "definitions", "$schema", "$id",
    "$comment", "default", "description", "title", "examples", "format", "readOnly", "writeOnly",
    "deprecated",
})  # the same list as the Go catalog's (toolworker/wire.go); prefixItems is not enforced


class ToolError(Exception):
    """Raised by a tool for an error its caller should read: the call's result
    is an error with this message and `error_code` code (or "tool_error"),
    and it is never retried."""

    def __init__(self, message: str, code: Optional[str] = None):
        super().__init__(message)
        self.message = message
        self.code = code


@dataclass
class ToolContext:
    """The call's envelope, given to a function that declares a keyword-only
    parameter `ctx: ToolContext`. `operation_id` is empty for read-only tools;
    for side-effecting ones it is the call's idempotency key. `cancelled` is
    set when the call is cancelled: a sync function checks it
    (`ctx.cancelled.is_set()`, or waits on it instead of sleeping); an async
    function gets asyncio.CancelledError and may check it too."""

    tool: str
    operation_id: str = ""
    call_id: str = ""
    workflow_id: str = ""
    attempt: int = 1
    schema_hash: str = ""
    cancelled: threading.Event = field(default_factory=threading.Event)

    def is_cancelled(self) -> bool:
        return self.cancelled.is_set()


class _Item:
    def item(self) -> Dict[str, Any]:
        raise NotImplementedError


class Text(_Item):
    """A text item of a result."""

    def __init__(self, text: str):
        self.text = str(text)

    def item(self) -> Dict[str, Any]:
        return {"type": "text", "text": self.text}


class Json(_Item):
    """A JSON item of a result (a pydantic model is dumped in JSON mode)."""

    def __init__(self, value: Any):
        self.value = value

    def item(self) -> Dict[str, Any]:
        return {"type": "json", "json": _jsonable(self.value)}


class Image(_Item):
    """An image item of a result: bytes (or base64 text) and a MIME type."""

    def __init__(self, data: Any, mime_type: str = "image/png"):
        if isinstance(data, (bytes, bytearray, memoryview)):
            data = base64.b64encode(bytes(data)).decode("ascii")
        self.data = str(data)
        self.mime_type = mime_type

    def item(self) -> Dict[str, Any]:
        return {"type": "image", "data": self.data, "mime_type": self.mime_type}


def canonical_json(value: Any) -> bytes:
    """Keys sorted, no spaces, UTF-8, non-ASCII characters as they are."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def schema_hash(schema: Any) -> str:
    """"sha256:" and the hex SHA-256 of the schema's canonical JSON."""
    return "sha256:" + hashlib.sha256(canonical_json(schema)).hexdigest()


def unsupported_keywords(schema: Any, path: str = "#") -> List[str]:
    """The places of keywords the validator does not enforce, "path: keyword"."""
    out: List[str] = []
    if not isinstance(schema, dict):
        return out
    for k, v in schema.items():
        where = "%s/%s" % (path, k)
        if k not in KEYWORDS:
            out.append("%s: %s" % (path, k))
        elif k in ("properties", "patternProperties", "$defs", "definitions", "dependencies") and isinstance(v, dict):
            for name, sub in v.items():
                out.extend(unsupported_keywords(sub, "%s/%s" % (where, name)))
        elif k in ("items", "not", "additionalProperties", "propertyNames", "contains", "if", "then", "else"):
            out.extend(unsupported_keywords(v, where))
        elif k in ("anyOf", "oneOf", "allOf") and isinstance(v, list):
            for i, sub in enumerate(v):
                out.extend(unsupported_keywords(sub, "%s/%d" % (where, i)))
    return out


def _takes_ctx(p: inspect.Parameter, hint: Any) -> bool:
    return p.name == "ctx" or hint is ToolContext


class Tool:
    """A function declared with @tool: call it as the function itself; serve
    it with serve(). `problems` lists what keeps it from being announced."""

    def __init__(self, fn: Callable[..., Any], *, name: Optional[str], effect: Any, concurrent: bool,
                 cache_seconds: float, description: Optional[str], subject: Optional[str],
                 timeout: float, schedule_to_start: float, heartbeat: float,
                 reconcile: Optional[Callable[..., Any]]):
        self.fn = fn
        self.name = name if name is not None else getattr(fn, "__name__", "")
        self.effect = effect
        self.concurrent = bool(concurrent)
        self.cache_seconds = cache_seconds
        self.description = description if description is not None else (inspect.getdoc(fn) or "")
        self.subject = subject or ""
        self.timeout = timeout
        self.schedule_to_start = schedule_to_start
        self.heartbeat = heartbeat
        self.reconcile = reconcile
        self.is_async = inspect.iscoroutinefunction(fn)
        self.problems: List[str] = []
        self.ctx_param: Optional[str] = None
        self._fields: Dict[str, str] = {}  # parameter name -> the model's field name
        self.model: Optional[type] = None
        self.parameters: Dict[str, Any] = {}
        self.schema_hash = ""
        self._check_settings()
        self._build_model()
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__name__ = getattr(fn, "__name__", self.name)
        self.__wrapped__ = fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return "<tool %s (%s)>" % (self.name, self.effect)

    def _problem(self, msg: str) -> None:
        self.problems.append("tool %s: %s" % (self.name or "?", msg))

    def _check_settings(self) -> None:
        if not isinstance(self.name, str) or not NAME.fullmatch(self.name):
            self._problem("the name %r does not match [a-z][a-z0-9_]{0,63}" % (self.name,))
        if self.effect not in EFFECTS:
            self._problem('effect is %r; it is "read_only" or "side_effect"' % (self.effect,))
        for what in ("timeout", "schedule_to_start", "heartbeat"):
            v = getattr(self, what)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
                self._problem("%s is %r; it is a number of seconds above 0" % (what, v))
        if isinstance(self.cache_seconds, bool) or not isinstance(self.cache_seconds, (int, float)) \
                or self.cache_seconds < 0:
            self._problem("cache_seconds is %r; it is a number of seconds, 0 or more" % (self.cache_seconds,))
        if self.reconcile is not None:
            if self.effect != "side_effect":
                self._problem('reconcile is for side-effecting tools (effect="side_effect")')
            if not callable(self.reconcile):
                self._problem("reconcile is not a function")

    def _build_model(self) -> None:
        try:
            sig = inspect.signature(self.fn)
            hints = typing.get_type_hints(self.fn, include_extras=True)
        except (TypeError, ValueError, NameError) as e:
            self._problem("cannot read its signature: %s" % e)
            return
        fields: Dict[str, Any] = {}
        for i, p in enumerate(sig.parameters.values()):
            hint = hints.get(p.name)
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                self._problem("parameter %s%s: *args and **kwargs have no schema" %
                              ("*" if p.kind == p.VAR_POSITIONAL else "**", p.name))
                continue
            if _takes_ctx(p, hint):
                if p.kind != p.KEYWORD_ONLY:
                    self._problem("parameter %s: the context is keyword-only (after a *)" % p.name)
                self.ctx_param = p.name
                continue
            if p.kind == p.POSITIONAL_ONLY:
                self._problem("parameter %s is positional-only; arguments are passed by name" % p.name)
                continue
            if hint is None:
                self._problem("parameter %s has no type hint" % p.name)
                continue
            fname = "p%d" % i
            self._fields[p.name] = fname
            default = ... if p.default is p.empty else p.default
            fields[fname] = (typing.Annotated[hint, Field(alias=p.name)], default)
        if self.problems and not fields:
            return
        try:
            self.model = pydantic.create_model(
                "%s_arguments" % (self.name or "tool"),
                __config__=ConfigDict(extra="forbid", populate_by_name=False, arbitrary_types_allowed=False),
                **fields)
            schema = self.model.model_json_schema()
        except Exception as e:  # pydantic cannot make a schema of a type
            self._problem("no JSON schema for its parameters: %s" % e)
            self.model = None
            return
        schema.pop("title", None)
        props = schema.get("properties", {})
        for pname, fname in self._fields.items():
            if pname in props and self.model.model_fields[fname].title is None:
                props[pname].pop("title", None)
        self.parameters = schema
        for where in unsupported_keywords(schema):
            self._problem("its schema has a keyword the validator does not enforce (%s)" % where)
        try:
            self.schema_hash = schema_hash(schema)
        except ValueError as e:
            self._problem("its schema is not JSON: %s" % e)
        if self.subject:
            if self.subject not in self._fields:
                self._problem("subject %r is not one of its parameters" % self.subject)
            elif props.get(self.subject, {}).get("type") != "string":
                self._problem("subject %r is not a string parameter" % self.subject)

    def announcement(self) -> Dict[str, Any]:
        """The tool's entry of the announce update."""
        return {
            "name": self.name, "description": self.description, "parameters": self.parameters,
            "effect": self.effect, "concurrent": self.concurrent, "cache_seconds": _whole(self.cache_seconds),
            "subject": self.subject, "timeout_seconds": _whole(self.timeout),
            "schedule_to_start_seconds": _whole(self.schedule_to_start), "heartbeat_seconds": _whole(self.heartbeat),
            "reconcile": self.reconcile is not None, "schema_hash": self.schema_hash,
        }


def _whole(seconds: float) -> int:
    """Seconds as the catalog takes them: whole seconds, rounded up."""
    return int(math.ceil(seconds))


def tool(_fn: Any = None, *, effect: Optional[str] = None, concurrent: bool = False,
         cache_seconds: float = 0, description: Optional[str] = None, subject: Optional[str] = None,
         timeout: float = 60, schedule_to_start: float = 300, heartbeat: float = 20,
         reconcile: Optional[Callable[..., Any]] = None, name: Optional[str] = None) -> Callable[[Callable[..., Any]], Tool]:
    """Declare a typed function (sync or async) a tool:

        @tool(effect="read_only")
        def search(q: str, limit: int = 10) -> list[str]:
            "Search the notes."

    The schema comes from the type hints (a keyword-only `ctx: ToolContext`
    is left out), the description from the docstring, the name from the
    function's (or name=). A problem (a bad name, a parameter without a type
    hint, a schema keyword the validator does not enforce) does not raise
    here: it is in the tool's `problems`, which `check` prints and `serve`
    refuses to start with."""
    if _fn is not None or effect is None:
        raise TypeError('@tool needs an effect: @tool(effect="read_only") or @tool(effect="side_effect")')

    def wrap(fn: Callable[..., Any]) -> Tool:
        return Tool(fn, name=name, effect=effect, concurrent=concurrent, cache_seconds=cache_seconds,
                    description=description, subject=subject, timeout=timeout,
                    schedule_to_start=schedule_to_start, heartbeat=heartbeat, reconcile=reconcile)
    return wrap


class SchemaTool(Tool):
    """A tool whose schema is given, not read from type hints: an adapter's
    tool for a framework's own tool definition (a function tool of the OpenAI
    Agents SDK, for one). `fn(args, *, ctx)` gets the arguments' dict as the
    call sent it, validated by the round against `parameters`, and the call's
    ToolContext; it validates further as it likes."""

    def __init__(self, name: str, parameters: Dict[str, Any], fn: Callable[..., Any], *, effect: Any,
                 description: str = "", concurrent: bool = False, cache_seconds: float = 0,
                 subject: Optional[str] = None, timeout: float = 60, schedule_to_start: float = 300,
                 heartbeat: float = 20, reconcile: Optional[Callable[..., Any]] = None):
        self._given = parameters
        super().__init__(fn, name=name, effect=effect, concurrent=concurrent, cache_seconds=cache_seconds,
                         description=description, subject=subject, timeout=timeout,
                         schedule_to_start=schedule_to_start, heartbeat=heartbeat, reconcile=reconcile)

    def _build_model(self) -> None:
        self.ctx_param = "ctx"
        schema = self._given
        if not isinstance(schema, dict) or schema.get("type") != "object":
            self._problem("its parameters are not an object schema")
            return
        try:
            schema = json.loads(canonical_json(schema))
            self.schema_hash = schema_hash(schema)
        except (TypeError, ValueError) as e:
            self._problem("its schema is not JSON: %s" % e)
            return
        self.parameters = schema
        for where in unsupported_keywords(schema):
            self._problem("its schema has a keyword the validator does not enforce (%s)" % where)
        if self.subject and (schema.get("properties") or {}).get(self.subject, {}).get("type") != "string":
            self._problem("subject %r is not a string parameter" % self.subject)


def problems_of(tools: List[Tool]) -> List[str]:
    """Every tool's problems, and the names used twice."""
    out: List[str] = []
    seen: Dict[str, Tool] = {}
    for t in tools:
        if not isinstance(t, Tool):
            out.append("%r is not a function declared with @tool" % (t,))
            continue
        out.extend(t.problems)
        if t.name in seen and seen[t.name] is not t:
            out.append("tool %s: the name is used twice (%s and %s)" %
                       (t.name, _where(seen[t.name].fn), _where(t.fn)))
        seen.setdefault(t.name, t)
    return out


def _where(fn: Any) -> str:
    code = getattr(fn, "__code__", None)
    if code is None:
        return getattr(fn, "__qualname__", repr(fn))
    return "%s:%d" % (code.co_filename, code.co_firstlineno)


# --- one call ---------------------------------------------------------------

class _BadResult(Exception):
    pass


def _default(o: Any) -> Any:
    if isinstance(o, pydantic.BaseModel):
        return o.model_dump(mode="json")
    raise _BadResult("a value of type %s is not JSON" % type(o).__name__)


def _jsonable(value: Any) -> Any:
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json")
    try:
        return json.loads(json.dumps(value, default=_default, allow_nan=False))
    except ValueError as e:  # NaN or infinity
        raise _BadResult("the result is not JSON: %s" % e)
    except TypeError as e:  # keys that are not strings
        raise _BadResult("the result is not JSON: %s" % e)


def content_of(value: Any) -> List[Dict[str, Any]]:
    """The content items of a function's return value."""
    if value is None:
        return []
    if isinstance(value, _Item):
        return [value.item()]
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    if isinstance(value, (bytes, bytearray, memoryview)):
        raise _BadResult("the result is %s; return text, JSON, or Image(data, mime_type) for an image"
                         % type(value).__name__)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, _Item) for v in value):
        return [v.item() for v in value]
    if isinstance(value, (pydantic.BaseModel, dict, list, tuple, int, float, bool)):
        return [{"type": "json", "json": _jsonable(value)}]
    raise _BadResult("a value of type %s is not JSON" % type(value).__name__)


def _error(code: str, text: str) -> Dict[str, Any]:
    return {"v": 1, "content": [{"type": "text", "text": text}], "is_error": True, "error_code": code}


def wire_size(result: Dict[str, Any]) -> int:
    """The bytes of the result's JSON as the json/plain converter writes it."""
    return len(json.dumps(result, sort_keys=True, separators=(",", ":")).encode("utf-8"))


def _capped(t: Tool, result: Dict[str, Any]) -> Dict[str, Any]:
    n = wire_size(result)
    if n > RESULT_LIMIT:
        return _error("result_too_large", "the result of %s is %d bytes of JSON, more than the limit of %d bytes (1 MiB)"
                      % (t.name, n, RESULT_LIMIT))
    return result


def failure(exc: BaseException) -> ApplicationError:
    """The activity failure for an exception a function raised: its class name
    as the type, its message (cut at 64 KiB)."""
    msg = str(exc)
    if len(msg) > MESSAGE_LIMIT:
        msg = msg[:MESSAGE_LIMIT] + "... (cut at %d characters)" % MESSAGE_LIMIT
    return ApplicationError(msg or type(exc).__name__, type=type(exc).__name__)


class _Prepared:
    def __init__(self, kwargs: Dict[str, Any], ctx: ToolContext):
        self.kwargs = kwargs
        self.ctx = ctx


def _prepare(t: Tool, envelope: Any) -> Any:
    """The function's arguments and context, or an error result."""
    if not isinstance(envelope, dict) or envelope.get("v") != 1:
        raise ApplicationError("%s: the input is not a version 1 envelope" % t.name, type="BadEnvelope",
                               non_retryable=True)
    if envelope.get("tool") != t.name:
        raise ApplicationError("%s: the envelope is for tool %r" % (t.name, envelope.get("tool")),
                               type="BadEnvelope", non_retryable=True)
    if envelope.get("schema_hash") != t.schema_hash:
        return _error("schema_changed", "the schema of %s has changed since the call was checked (%s, now %s); ask again"
                      % (t.name, envelope.get("schema_hash") or "no hash", t.schema_hash))
    try:
        args = json.loads(envelope.get("args_json") or "{}")
    except ValueError as e:
        return _error("invalid_arguments", "%s: the arguments are not JSON: %s" % (t.name, e))
    if not isinstance(args, dict):
        return _error("invalid_arguments", "%s: the arguments are not a JSON object" % t.name)
    attempt = envelope.get("attempt")
    ctx = ToolContext(tool=t.name, operation_id=str(envelope.get("operation_id") or ""),
                      call_id=str(envelope.get("call_id") or ""), workflow_id=str(envelope.get("workflow_id") or ""),
                      attempt=attempt if isinstance(attempt, int) and not isinstance(attempt, bool) else 1,
                      schema_hash=t.schema_hash)
    if isinstance(t, SchemaTool):
        return _Prepared({"args": args}, ctx)
    assert t.model is not None
    try:
        m = t.model.model_validate(args)
    except pydantic.ValidationError as e:
        lines = []
        for err in e.errors(include_url=False):
            loc = ".".join(str(x) for x in err.get("loc", ())) or "(arguments)"
            lines.append("%s: %s" % (loc, err.get("msg", "")))
        return _error("invalid_arguments", "%s: invalid arguments: %s" % (t.name, "; ".join(lines)))
    kwargs = {p: getattr(m, f) for p, f in t._fields.items()}
    return _Prepared(kwargs, ctx)


async def _beat(heartbeat: Callable[[], None], interval: float) -> None:
    while True:
        heartbeat()
        await asyncio.sleep(interval)


async def _run(fn: Callable[..., Any], is_async: bool, kwargs: Dict[str, Any], ctx: ToolContext,
               ctx_param: Optional[str], heartbeat: Optional[Callable[[], None]], interval: float,
               executor: Any) -> Any:
    if ctx_param:
        kwargs = dict(kwargs, **{ctx_param: ctx})
    beat = asyncio.ensure_future(_beat(heartbeat, interval)) if heartbeat is not None else None
    try:
        if is_async:
            # The function runs as a task of its own, so ctx.cancelled is set
            # before the CancelledError reaches it.
            inner = asyncio.ensure_future(fn(**kwargs))
            try:
                return await asyncio.shield(inner)
            except asyncio.CancelledError:
                ctx.cancelled.set()
                inner.cancel()
                try:
                    await inner
                except BaseException:
                    pass
                raise
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(executor, lambda: fn(**kwargs))
        except asyncio.CancelledError:
            ctx.cancelled.set()
            raise
    finally:
        if beat is not None:
            beat.cancel()


async def call(t: Tool, envelope: Any, *, heartbeat: Optional[Callable[[], None]] = None,
               interval: Optional[float] = None, executor: Any = None) -> Dict[str, Any]:
    """Run one call of t from its envelope and return the result object, or
    raise the activity failure for an exception of the function. heartbeat,
    when given, is called every interval seconds (heartbeat/3 by default)
    while the function runs."""
    prep = _prepare(t, envelope)
    if isinstance(prep, dict):
        return prep
    try:
        value = await _run(t.fn, t.is_async, prep.kwargs, prep.ctx, t.ctx_param, heartbeat,
                           interval or t.heartbeat / 3, executor)
    except ToolError as e:
        return _capped(t, _error(e.code or "tool_error", e.message))
    except asyncio.CancelledError:
        raise
    except Exception as e:
        raise failure(e) from e
    try:
        content = content_of(value)
    except _BadResult as e:
        return _error("bad_result", "%s returned a result that cannot be sent: %s" % (t.name, e))
    return _capped(t, {"v": 1, "content": content, "is_error": False})


async def reconcile(t: Tool, envelope: Any, *, heartbeat: Optional[Callable[[], None]] = None,
                    interval: Optional[float] = None, executor: Any = None) -> Dict[str, Any]:
    """Run t's reconcile function for a call and return
    {"v": 1, "took_effect": true|false|null, "content": [...]}."""
    assert t.reconcile is not None
    prep = _prepare(t, envelope)
    if isinstance(prep, dict):
        return {"v": 1, "took_effect": None, "content": prep["content"]}
    fn = t.reconcile
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        params = {}
    ctx_param = "ctx" if "ctx" in params else None
    try:
        value = await _run(fn, inspect.iscoroutinefunction(fn), prep.kwargs, prep.ctx, ctx_param, heartbeat,
                           interval or t.heartbeat / 3, executor)
    except ToolError as e:
        return {"v": 1, "took_effect": None, "content": [{"type": "text", "text": e.message}]}
    except asyncio.CancelledError:
        raise
    except Exception as e:
        raise failure(e) from e
    content: List[Dict[str, Any]] = []
    if isinstance(value, tuple) and len(value) == 2:
        value, extra = value
        try:
            content = content_of(extra)
        except _BadResult as e:
            content = [{"type": "text", "text": str(e)}]
    if value is not None and not isinstance(value, bool):
        return {"v": 1, "took_effect": None, "content": [{"type": "text", "text":
                "the reconcile function of %s returned %s, not True, False or None" % (t.name, type(value).__name__)}]}
    return {"v": 1, "took_effect": value, "content": content}
