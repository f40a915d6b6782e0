"""A tool named as a built-in: the test catalog refuses it."""

from toolround.tools import tool


@tool(effect="read_only")
def calculate(expression: str) -> str:
    "Evaluate an expression."
    return expression


@tool(effect="read_only")
def echo(text: str) -> str:
    "Say it again."
    return text
