# orders.py: pip install './clients/python[tools]'
#   python -m toolround.tools serve orders.py --task-queue orders
from toolround.tools import ToolContext, tool

@tool(effect="read_only", cache_seconds=60)
def lookup_order(order_id: str) -> dict:
    """Look an order up by its id."""
    return {"order_id": order_id, "status": "shipped"}
@tool(effect="side_effect")
def refund(order_id: str, amount: int, *, ctx: ToolContext) -> str:
    """Refund part of an order (asks a person first)."""
    return "refunded %d on %s, key %s" % (amount, order_id, ctx.operation_id)
