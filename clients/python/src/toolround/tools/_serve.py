"""Serving tools: announce them to toolround's catalog, then run them as
Temporal activities on the tool worker's own task queue until SIGINT or
SIGTERM."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any, Callable, Dict, Iterable, List, Optional, TextIO

from temporalio import activity
from temporalio.client import Client, WithStartWorkflowOperation, WorkflowUpdateFailedError
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

from . import _core, _secrets
from ._core import Tool

CATALOG_WORKFLOW = "UserToolCatalog"
ANNOUNCE_UPDATE = "announce"
MAX_THREADS = 100  # sync functions running at once, as many as the worker's activities


class ServeRefused(Exception):
    """serve_async would not serve: a tool has a problem, the catalog refused
    a tool or the announce. lines has one line for each, printed already;
    serve() and `python -m toolround.tools serve` exit 2 with it."""

    def __init__(self, lines: List[str]):
        super().__init__("\n".join(lines))
        self.lines = lines


def catalog_workflow_id(task_queue: str) -> str:
    return "usertools/" + task_queue


def announcement(tools: Iterable[Tool], task_queue: str, worker: str) -> Dict[str, Any]:
    return {"v": 1, "queue": task_queue, "worker": worker, "tools": [t.announcement() for t in tools]}


def _activity(t: Tool, run: Callable[..., Any], prefix: str, executor: Any) -> Callable[..., Any]:
    async def tool_activity(envelope: Dict[str, Any]) -> Dict[str, Any]:
        interval = t.heartbeat / 3
        declared = activity.info().heartbeat_timeout
        if declared is not None and declared.total_seconds() > 0:
            interval = min(interval, declared.total_seconds() / 3)
        if isinstance(envelope, dict):
            # Temporal retries the activity with the round's envelope as it
            # was: the function's ctx.attempt is the attempt running.
            envelope = dict(envelope, attempt=activity.info().attempt)
        if isinstance(envelope, dict) and envelope.get("secrets"):
            return await _sealed(t, run, prefix, envelope, interval, executor)
        out = await run(t, envelope, heartbeat=activity.heartbeat, interval=interval, executor=executor)
        if prefix == "toolround.tool" and isinstance(out, dict):
            out["attempt"] = activity.info().attempt  # the round reports it as the call's attempts
        return out
    tool_activity.__name__ = tool_activity.__qualname__ = "%s_%s" % (prefix.replace(".", "_"), t.name)
    return activity.defn(name="%s.%s" % (prefix, t.name))(tool_activity)


async def _sealed(t: Tool, run: Callable[..., Any], prefix: str, envelope: Dict[str, Any], interval: float,
                  executor: Any) -> Dict[str, Any]:
    """A call that sends secrets (Y3, T9): open them with the queue's key, run
    the function with their values in its arguments, and seal what it answers
    (the result, or a failure's message) with the same key; toolround opens it
    and redacts the values before it keeps it. A reconcile answers whether the
    call took effect, without content."""
    reconciling = prefix != "toolround.tool"
    try:
        key, envelope = _secrets.open_call(envelope, activity.info().task_queue)
    except _secrets.SecretsUnavailable as e:
        if reconciling:
            return {"v": 1, "took_effect": None, "content": []}
        return {"v": 1, "content": [{"type": "text", "text": "the call sends secrets, and this tool worker cannot "
                                     "open them, so it did not run: %s" % e}],
                "is_error": True, "error_code": "secrets_unavailable"}
    try:
        out = await run(t, envelope, heartbeat=activity.heartbeat, interval=interval, executor=executor)
    except ApplicationError as e:
        if reconciling:
            return {"v": 1, "took_effect": None, "content": []}
        # from None: the function's own exception, whose message may hold a
        # value, is not sent as the failure's cause.
        raise ApplicationError(_secrets.seal(key, e.message or type(e).__name__), type=_secrets.FAILURE_SEALED,
                               non_retryable=e.non_retryable) from None
    if reconciling:
        return {"v": 1, "took_effect": out.get("took_effect"), "content": []}
    out["attempt"] = activity.info().attempt
    return {"v": 1, "content": [], "is_error": False, "attempt": activity.info().attempt,
            "sealed": _secrets.seal(key, json.dumps(out, separators=(",", ":")))}


def activities(tools: Iterable[Tool], executor: Any = None) -> List[Callable[..., Any]]:
    """One activity toolround.tool.<name> for each tool, and one
    toolround.reconcile.<name> for each tool that declares reconcile."""
    out = []
    for t in tools:
        out.append(_activity(t, _core.call, "toolround.tool", executor))
        if t.reconcile is not None:
            out.append(_activity(t, _core.reconcile, "toolround.reconcile", executor))
    return out


def _say(out: TextIO, line: str) -> None:
    print("toolround.tools: " + line, file=out, flush=True)


async def serve_async(tools: Iterable[Tool], task_queue: str, *, address: Optional[str] = None,
                      namespace: Optional[str] = None, toolround_task_queue: Optional[str] = None,
                      client: Optional[Client] = None, identity: Optional[str] = None,
                      handle_signals: bool = True, announce_timeout: float = 60.0,
                      stop: Optional[asyncio.Event] = None, err: Optional[TextIO] = None,
                      ready: Optional[Callable[[], None]] = None) -> None:
    """Announce tools on the catalog workflow usertools/<task_queue> and serve
    them on task_queue until SIGINT or SIGTERM (handle_signals), stop is set,
    or the task is cancelled; then shut the worker down gracefully. ready,
    when given, is called once the catalog accepted the tools, as the worker
    starts polling. Raises
    ServeRefused (its lines printed to err, stderr by default) when a tool has
    a problem or the catalog refuses a tool or the announce."""
    err = err or sys.stderr
    tools = list(tools)
    lines = _core.problems_of(tools)
    if not task_queue:
        lines.append("the task queue is empty")
    if not tools:
        lines.append("no tools to serve")
    if lines:
        for line in lines:
            _say(err, line)
        raise ServeRefused(lines)
    address = address or os.environ.get("TEMPORAL_ADDRESS") or "127.0.0.1:7233"
    namespace = namespace or os.environ.get("TEMPORAL_NAMESPACE") or "default"
    toolround_task_queue = toolround_task_queue or os.environ.get("TOOLROUND_TASK_QUEUE") or "toolround"
    if client is None:
        client = await Client.connect(address, namespace=namespace, **({"identity": identity} if identity else {}))
    who = identity or client.identity
    start = WithStartWorkflowOperation(CATALOG_WORKFLOW, id=catalog_workflow_id(task_queue),
                                       task_queue=toolround_task_queue,
                                       id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING)
    update = asyncio.ensure_future(client.execute_update_with_start_workflow(
        ANNOUNCE_UPDATE, announcement(tools, task_queue, who), start_workflow_operation=start, result_type=dict))
    try:
        done, _ = await asyncio.wait({update}, timeout=announce_timeout)
    finally:
        if not update.done():
            update.cancel()
            await asyncio.wait({update})
            # Read the SDK's errors for the cancel (the update's, the start's),
            # so that they are not logged as never retrieved.
            if not update.cancelled():
                update.exception()
            started = asyncio.ensure_future(start.workflow_handle())
            try:
                await asyncio.wait({started}, timeout=1)
            finally:
                if not started.done():
                    started.cancel()
                elif not started.cancelled():
                    started.exception()
    if not done:
        line = ("no answer to the announce within %gs: is a toolround worker polling task queue %r of namespace %r?"
                % (announce_timeout, toolround_task_queue, client.namespace))
        _say(err, line)
        raise ServeRefused([line])
    try:
        answer = update.result()
    except WorkflowUpdateFailedError as e:
        cause = e.cause if e.cause is not None else e
        line = "the catalog %s refused the announce: %s" % (catalog_workflow_id(task_queue),
                                                            getattr(cause, "message", str(cause)))
        _say(err, line)
        raise ServeRefused([line]) from e
    refused = (answer or {}).get("refused") or []
    if refused:
        lines = ["tool %s refused: %s" % (r.get("name"), r.get("reason")) for r in refused]
        for line in lines:
            _say(err, line)
        raise ServeRefused(lines)

    interval = min(t.heartbeat for t in tools) / 3
    executor = ThreadPoolExecutor(max_workers=MAX_THREADS, thread_name_prefix="toolround-tool")
    worker = Worker(client, task_queue=task_queue, activities=activities(tools, executor),
                    identity=who, max_concurrent_activities=MAX_THREADS,
                    max_heartbeat_throttle_interval=timedelta(seconds=interval),
                    default_heartbeat_throttle_interval=timedelta(seconds=interval),
                    graceful_shutdown_timeout=timedelta(seconds=10))
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    installed = []
    if handle_signals:
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, stop.set)
                installed.append(sig)
            except (NotImplementedError, RuntimeError, ValueError):
                pass
    run = asyncio.ensure_future(worker.run())
    if ready is not None:
        ready()
    waiter = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({run, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
        for sig in installed:
            loop.remove_signal_handler(sig)
        if not run.done():
            await asyncio.shield(worker.shutdown())
        try:
            await run
        finally:
            executor.shutdown(wait=False, cancel_futures=True)


def serve(tools: Iterable[Tool], task_queue: str, **kw: Any) -> None:
    """serve_async in its own event loop; exits 2 when serving is refused."""
    try:
        asyncio.run(serve_async(tools, task_queue, **kw))
    except ServeRefused:
        sys.exit(2)
