"""A drop-in for LangGraph's ``ToolNode`` whose tool calls run as toolround
rounds (``pip install 'toolround[langgraph]'``).

Each time the graph reaches the node, the tool calls of the last AI message
run as one durable round of the run ``session_id``/``run_id`` (the run
handle keeps its state and round number), with toolround's approvals: the
round waits for a person (on the console, or ``on_approval``) as any round
does. The results come back as ``ToolMessage``s, one per call, in call
order, with ``status="error"`` for calls that did not run or failed::

    from langgraph.prebuilt import tools_condition
    node = RoundToolNode(toolround.Client(url, token), "s1", "r1")
    graph.add_node("tools", node)
    graph.add_conditional_edges("agent", tools_condition)
"""

from typing import Any, Callable, Dict, List, Optional

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableLambda

from ..client import Client, Decision, Run
from ._common import contents, is_error, openai_call

__all__ = ["RoundToolNode"]


class RoundToolNode(RunnableLambda):
    """Runs the last AI message's tool calls as one round. ``messages_key``
    is the state's messages field, as for ``ToolNode``; the node also takes
    a bare list of messages. ``on_approval`` and ``on_wait`` are
    ``Client.run_round``'s; ``run_kwargs`` go to ``Client.run`` (``provider``,
    ``state``, ``client_tools``, ...)."""

    def __init__(self, client: Client, session_id: str, run_id: str,
                 on_approval: Optional[Callable[[Dict[str, Any]], Optional[Decision]]] = None,
                 on_wait: Optional[Callable[[Dict[str, Any]], Any]] = None,
                 messages_key: str = "messages", name: str = "tools", **run_kwargs: Any):
        self.run_handle: Run = client.run(session_id, run_id, **run_kwargs)
        self.on_approval = on_approval
        self.on_wait = on_wait
        self.messages_key = messages_key
        super().__init__(self._invoke, name=name)

    def _invoke(self, state: Any) -> Any:
        if isinstance(state, list):
            messages, wrap = state, False
        else:
            messages, wrap = state[self.messages_key], True
        ai = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
        if ai is None or not ai.tool_calls:
            raise ValueError("RoundToolNode: the last AI message has no tool calls")
        out = self.tool_messages(ai)
        return {self.messages_key: out} if wrap else out

    def tool_messages(self, ai: AIMessage) -> List[ToolMessage]:
        """Runs ``ai``'s tool calls as the next round and returns their
        ``ToolMessage``s."""
        calls = [openai_call(tc["id"], tc["name"], tc.get("args")) for tc in ai.tool_calls]
        assistant = {"role": "assistant", "content": ai.content if isinstance(ai.content, str) else "", "tool_calls": calls}
        res = self.run_handle.round(assistant, on_approval=self.on_approval, on_wait=self.on_wait)
        by_id = contents(res)
        out = []
        for tc in ai.tool_calls:
            got = by_id.get(tc["id"], {"content": "no result", "result": {"status": "error"}})
            out.append(ToolMessage(content=got["content"], tool_call_id=tc["id"], name=tc["name"],
                                   status="error" if is_error(got["result"]) else "success",
                                   artifact=got["result"]))
        return out
