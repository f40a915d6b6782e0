"""Tools with every problem check reports: read by test_tools.py."""

from typing import Tuple

from toolround.tools import tool


@tool(effect="read_only", name="Search")
def search(q: str) -> str:
    "Bad name."
    return q


@tool(effect="read_only")
def lookup(q) -> str:
    "No type hint."
    return q


@tool(effect="read_only")
def thirds(n: Tuple[int, int]) -> int:
    "A keyword the validator does not enforce (a tuple is prefixItems)."
    return n[0]


@tool(effect="read_only", name="thirds")
def thirds_again(n: int) -> int:
    "The name once more."
    return n
