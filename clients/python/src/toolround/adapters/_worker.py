"""The tool worker an adapter starts in the application's process for the
application's own tools (SPEC Y6), and the wait until the toolround worker
lists them."""

import asyncio
import threading
from typing import Any, Dict, List, Optional

from ..client import APIError, Client


class ToolWorker:
    """A tool worker in a thread of this process, with its own event loop:
    ``toolround.tools.serve_async`` of ``tools`` on ``task_queue`` until
    ``close()``."""

    def __init__(self, tools: List[Any], task_queue: str, **serve_kw: Any):
        self.task_queue = task_queue
        self._ready = threading.Event()
        self._error: Optional[BaseException] = None
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._stop: Optional[asyncio.Event] = None
        self._closing = False
        self._thread = threading.Thread(target=self._main, args=(tools, serve_kw), daemon=True,
                                        name="toolround-tool-worker")
        self._thread.start()

    def _main(self, tools: List[Any], serve_kw: Dict[str, Any]) -> None:
        from ..tools import serve_async

        async def run() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            if self._closing:  # close() came before the loop was there
                self._stop.set()
            await serve_async(tools, self.task_queue, handle_signals=False, stop=self._stop,
                              ready=self._ready.set, **serve_kw)

        try:
            asyncio.run(run())
        except BaseException as e:  # ServeRefused (its lines printed), or no Temporal
            self._error = e
        finally:
            self._ready.set()

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Waits until the catalog accepted the tools; raises what kept the
        worker from serving (``toolround.tools.ServeRefused``, ...)."""
        if not self._ready.wait(timeout):
            raise TimeoutError("the tool worker of %s did not start within %gs" % (self.task_queue, timeout))
        if self._error is not None:
            raise self._error

    def close(self, timeout: float = 30.0) -> None:
        """Stops the worker (calls in flight get 10 seconds)."""
        self._closing = True
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and self._thread.is_alive():
            try:
                loop.call_soon_threadsafe(stop.set)
            except RuntimeError:  # the loop has ended
                pass
        self._thread.join(timeout)


def wait_available(client: Client, provider: str, queue: str, names: List[str], timeout: float) -> None:
    """Until the toolround worker lists the queue's tools as served by a
    live tool worker (it reads the catalogs every two seconds)."""
    import time

    deadline = time.monotonic() + timeout
    seen: Any = None
    while True:
        try:
            listed = client.tools(provider, worker=True)
            seen = next((q for q in listed.get("queues") or [] if q.get("queue") == queue), None)
            if seen and seen.get("available") and set(names) <= set(seen.get("tools") or []):
                return
        except APIError as e:
            seen = e
        if time.monotonic() > deadline:
            raise TimeoutError("the toolround worker did not list %s on queue %s within %gs (is the queue in its "
                               "TOOL_QUEUES?): %r" % (", ".join(names), queue, timeout, seen))
        time.sleep(0.2)
