"""What the adapters share: calls to a round, results back."""

import json
from typing import Any, Dict, List

# The statuses of a call that did not do what it was asked (SPEC F2's
# is_error list).
ERROR_STATUSES = {"error", "invalid", "unknown", "refused", "unknown_outcome", "cancelled", "expired", "skipped", "schema"}


def openai_call(call_id: str, name: str, args: Any) -> Dict[str, Any]:
    """A chat-completions tool call, as a round input holds it."""
    if not isinstance(args, str):
        args = json.dumps(args if args is not None else {})
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


def contents(result: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    """Per call id: its tool message content (what the model reads) and its
    result entry."""
    # Tool messages only: in format openai a user message of the results'
    # images may follow them (SPEC F2).
    msgs = {m["tool_call_id"]: m.get("content", "") for m in result.get("messages") or [] if m.get("tool_call_id")}
    out = {}
    for r in result.get("results") or []:
        out[r["call_id"]] = {"content": msgs.get(r["call_id"], r.get("content", "")), "result": r}
    return out


def is_error(result: Dict[str, Any]) -> bool:
    return result.get("status") in ERROR_STATUSES


def names(calls: List[Dict[str, Any]]) -> List[str]:
    return [c["function"]["name"] for c in calls]
