"""An application's own LangChain tools, for test_langgraph_own.py: the test
serves them in its own process, and lg_tool_worker.py in a process of its
own that the test kills."""

import asyncio
import os
import time

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import ToolException, tool

MARKS = os.environ.get("MARKS", ".")

# How the adapter serves them (the same in every tool worker of the queue).
READ_ONLY = ["lg_lookup_order"]
OPTIONS = {"lg_lookup_order": {"heartbeat": 3}, "lg_refund_order": {"heartbeat": 3}, "lg_cancel_order": {"heartbeat": 3}}


def _mark(name: str, line: str) -> None:
    with open(os.path.join(MARKS, name), "a", encoding="utf-8") as f:
        f.write(line + "\n")


@tool
def lg_lookup_order(order_id: str, config: RunnableConfig) -> dict:
    """Look an order up by its id."""
    ctx = config["configurable"]["toolround"]
    _mark("lookup", order_id)
    if order_id.startswith("none-"):
        raise ToolException("no order " + order_id)
    # A "slow-" order holds its first attempt until the test kills the tool worker.
    if order_id.startswith("slow-") and ctx.attempt == 1:
        time.sleep(120)
    return {"id": order_id, "status": "shipped"}


@tool
async def lg_refund_order(order_id: str, amount: int, config: RunnableConfig) -> str:
    """Refund part of an order."""
    op = config["configurable"]["toolround"].operation_id
    _mark("refund", op)
    # A "hold-" order holds until the test kills the tool worker.
    if order_id.startswith("hold-"):
        await asyncio.sleep(120)
    return "refunded %d on %s, key %s" % (amount, order_id, op)


@tool
def lg_cancel_order(order_id: str) -> str:
    """Cancel an order."""
    _mark("cancel", order_id)
    return "cancelled " + order_id


TOOLS = [lg_lookup_order, lg_refund_order, lg_cancel_order]
