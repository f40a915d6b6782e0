"""toolround: the client of the console's HTTP API (standard library only).

    import toolround
    c = toolround.Client("http://127.0.0.1:8780", token)
    result = c.run_round(round_input, on_approval=lambda p: toolround.Decision(True))
"""

from .client import APIError, Client, Decision, Run, ToolResult, agent_workflow_id, round_workflow_id

__all__ = ["APIError", "Client", "Decision", "Run", "ToolResult", "agent_workflow_id", "round_workflow_id"]
__version__ = "0.1.0"
