"""A Python tool worker's tools for tests/usertools_test.go (Y3)."""
import os

from toolround.tools import ToolContext, ToolError, tool

MARKS = os.environ.get("MARKS", ".")


def _mark(name: str, line: str) -> None:
    with open(os.path.join(MARKS, name), "a", encoding="utf-8") as f:
        f.write(line + "\n")


@tool(effect="read_only", subject="order_id", cache_seconds=60)
def py_lookup(order_id: str) -> dict:
    """Look an order up."""
    _mark("lookup", order_id)
    return {"order_id": order_id, "status": "shipped"}


@tool(effect="side_effect")
async def py_refund(order_id: str, amount: int, *, ctx: ToolContext) -> str:
    """Refund part of an order."""
    if amount <= 0:
        raise ToolError("a refund needs a positive amount")
    _mark("refund", ctx.operation_id)
    return "refunded %d on %s" % (amount, order_id)
