"""same_echo in Python, for TestTheSameCallInEveryLanguageY1a: the Go and
TypeScript tool workers serve the same tool, and the test compares."""
from toolround.tools import ToolContext, ToolError, tool


@tool(effect="side_effect")
def same_echo(text: str, times: int, *, ctx: ToolContext) -> dict:
    """Repeat a text in capitals."""
    if text == "":
        raise ToolError("there is no text to repeat", code="empty_text")
    return {"echo": text.upper() * times, "operation_id": ctx.operation_id}
