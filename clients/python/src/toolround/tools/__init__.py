"""toolround.tools: your own functions as toolround tools, served by a tool
worker of yours as Temporal activities (pip install 'toolround[tools]';
temporalio and pydantic, Python 3.10 or newer).

    from toolround.tools import tool, serve

    @tool(effect="read_only")
    def lookup(city: str) -> str:
        "The weather in a city."
        return "sunny in " + city

    serve([lookup], task_queue="weather-tools")

`python -m toolround.tools serve FILE.py --task-queue Q` serves every @tool
function of a file; `python -m toolround.tools check FILE.py` prints what it
would announce. The wire is described in the project's docs/your-own-tools.md.
"""

import sys

if sys.version_info < (3, 10):  # pragma: no cover
    raise ImportError("toolround.tools needs Python 3.10 or newer")

from ._core import (  # noqa: E402
    RESULT_LIMIT, Image, Json, SchemaTool, Text, Tool, ToolContext, ToolError, canonical_json, problems_of,
    schema_hash, tool,
)
from ._serve import ServeRefused, activities, announcement, catalog_workflow_id, serve, serve_async  # noqa: E402

__all__ = [
    "Image", "Json", "RESULT_LIMIT", "SchemaTool", "ServeRefused", "Text", "Tool", "ToolContext", "ToolError", "activities",
    "announcement", "canonical_json", "catalog_workflow_id", "problems_of", "schema_hash", "serve", "serve_async",
    "tool",
]
