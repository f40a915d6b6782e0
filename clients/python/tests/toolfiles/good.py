"""Tools that check accepts: read by test_tools.py's CLI tests."""

from pydantic import BaseModel

from toolround.tools import ToolContext, tool


class Place(BaseModel):
    city: str


@tool(effect="read_only", subject="q", cache_seconds=30)
def search(q: str, limit: int = 3, *, ctx: ToolContext) -> list[str]:
    """Search the notes."""
    return ["%s %d" % (q, i) for i in range(limit)]


@tool(effect="side_effect", heartbeat=6)
async def send(to: str, place: Place | None = None) -> str:
    "Send a postcard."
    return "sent to " + to
