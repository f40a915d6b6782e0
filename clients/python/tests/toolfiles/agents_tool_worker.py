"""A tool worker of its own for the function tools of agents_orders.py, on
TOOL_QUEUE: the process test_openai_agents_own.py kills."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from agents_orders import OPTIONS, READ_ONLY, TOOLS  # noqa: E402

from toolround.adapters.openai_agents import serve  # noqa: E402

serve(TOOLS, os.environ["TOOL_QUEUE"], read_only=READ_ONLY, tool_options=OPTIONS)
