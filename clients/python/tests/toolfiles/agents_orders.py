"""An application's own OpenAI Agents SDK function tools, for
test_openai_agents_own.py: the test serves them in its own process, and
agents_tool_worker.py in a process of its own that the test kills."""

import asyncio
import os
import time

from agents import RunContextWrapper, function_tool

MARKS = os.environ.get("MARKS", ".")

# How the adapter serves them (the same in every tool worker of the queue).
READ_ONLY = ["lookup_order"]
OPTIONS = {"lookup_order": {"heartbeat": 3}, "refund_order": {"heartbeat": 3}, "cancel_order": {"heartbeat": 3}}


def _mark(name: str, line: str) -> None:
    with open(os.path.join(MARKS, name), "a", encoding="utf-8") as f:
        f.write(line + "\n")


@function_tool
def lookup_order(ctx: RunContextWrapper, order_id: str) -> dict:
    """Look an order up by its id.

    Args:
        order_id: the order's id
    """
    _mark("lookup", order_id)
    # A "slow-" order holds its first attempt until the test kills the tool worker.
    if order_id.startswith("slow-") and ctx.context.attempt == 1:
        time.sleep(120)
    return {"id": order_id, "status": "shipped"}


@function_tool
async def refund_order(ctx: RunContextWrapper, order_id: str, amount: int) -> str:
    """Refund part of an order."""
    _mark("refund", ctx.context.operation_id)
    # A "hold-" order holds until the test kills the tool worker.
    if order_id.startswith("hold-"):
        await asyncio.sleep(120)
    return "refunded %d on %s, key %s" % (amount, order_id, ctx.context.operation_id)


@function_tool(needs_approval=True)
def cancel_order(order_id: str) -> str:
    """Cancel an order."""
    _mark("cancel", order_id)
    return "cancelled " + order_id


TOOLS = [lookup_order, refund_order, cancel_order]
