"""python -m toolround.tools serve FILE.py --task-queue Q
python -m toolround.tools check FILE.py"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from typing import List, Optional

from ._core import Tool, problems_of


def load(path: str) -> List[Tool]:
    """Import a Python file and return its @tool functions, in the file's order."""
    path = os.path.abspath(path)
    name = "_toolround_tools_" + "".join(c if c.isalnum() else "_" for c in os.path.splitext(os.path.basename(path))[0])
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError("%s is not a Python file" % path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec.loader.exec_module(module)
    out: List[Tool] = []
    for v in vars(module).values():
        if isinstance(v, Tool) and not any(v is t for t in out):
            out.append(v)
    return out


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m toolround.tools",
                                description="Serve the @tool functions of a Python file as toolround tools.")
    sub = p.add_subparsers(dest="command", metavar="{serve,check}")
    sub.required = True
    s = sub.add_parser("serve", help="announce the file's tools and serve them until SIGINT or SIGTERM")
    s.add_argument("file", metavar="FILE.py", help="a Python file with @tool functions")
    s.add_argument("--task-queue", required=True, help="this tool worker's own task queue")
    s.add_argument("--address", default=None, help="Temporal's address (TEMPORAL_ADDRESS, else 127.0.0.1:7233)")
    s.add_argument("--namespace", default=None, help="Temporal's namespace (TEMPORAL_NAMESPACE, else default)")
    s.add_argument("--toolround-task-queue", default=None,
                   help="toolround's own task queue (TOOLROUND_TASK_QUEUE, else toolround)")
    c = sub.add_parser("check", help="print the tools the file would announce, or its problems (exit 2)")
    c.add_argument("file", metavar="FILE.py", help="a Python file with @tool functions")
    return p


def main(argv: Optional[List[str]] = None) -> int:
    p = _parser()
    a = p.parse_args(argv)
    if not os.path.isfile(a.file):
        p.error("%s: no such file" % a.file)
    try:
        tools = load(a.file)
    except Exception as e:
        print("toolround.tools: cannot import %s: %s: %s" % (a.file, type(e).__name__, e), file=sys.stderr)
        return 2
    lines = problems_of(tools)
    if not tools:
        lines.append("%s has no @tool functions" % a.file)
    if a.command == "check":
        if lines:
            for line in lines:
                print("toolround.tools: " + line, file=sys.stderr)
            return 2
        print(json.dumps({"tools": [t.announcement() for t in tools]}, indent=2, ensure_ascii=False))
        return 0
    from ._serve import ServeRefused, serve_async
    import asyncio
    try:
        asyncio.run(serve_async(tools, a.task_queue, address=a.address, namespace=a.namespace,
                                toolround_task_queue=a.toolround_task_queue))
    except ServeRefused:
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as e:
        print("toolround.tools: %s: %s" % (type(e).__name__, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    code = main()
    # Leave without the interpreter's finalization: the Temporal client's
    # threads may still call into Python then and abort the process
    # (temporalio/sdk-python#300), which would turn a clean stop into SIGABRT.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
