"""A tool file `python -m toolround.tools serve` serves in test_tools.py."""

from toolround.tools import tool


@tool(effect="read_only")
def echo(text: str) -> str:
    "Say it again."
    return text
