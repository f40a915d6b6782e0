"""A Python tool with a tuple argument, whose schema pydantic writes with
prefixItems, a keyword toolround's validator does not enforce: refused
before it is announced, naming the keyword (Y1)."""
from typing import Tuple

from toolround.tools import tool


@tool(effect="read_only")
def point_lookup(point: Tuple[int, int]) -> str:
    """Look a point up."""
    return "%d,%d" % point
